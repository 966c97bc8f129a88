#include "client/cmd_runs.h"

#include "client/enum_words.h"
#include "client/exit_codes.h"
#include "client/paging.h"
#include "client/render.h"
#include "client/rpc.h"

namespace ablation::client {

CLI::App* SetupRuns(CLI::App& app, RunsOptions& options) {
  CLI::App* sub = app.add_subcommand("runs", "List runs, newest first");
  sub->add_option("--tag", options.tag, "Only runs with this tag");
  sub->add_option("--state", options.state, "Only runs in this state")
      ->transform(EnumTransformer<v1::RunState>());
  sub->add_option("--limit,-n", options.limit, "At most this many runs (0: all)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  return sub;
}

int ExecuteRuns(const RunsOptions& options, const CommandContext& context) {
  v1::ListRunsRequest request;
  request.set_tag(options.tag);
  request.set_state(options.state);
  std::vector<v1::Run> runs;
  bool more = false;  // the limit cut the list short
  grpc::Status status = CollectPages<v1::ListRunsRequest, v1::ListRunsResponse>(
      request, options.limit,
      [&](const v1::ListRunsRequest& page, v1::ListRunsResponse* response) {
        grpc::ClientContext call;
        SetDeadline(call, context.global, kDefaultQueryTimeoutS);
        return context.stub.ListRuns(&call, page, response);
      },
      [](const v1::ListRunsResponse& response) { return response.runs(); }, &runs, &more);
  if (!status.ok()) return ReportRpcError(status, context);
  const std::string notice =
      more ? "showing the newest " + std::to_string(options.limit) + " runs; --limit 0 for all"
           : "";
  std::vector<JsonField> fields = {{"truncated", more}};
  if (more) fields.push_back({"notice", notice});
  context.out << RenderList(context.global.format, "runs", runs, &RunsTable, fields);
  // Cut short by the limit: said on stderr whatever the format (CSV and JSON stay the data; the
  // JSON says it beside the items too).
  if (more) context.err << notice << '\n';
  return kExitOk;
}

}  // namespace ablation::client
