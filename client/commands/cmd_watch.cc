#include "client/commands/cmd_watch.h"

#include "client/cli/calls.h"
#include "client/cli/parse.h"
#include "client/cli/run_arg.h"
#include "client/runs/follow.h"

namespace ablation::client {

// Like cancel's, watch's setup and request are a run id (run_arg.h) and nothing else: the two
// commands look alike where they start and share no work.
CLI::App* SetupWatch(CLI::App& app, WatchOptions& options) {
  CLI::App* sub = app.add_subcommand(
      "watch", "Follow a queued or running run (after run --detach); Ctrl-C cancels it");
  AddRunArgument(sub, options.run_id, {"The run to follow", false, true});
  return sub;
}

int ExecuteWatch(const WatchOptions& options, const CommandContext& context) {
  v1::WatchRunRequest request;
  std::int64_t run_id = 0;
  ParseRunId(options.run_id, &run_id, false);
  request.set_run_id(run_id);
  // What the run has stored already: a watch that joins late counts on from there ([65/128],
  // not [1/128]).
  int seen_before = 0;
  {
    v1::GetRunRequest get;
    get.set_run_id(run_id);
    v1::GetRunResponse stored;
    grpc::ClientContext get_call;
    SetDeadline(get_call, context.global, kDefaultQueryTimeoutS);
    if (context.stub.GetRun(&get_call, get, &stored).ok()) seen_before = stored.measurements_size();
  }
  // No deadline: the run may wait in the queue and then measure for a long time.
  grpc::ClientContext call;
  auto reader = context.stub.WatchRun(&call, request);
  RunStreamResult result = ReadRunStream(call, *reader, context, nullptr, seen_before);
  if (result.outcome.finished_event && result.status.ok()) {
    // The stream carried only what happened after the watch began: the table shows the whole
    // run, as stored.
    v1::GetRunRequest get;
    get.set_run_id(run_id);
    v1::GetRunResponse run;
    grpc::ClientContext get_call;
    SetDeadline(get_call, context.global, kDefaultQueryTimeoutS);
    if (context.stub.GetRun(&get_call, get, &run).ok()) {
      result.measurements.assign(run.measurements().begin(), run.measurements().end());
      result.outcome.failed_measurements = 0;
      for (const auto& m : result.measurements)
        result.outcome.failed_measurements += m.status() == v1::MEASUREMENT_STATUS_FAILED;
    }
  }
  return ReportRunStream(result, context);
}

}  // namespace ablation::client
