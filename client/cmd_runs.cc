#include "client/cmd_runs.h"

#include <algorithm>

#include "client/exit_codes.h"
#include "client/render.h"
#include "client/rpc.h"

namespace ablation::client {

namespace {
constexpr int kMaxPageSize = 1000;  // the API's cap
}  // namespace

CLI::App* SetupRuns(CLI::App& app, RunsOptions& options) {
  CLI::App* sub = app.add_subcommand("runs", "List runs, newest first");
  sub->add_option("--tag", options.tag, "Only runs with this tag");
  sub->add_option("--state", options.state, "Only runs in this state")
      ->check(CLI::IsMember({"queued", "running", "succeeded", "partial", "failed", "cancelled"}));
  sub->add_option("--limit,-n", options.limit, "At most this many runs (0: all)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  return sub;
}

int ExecuteRuns(const RunsOptions& options, const CommandContext& context) {
  std::vector<v1::Run> runs;
  v1::ListRunsRequest request;
  request.set_tag(options.tag);
  request.set_state(options.state);
  bool more = false;  // the limit cut the list short
  while (true) {
    const int wanted = options.limit == 0
                           ? kMaxPageSize
                           : std::min(kMaxPageSize, options.limit - static_cast<int>(runs.size()));
    request.set_page_size(wanted);
    v1::ListRunsResponse response;
    grpc::ClientContext call;
    SetDeadline(call, context.global, kDefaultQueryTimeoutS);
    grpc::Status status = context.stub.ListRuns(&call, request, &response);
    if (!status.ok()) return ReportRpcError(status, context);
    for (const v1::Run& run : response.runs()) {
      if (options.limit > 0 && static_cast<int>(runs.size()) >= options.limit) {
        more = true;
        break;
      }
      runs.push_back(run);
    }
    if (options.limit > 0 && static_cast<int>(runs.size()) >= options.limit) {
      more = more || !response.next_page_token().empty();
      break;
    }
    // A token that does not move would page forever.
    if (response.next_page_token().empty() || response.next_page_token() == request.page_token()) {
      break;
    }
    request.set_page_token(response.next_page_token());
  }
  context.out << RenderList(context.global.format, runs, &RunsTable);
  if (more && context.global.format == Format::kTable) {
    context.err << "showing the newest " << options.limit << " runs; --limit 0 for all\n";
  }
  return kExitOk;
}

}  // namespace ablation::client
