#include "client/commands/cmd_report.h"

#include "client/cli/exit_codes.h"
#include "client/cli/run_arg.h"
#include "client/report/report.h"
#include "client/sources/source.h"

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
  sub->footer(
      "Examples:\n"
      "  ablation-client report latest\n      the newest run's report as a table\n"
      "  ablation-client report 42 --format html -o report.html\n      an HTML page with its "
      "charts\n"
      "  ablation-client report 42 --format csv\n      every row, for a spreadsheet");
  return sub;
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
  const std::unique_ptr<ResultSource> source = OpenSource(context);
  // The counters too: the sections that show them do so where the run profiled its items.
  const RunRead read{.samples = true, .counters = true};
  if (int code = source->Run(options.run_id, read, &run); code != kExitOk) return code;
  if (options.run_id == "latest" && run.run().kind() == v1::RUN_KIND_VERIFY) {
    // A report is of measurements: 'latest' is the newest run that measured, not a verification
    // that happens to be newer.
    Listed<v1::Run> runs;
    if (int code = source->Runs(v1::ListRunsRequest(), 0, "", &runs); code != kExitOk) return code;
    std::int64_t found = 0;
    for (const v1::Run& r : runs.items)
      if (r.kind() == v1::RUN_KIND_ABLATION) {
        found = r.id();
        break;
      }
    if (found == 0) {
      context.err << "error: no run has measured anything yet (the latest, run " << run.run().id()
                  << ", is a verification: `ablation-client show " << run.run().id()
                  << "` has its results)\n";
      return kExitDataError;
    }
    if (!context.global.quiet)
      context.err << "run " << run.run().id() << " (the latest) is a verification; reporting run "
                  << found << ", the latest that measured\n";
    if (int code = source->Run(std::to_string(found), read, &run); code != kExitOk) return code;
  }
  std::vector<v1::Preset> presets;
  std::vector<v1::Variant> variants;
  if (int code = source->Catalog(&presets, &variants); code != kExitOk) return code;
  context.out << Render(format, report::BuildReport(run, presets, variants)) << std::flush;
  // -o FILE (the global option) is written by RunApp once this returns.
  if (!context.global.output.empty() && context.global.output != "-" && !context.global.quiet)
    context.err << "report of run " << run.run().id() << " written to " << context.global.output
                << '\n';
  return kExitOk;
}

}  // namespace ablation::client
