#include "client/cmd_results.h"

#include <algorithm>
#include <map>

#include "client/dtype.h"
#include "client/enum_words.h"
#include "client/exit_codes.h"
#include "client/fleet.h"
#include "client/paging.h"
#include "client/parse.h"
#include "client/render.h"
#include "client/render_counters.h"
#include "client/rpc.h"
#include "client/run_arg.h"
#include "client/validators.h"

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
      ->check(CLI::NonNegativeNumber);
  sub->add_flag("--oldest-first", options.oldest_first,
                "Oldest first (default: newest first, so that --limit keeps the latest)");
  sub->add_flag("--samples", options.samples, "Include the raw samples (JSON output only)");
  sub->add_flag("--metrics", options.metrics,
                "Include the hardware counters (run --profile, profile) as columns");
  sub->add_option("--node", options.node,
                  "With --fleet-db: only this daemon's measurements (a host name, HOST/ID-PREFIX "
                  "or a daemon id's prefix)");
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

// results --fleet-db: the measurements of every daemon, each row naming its daemon (a column in
// tables and CSV; "nodes" beside the items in JSON, one per item in order).
int ExecuteFleetResults(const ResultsOptions& options, const v1::QueryMeasurementsRequest& request,
                        const CommandContext& context) {
  if (options.run_id == "latest") {
    context.err << "error: --run latest names one daemon's run; with --fleet-db give an id and "
                   "--node\n";
    return kExitUsage;
  }
  if (options.metrics) {
    context.err << "error: --metrics is not read from a fleet database (the daemon has them)\n";
    return kExitUsage;
  }
  std::vector<v1::Measurement> measurements;
  std::vector<std::string> nodes;
  bool more = false;
  if (int code = FleetMeasurements(request, options.limit, options.oldest_first, options.node,
                                   context, &measurements, &nodes, &more);
      code != kExitOk)
    return code;
  const std::string notice =
      more ? "showing the " + std::string(options.oldest_first ? "first " : "latest ") +
                 std::to_string(options.limit) + " measurements; --limit 0 for all"
           : "";
  if (context.global.format == Format::kJson) {
    std::string joined;
    for (const std::string& n : nodes) joined += (joined.empty() ? "" : ",") + n;
    std::vector<JsonField> fields = {{"truncated", more}, {"nodes", joined}};
    if (more) fields.push_back({"notice", notice});
    context.out << JsonEnvelope("measurements", measurements, fields);
  } else {
    Table table = context.global.format == Format::kCsv ? MeasurementsWithAllCounters(measurements)
                                                        : MeasurementsWithCounters(measurements);
    table.columns.insert(table.columns.begin(), Column{"node", "node"});
    for (size_t i = 0; i < table.rows.size(); ++i)
      table.rows[i].insert(table.rows[i].begin(), Cell(nodes[i]));
    context.out << RenderTableAs(context.global.format, table);
  }
  if (more) context.err << notice << '\n';
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
  if (!context.global.fleet_db.empty()) return ExecuteFleetResults(options, request, context);
  if (!options.node.empty()) {
    context.err << "error: --node reads a fleet database's daemons: give --fleet-db\n";
    return kExitUsage;
  }
  if (options.run_id == "latest") {
    // The newest run's id: QueryMeasurements reads 0 as every run.
    v1::ListRunsRequest newest;
    newest.set_page_size(1);
    v1::ListRunsResponse runs;
    grpc::ClientContext call;
    SetDeadline(call, context.global, kDefaultQueryTimeoutS);
    grpc::Status status = context.stub.ListRuns(&call, newest, &runs);
    if (!status.ok()) return ReportRpcError(status, context);
    if (runs.runs().empty()) {
      context.err << "error: the daemon has no runs yet\n";
      return kExitFailed;
    }
    request.set_run_id(runs.runs(0).id());
  }
  std::vector<v1::Measurement> measurements;
  bool more = false;  // the limit cut the results short
  grpc::Status status = CollectPages<v1::QueryMeasurementsRequest, v1::QueryMeasurementsResponse>(
      request, options.limit,
      [&](const v1::QueryMeasurementsRequest& page, v1::QueryMeasurementsResponse* response) {
        grpc::ClientContext call;
        SetDeadline(call, context.global, kDefaultQueryTimeoutS);
        return context.stub.QueryMeasurements(&call, page, response);
      },
      [](const v1::QueryMeasurementsResponse& response) { return response.measurements(); },
      &measurements, &more);
  if (!status.ok()) return ReportRpcError(status, context);
  const std::string notice =
      more ? "showing the " + std::string(options.oldest_first ? "first " : "latest ") +
                 std::to_string(options.limit) + " measurements; --limit 0 for all"
           : "";
  if (context.global.format == Format::kCsv) {
    // Every identifying column: the run, its round and window, the time, and the device (the
    // run's, asked once per run).
    std::map<std::int64_t, std::string> device_of;
    for (const v1::Measurement& m : measurements) {
      if (device_of.count(m.run_id())) continue;
      v1::GetRunRequest get;
      get.set_run_id(m.run_id());
      v1::GetRunResponse run;
      grpc::ClientContext call;
      SetDeadline(call, context.global, kDefaultQueryTimeoutS);
      device_of[m.run_id()] =
          context.stub.GetRun(&call, get, &run).ok() ? run.run().device().uuid() : "";
    }
    Table table = MeasurementsWithAllCounters(measurements);
    table.columns.insert(table.columns.begin() + 1, Column{"device_uuid", "device"});
    for (size_t i = 0; i < table.rows.size(); ++i)
      table.rows[i].insert(table.rows[i].begin() + 1, Cell(device_of[measurements[i].run_id()]));
    context.out << RenderTableAs(Format::kCsv, table);
  } else {
    std::vector<JsonField> fields = {{"truncated", more}};
    if (more) fields.push_back({"notice", notice});
    context.out << RenderList(context.global.format, "measurements", measurements,
                              &MeasurementsWithCounters, fields);
  }
  // Cut short by the limit: said on stderr whatever the format (CSV and JSON stay the data; the
  // JSON says it beside the items too).
  if (more) context.err << notice << '\n';
  return kExitOk;
}

}  // namespace ablation::client
