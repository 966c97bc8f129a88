#include "client/commands/cmd_compare.h"

#include "client/cli/exit_codes.h"
#include "client/cli/parse.h"
#include "client/cli/validators.h"
#include "client/output/render.h"
#include "client/report/compare.h"
#include "client/sources/source.h"

namespace ablation::client {

CLI::App* SetupCompare(CLI::App& app, CompareOptions& options) {
  CLI::App* sub = app.add_subcommand(
      "compare",
      "Compare two runs per variant and shape over their rounds, beside their clocks; exit 1 on "
      "a slowdown beyond --threshold that is not within noise, or when a run is not complete");
  // A run id, 'latest', or with --fleet-db NODE:ID (one daemon's run in the fleet database).
  const CLI::Validator run_or_node_run = RunIdValidator(true);
  sub->add_option("RUN_A", options.run_a,
                  "The earlier run (the reference); with --fleet-db NODE:RUN_ID")
      ->required()
      ->check(run_or_node_run);
  sub->add_option("RUN_B", options.run_b,
                  "The run to check, or 'latest'; with --fleet-db NODE:RUN_ID")
      ->required()
      ->check(run_or_node_run);
  sub->add_option("--threshold", options.threshold,
                  "Slowdown that counts as a regression when not within noise (default 3%)")
      ->check(CLI::Validator(
          [](std::string& text) {
            double fraction = 0;
            return report::ParseThreshold(text, &fraction);
          },
          "PERCENT", "threshold"));
  sub->add_flag("--strict", options.strict,
                "Count a slowdown that lower clocks or throttling explain as a regression too");
  sub->add_flag("--allow-different-device", options.allow_different_device,
                "Compare runs from different devices, drivers or cuBLAS versions (with a warning)");
  sub->add_flag("--allow-different-regime", options.allow_different_regime,
                "Compare runs measured in different power regimes (sustained, burst, locked; "
                "with a warning)");
  sub->footer(
      "Examples:\n"
      "  ablation-client compare 41 42\n      per variant and shape; exit 1 on a significant "
      "slowdown\n"
      "  ablation-client compare 41 latest --threshold 1%\n      a stricter threshold\n"
      "  ablation-client --fleet-db postgresql://reader@fleet-db/fleet compare gpu-a:41 gpu-b:17\n "
      "     two daemons' runs");
  return sub;
}

namespace {

// The summary on stderr: what was compared, what counted, what the clocks explained.
void Summarize(const v1::Comparison& c, const CompareOptions& options, std::ostream& err) {
  const int regressions = c.regressions();
  err << "run " << c.run_b() << " against run " << c.run_a() << ": " << c.rows_size()
      << " compared, " << regressions << " significant "
      << (regressions == 1 ? "slowdown" : "slowdowns") << " beyond " << options.threshold
      << " (medians over rounds; 95% intervals from the rounds; within noise: an interval "
         "around 0 or a change below the runs' floor)\n";
  if (c.explained() > 0)
    err << c.explained() << " slower beyond " << options.threshold
        << " with the clocks down and the cycles within noise or fewer: "
        << (c.strict() ? "counted (--strict)" : "not counted (--strict counts them)") << '\n';
  const std::vector<std::string> only_a(c.only_in_a().begin(), c.only_in_a().end());
  const std::vector<std::string> only_b(c.only_in_b().begin(), c.only_in_b().end());
  if (!only_a.empty()) err << "only in run " << c.run_a() << ": " << Join(only_a, ", ") << '\n';
  if (!only_b.empty()) err << "only in run " << c.run_b() << ": " << Join(only_b, ", ") << '\n';
  if (c.rows().empty()) err << "warning: the runs have no successful measurement in common\n";
}

}  // namespace

int ExecuteCompare(const CompareOptions& options, const CommandContext& context) {
  double threshold = 0;
  if (std::string error = report::ParseThreshold(options.threshold, &threshold); !error.empty()) {
    context.err << "error: --threshold: " << error << '\n';
    return kExitUsage;
  }
  v1::GetRunResponse a, b;
  const std::unique_ptr<ResultSource> source = OpenSource(context);
  for (auto [run, into] : {std::pair{&options.run_a, &a}, std::pair{&options.run_b, &b}}) {
    if (!source->fleet() && run->find(':') != std::string::npos) {
      context.err << "error: '" << *run
                  << "' names a daemon's run in a fleet database: give --fleet-db\n";
      return kExitUsage;
    }
    if (int code = source->Run(*run, {.samples = true}, into); code != kExitOk) return code;
  }
  const std::vector<std::string> refusals = report::Refusals(
      a.run(), b.run(), options.allow_different_device, options.allow_different_regime);
  if (!refusals.empty()) {
    for (const std::string& why : refusals) context.err << "error: " << why << '\n';
    return kExitDataError;
  }
  const v1::Comparison comparison = report::Compare(a, b, threshold, options.strict);
  // The warnings head what people read; JSON carries them in the model, CSV on stderr.
  const Format format = context.global.format;
  const bool on_top = format == Format::kTable || format == Format::kMarkdown;
  for (const std::string& w : comparison.warnings())
    (on_top ? context.out : context.err) << "warning: " << w << '\n';
  if (on_top && !comparison.warnings().empty()) context.out << '\n';
  if (format == Format::kJson) {
    context.out << JsonEnvelope("comparison", comparison);
  } else {
    context.out << RenderTableAs(format, report::CompareTable(comparison, format == Format::kCsv));
  }
  if (!context.global.quiet) Summarize(comparison, options, context.err);
  // A run that is not complete is no baseline and no candidate: the exit says so even with no
  // regression in what both have.
  for (const std::string& why : comparison.incomplete())
    context.err << "error: " << why << "; compare needs two complete runs\n";
  // Nothing in common compared nothing: that is no "no regression", and a nightly check that
  // swept another preset must not pass for it.
  if (comparison.rows().empty()) {
    context.err << "error: runs " << comparison.run_a() << " and " << comparison.run_b()
                << " have no successful measurement in common: nothing was compared\n";
    return kExitDataError;
  }
  return comparison.regressions() > 0 || !comparison.incomplete().empty() ? kExitFailed : kExitOk;
}

}  // namespace ablation::client
