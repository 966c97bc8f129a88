#include "client/cmd_report.h"

#include <sstream>

#include "client/exit_codes.h"
#include "client/parse.h"
#include "client/report/report.h"
#include "client/rpc.h"
#include "client/run_arg.h"

namespace ablation::client {

CLI::App* SetupReport(CLI::App& app, ReportOptions& options) {
  CLI::App* sub = app.add_subcommand(
      "report",
      "The result tables of a run, one per preset with rungs (see `presets`): architecture, "
      "ladders A and B, shape sensitivity, pipelining; each item over the run's rounds, every "
      "change with a 95% interval from the rounds (paired where two rows shared a measuring "
      "window: then also the clock's part and what moved the time), the run's noise floor, the "
      "change in SM cycles and the share of low-clock samples. The global --format picks md (the "
      "default), html, csv or json; -o FILE the file");
  AddRunArgument(sub, options.run_id, {"Run id, or 'latest'", true, false});
  return sub;
}

int FetchRunWithSamples(const std::string& run_id, const CommandContext& context,
                        v1::GetRunResponse* response, bool include_counters) {
  std::int64_t id = 0;
  std::string error = ParseRunId(run_id, &id, true);
  if (!error.empty()) {
    context.err << "error: " << error << '\n';
    return kExitUsage;
  }
  v1::GetRunRequest request;
  request.set_run_id(id);
  request.set_include_samples(true);
  request.set_include_counters(include_counters);
  grpc::ClientContext call;
  SetDeadline(call, context.global, kDefaultQueryTimeoutS);
  grpc::Status status = context.stub.GetRun(&call, request, response);
  if (!status.ok()) return ReportRpcError(status, context);
  return kExitOk;
}

namespace {

// What the report's sections are: the daemon's presets and variants.
int FetchCatalog(const CommandContext& context, std::vector<v1::Preset>* presets,
                 std::vector<v1::Variant>* variants) {
  v1::ListPresetsResponse listed;
  grpc::ClientContext presets_call;
  SetDeadline(presets_call, context.global, kDefaultQueryTimeoutS);
  grpc::Status status = context.stub.ListPresets(&presets_call, v1::ListPresetsRequest(), &listed);
  if (!status.ok()) return ReportRpcError(status, context);
  presets->assign(listed.presets().begin(), listed.presets().end());
  v1::ListVariantsResponse known;
  grpc::ClientContext variants_call;
  SetDeadline(variants_call, context.global, kDefaultQueryTimeoutS);
  status = context.stub.ListVariants(&variants_call, v1::ListVariantsRequest(), &known);
  if (!status.ok()) return ReportRpcError(status, context);
  variants->assign(known.variants().begin(), known.variants().end());
  return kExitOk;
}

}  // namespace

int FetchReportCatalog(const CommandContext& context, std::vector<v1::Preset>* presets,
                       std::vector<v1::Variant>* variants) {
  return FetchCatalog(context, presets, variants);
}

std::string LadderAnswer(std::int64_t run_id, const CommandContext& context) {
  v1::GetRunResponse run;
  std::ostringstream quiet;
  const CommandContext silent{context.global, context.stub, quiet, quiet, context.interrupted};
  if (FetchRunWithSamples(std::to_string(run_id), silent, &run, false) != kExitOk) return "";
  std::vector<v1::Preset> presets;
  std::vector<v1::Variant> variants;
  if (FetchCatalog(silent, &presets, &variants) != kExitOk) return "";
  const std::string md = report::RenderReportMarkdown(report::BuildReport(run, presets, variants));
  // Every ladder section ("## N. Title" up to the next "## "), not the run's header nor the
  // table of all its measurements (which the command has just printed).
  std::string out;
  size_t at = md.find("\n## ");
  while (at != std::string::npos) {
    const size_t start = at + 1;
    const size_t next = md.find("\n## ", start);
    const std::string section =
        md.substr(start, next == std::string::npos ? std::string::npos : next + 1 - start);
    if (section.find("All measurements of the run") == std::string::npos) out += section;
    at = next;
  }
  return out;
}

namespace {

std::string Render(const std::string& format, const v1::Report& report) {
  if (format == "html") return report::RenderReportHtml(report);
  if (format == "csv") return report::RenderReportCsv(report);
  if (format == "json") return report::RenderReportJson(report);
  return report::RenderReportMarkdown(report);
}

}  // namespace

int ExecuteReport(const ReportOptions& options, const CommandContext& context) {
  // The global --format (-f): table and markdown give Markdown, html only here.
  std::string format = "md";
  switch (context.global.format) {
    case Format::kJson:
      format = "json";
      break;
    case Format::kCsv:
      format = "csv";
      break;
    case Format::kHtml:
      format = "html";
      break;
    case Format::kTable:
    case Format::kMarkdown:
      break;
  }
  v1::GetRunResponse run;
  // The counters too: the sections that show them do so where the run profiled its items.
  if (int code = FetchRunWithSamples(options.run_id, context, &run, true); code != kExitOk)
    return code;
  if (options.run_id == "latest" && run.run().kind() == v1::RUN_KIND_VERIFY) {
    // A report is of measurements: 'latest' is the newest run that measured, not a verification
    // that happens to be newer.
    std::string next_page;
    std::int64_t found = 0;
    do {
      v1::ListRunsRequest list;
      list.set_page_size(200);
      list.set_page_token(next_page);
      v1::ListRunsResponse listed;
      grpc::ClientContext call;
      SetDeadline(call, context.global, kDefaultQueryTimeoutS);
      if (grpc::Status st = context.stub.ListRuns(&call, list, &listed); !st.ok())
        return ReportRpcError(st, context);
      for (const v1::Run& r : listed.runs())
        if (r.kind() == v1::RUN_KIND_ABLATION) {
          found = r.id();
          break;
        }
      next_page = listed.next_page_token();
    } while (found == 0 && !next_page.empty());
    if (found == 0) {
      context.err << "error: no run has measured anything yet (the latest, run " << run.run().id()
                  << ", is a verification: `ablation-client show " << run.run().id()
                  << "` has its results)\n";
      return kExitUsage;
    }
    if (!context.global.quiet)
      context.err << "run " << run.run().id() << " (the latest) is a verification; reporting run "
                  << found << ", the latest that measured\n";
    if (int code = FetchRunWithSamples(std::to_string(found), context, &run, true); code != kExitOk)
      return code;
  }
  std::vector<v1::Preset> presets;
  std::vector<v1::Variant> variants;
  if (int code = FetchCatalog(context, &presets, &variants); code != kExitOk) return code;
  context.out << Render(format, report::BuildReport(run, presets, variants)) << std::flush;
  // -o FILE (the global option) is written by RunApp once this returns.
  if (!context.global.output.empty() && context.global.output != "-" && !context.global.quiet)
    context.err << "report of run " << run.run().id() << " written to " << context.global.output
                << '\n';
  return kExitOk;
}

}  // namespace ablation::client
