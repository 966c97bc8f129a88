#include "client/commands/cmd_results.h"

#include <algorithm>
#include <map>

#include "client/cli/calls.h"
#include "client/cli/dtype.h"
#include "client/cli/exit_codes.h"
#include "client/cli/parse.h"
#include "client/cli/run_arg.h"
#include "client/cli/validators.h"
#include "client/output/enum_words.h"
#include "client/output/paging.h"
#include "client/output/render.h"
#include "client/output/render_counters.h"
#include "client/sources/source.h"

namespace ablation::client {

CLI::App* SetupResults(CLI::App& app, ResultsOptions& options) {
  CLI::App* sub = app.add_subcommand("results", "Query stored measurements across runs");
  sub->add_option("--variant", options.variant, "Variant glob or short name")->type_name("VARIANT");
  sub->add_option("--dtype", options.dtype, "Only this dtype: " + DTypeWordsHelp())
      ->transform(DTypeTransformer());
  sub->add_option("--shape", options.shape, "MxNxK, or N for NxNxN")->check(ShapeValidator());
  AddRunArgument(sub, options.run_id, {"Only this run (a run id, or 'latest')", true, false});
  sub->add_option("--tag", options.tag, "Only runs with this tag");
  sub->add_option("--since", options.since,
                  "From this time on (inclusive): 2026-11-30, 2026-11-30T12:00:00Z or unix ms")
      ->check(TimeValidator());
  sub->add_option("--until", options.until, "Before this time (exclusive); same forms as --since")
      ->check(TimeValidator());
  sub->add_option("--status", options.status, "Only measurements with this status")
      ->transform(EnumTransformer<v1::MeasurementStatus>());
  sub->add_option("--limit,-n", options.limit, "At most this many measurements (0: all)")
      ->capture_default_str()
      ->check(WholeNumber(0));
  sub->add_flag("--oldest-first", options.oldest_first,
                "Oldest first (default: newest first, so that --limit keeps the latest)");
  sub->add_flag("--samples", options.samples, "Include the raw samples (JSON output only)");
  sub->add_flag("--metrics", options.metrics,
                "Include the hardware counters (run --profile, profile) as columns");
  sub->add_option("--node", options.node,
                  "With --fleet-db: only this daemon's measurements (a host name, HOST/ID-PREFIX "
                  "or a daemon id's prefix)");
  sub->footer(
      "Examples:\n"
      "  ablation-client results 42\n      the rows of run 42\n"
      "  ablation-client results --variant 'abl_*' --tag nightly --since 2026-11-01 --format csv\n "
      "     across runs, for a spreadsheet");
  return sub;
}

v1::QueryMeasurementsRequest BuildResultsRequest(const ResultsOptions& options) {
  v1::QueryMeasurementsRequest request;
  request.set_variant_glob(options.variant);
  request.set_dtype(options.dtype);
  if (!options.shape.empty()) *request.mutable_shape() = ParseShapeOrThrow(options.shape);
  std::int64_t run_id = 0;  // 'latest' (0 here) is resolved by ExecuteResults
  if (!options.run_id.empty()) ParseRunId(options.run_id, &run_id, true);
  request.set_run_id(run_id);
  request.set_tag(options.tag);
  if (!options.since.empty()) request.set_since_ms(ParseTimeMsOrThrow(options.since));
  if (!options.until.empty()) request.set_until_ms(ParseTimeMsOrThrow(options.until));
  request.set_status(options.status);
  request.set_include_samples(options.samples);
  request.set_include_counters(options.metrics);
  request.set_newest_first(!options.oldest_first);
  request.set_page_size(options.limit == 0 ? kMaxPageSize : std::min(kMaxPageSize, options.limit));
  return request;
}

namespace {

// The measurements as every format prints them: a node column where they come from a fleet
// (tables and CSV; "nodes" beside the items in JSON, one per item in order), the device of each
// run in CSV where they come from the daemon.
void PrintResults(const Listed<v1::Measurement>& listed, const std::string& notice,
                  ResultSource& source, const CommandContext& context) {
  const std::vector<v1::Measurement>& measurements = listed.items;
  const bool csv = context.global.format == Format::kCsv;
  if (context.global.format == Format::kJson) {
    std::vector<JsonField> fields = {{"truncated", listed.more}};
    if (!listed.nodes.empty()) {
      std::string joined;
      for (const std::string& n : listed.nodes) joined += (joined.empty() ? "" : ",") + n;
      fields.push_back({"nodes", joined});
    }
    if (listed.more) fields.push_back({"notice", notice});
    context.out << JsonEnvelope("measurements", measurements, fields);
    return;
  }
  Table table =
      csv ? MeasurementsWithAllCounters(measurements) : MeasurementsWithCounters(measurements);
  if (!listed.nodes.empty()) {
    table.columns.insert(table.columns.begin(), Column{"node", "node"});
    for (size_t i = 0; i < table.rows.size(); ++i)
      table.rows[i].insert(table.rows[i].begin(), Cell(listed.nodes[i]));
  } else if (csv) {
    // Every identifying column: the run, its round and window, the time, and the device (the
    // run's, asked once per run).
    std::map<std::int64_t, std::string> device_of;
    for (const v1::Measurement& m : measurements) {
      if (device_of.count(m.run_id())) continue;
      v1::GetRunResponse run;
      device_of[m.run_id()] = source.Run(std::to_string(m.run_id()), {}, &run) == kExitOk
                                  ? run.run().device().uuid()
                                  : "";
    }
    table.columns.insert(table.columns.begin() + 1, Column{"device_uuid", "device"});
    for (size_t i = 0; i < table.rows.size(); ++i)
      table.rows[i].insert(table.rows[i].begin() + 1, Cell(device_of[measurements[i].run_id()]));
  }
  context.out << RenderTableAs(context.global.format, table);
}

// 'latest': the newest run's id (QueryMeasurements reads 0 as every run).
int LatestRun(ResultSource& source, const CommandContext& context, std::int64_t* run_id) {
  Listed<v1::Run> newest;
  if (int code = source.Runs(v1::ListRunsRequest(), 1, "", &newest); code != kExitOk) return code;
  if (newest.items.empty()) {
    context.err << "error: the daemon has no runs yet\n";
    return kExitFailed;
  }
  *run_id = newest.items[0].id();
  return kExitOk;
}

}  // namespace

int ExecuteResults(const ResultsOptions& options, const CommandContext& context) {
  v1::QueryMeasurementsRequest request = BuildResultsRequest(options);
  if (request.since_ms() > 0 && request.until_ms() > 0 &&
      request.until_ms() <= request.since_ms()) {
    context.err << "error: --until must be later than --since\n";
    return kExitUsage;
  }
  const std::unique_ptr<ResultSource> source = OpenSource(context);
  if (source->fleet() && options.run_id == "latest") {
    context.err << "error: --run latest names one daemon's run; with --fleet-db give an id and "
                   "--node\n";
    return kExitUsage;
  }
  if (source->fleet() && options.metrics) {
    context.err << "error: --metrics is not read from a fleet database (the daemon has them)\n";
    return kExitUsage;
  }
  if (!source->fleet() && options.run_id == "latest") {
    std::int64_t latest = 0;
    if (int code = LatestRun(*source, context, &latest); code != kExitOk) return code;
    request.set_run_id(latest);
  }
  Listed<v1::Measurement> listed;
  if (int code = source->Measurements(request, options.limit, options.node, &listed);
      code != kExitOk)
    return code;
  const std::string notice =
      listed.more ? "showing the " + std::string(options.oldest_first ? "first " : "latest ") +
                        std::to_string(options.limit) + " measurements; --limit 0 for all"
                  : "";
  PrintResults(listed, notice, *source, context);
  // Cut short by the limit: said on stderr whatever the format (CSV and JSON stay the data; the
  // JSON says it beside the items too).
  if (listed.more) context.err << notice << '\n';
  return kExitOk;
}

}  // namespace ablation::client
