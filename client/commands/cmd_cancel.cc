#include "client/commands/cmd_cancel.h"

#include "client/cli/calls.h"
#include "client/cli/exit_codes.h"
#include "client/cli/parse.h"
#include "client/cli/run_arg.h"
#include "client/output/enum_words.h"
#include "client/output/render.h"

namespace ablation::client {

// Like watch's, cancel's setup and request are a run id (run_arg.h) and nothing else: the two
// commands look alike where they start and share no work.
CLI::App* SetupCancel(CLI::App& app, CancelOptions& options) {
  CLI::App* sub = app.add_subcommand(
      "cancel", "Cancel a run; a running one stops at its next measurement boundary");
  AddRunArgument(sub, options.run_id, {"The run to cancel", false, true});
  return sub;
}

int ExecuteCancel(const CancelOptions& options, const CommandContext& context) {
  v1::CancelRunRequest request;
  std::int64_t run_id = 0;
  ParseRunId(options.run_id, &run_id, false);
  request.set_run_id(run_id);
  v1::CancelRunResponse response;
  grpc::ClientContext call;
  SetDeadline(call, context.global, kDefaultQueryTimeoutS);
  grpc::Status status = context.stub.CancelRun(&call, request, &response);
  if (!status.ok()) return ReportRpcError(status, context);
  // A running run stops at its next measurement boundary: until then it is "cancelling".
  const std::string state = response.cancelling() ? "cancelling" : EnumWord(response.state());
  if (context.global.format == Format::kJson) {
    context.out << JsonEnvelope("cancellation", response, {{"run_id", run_id}});
  } else if (context.global.format == Format::kTable) {
    context.out << "run " << run_id << ": " << state << '\n';
  } else {
    Table table;
    table.columns = {{"run_id", "run", Align::kRight}, {"state", "state"}};
    table.rows.push_back({std::to_string(run_id), state});
    context.out << RenderTableAs(context.global.format, table);
  }
  return kExitOk;
}

}  // namespace ablation::client
