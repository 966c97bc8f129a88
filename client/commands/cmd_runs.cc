#include "client/commands/cmd_runs.h"
#include "client/cli/validators.h"

#include "client/cli/exit_codes.h"
#include "client/output/enum_words.h"
#include "client/output/render.h"
#include "client/sources/source.h"

namespace ablation::client {

CLI::App* SetupRuns(CLI::App& app, RunsOptions& options) {
  CLI::App* sub = app.add_subcommand("runs", "List runs, newest first");
  sub->add_option("--tag", options.tag, "Only runs with this tag");
  sub->add_option("--state", options.state, "Only runs in this state")
      ->transform(EnumTransformer<v1::RunState>());
  sub->add_option("--limit,-n", options.limit, "At most this many runs (0: all)")
      ->capture_default_str()
      ->check(WholeNumber(0));
  sub->add_option("--node", options.node,
                  "With --fleet-db: only this daemon's runs (a host name, HOST/ID-PREFIX or a "
                  "daemon id's prefix)");
  return sub;
}

int ExecuteRuns(const RunsOptions& options, const CommandContext& context) {
  v1::ListRunsRequest request;
  request.set_tag(options.tag);
  request.set_state(options.state);
  Listed<v1::Run> runs;
  if (int code = OpenSource(context)->Runs(request, options.limit, options.node, &runs);
      code != kExitOk)
    return code;
  const std::string notice =
      runs.more ? "showing the newest " + std::to_string(options.limit) + " runs; --limit 0 for all"
                : "";
  std::vector<JsonField> fields = {{"truncated", runs.more}};
  if (runs.more) fields.push_back({"notice", notice});
  if (runs.nodes.empty()) {
    context.out << RenderList(context.global.format, "runs", runs.items, &RunsTable, fields);
  } else if (context.global.format == Format::kJson) {
    // A fleet's runs: each one's daemon, since run ids are each daemon's own.
    std::string joined;
    for (const std::string& n : runs.nodes) joined += (joined.empty() ? "" : ",") + n;
    fields.push_back({"nodes", joined});
    context.out << JsonEnvelope("runs", runs.items, fields);
  } else {
    Table table = RunsTable(runs.items);
    table.columns.insert(table.columns.begin(), Column{"node", "node"});
    for (size_t i = 0; i < table.rows.size(); ++i)
      table.rows[i].insert(table.rows[i].begin(), Cell(runs.nodes[i]));
    context.out << RenderTableAs(context.global.format, table);
  }
  // Cut short by the limit: said on stderr whatever the format (CSV and JSON stay the data; the
  // JSON says it beside the items too).
  if (runs.more) context.err << notice << '\n';
  return kExitOk;
}

}  // namespace ablation::client
