#include "client/cmd_compare.h"

#include "client/cmd_report.h"
#include "client/exit_codes.h"
#include "client/render.h"
#include "client/report/compare.h"
#include "client/validators.h"

namespace ablation::client {

CLI::App* SetupCompare(CLI::App& app, CompareOptions& options) {
  CLI::App* sub = app.add_subcommand(
      "compare",
      "Compare two runs per variant and shape (Welch's t-test on log times); exit 1 "
      "on a significant slowdown beyond --threshold");
  sub->add_option("run_a", options.run_a, "The earlier run (the reference)")
      ->required()
      ->check(RunIdValidator(true));
  sub->add_option("run_b", options.run_b, "The run to check, or 'latest'")
      ->required()
      ->check(RunIdValidator(true));
  sub->add_option("--threshold", options.threshold,
                  "Slowdown that counts as a regression when significant (default 3%)")
      ->check(CLI::Validator(
          [](std::string& text) {
            double fraction = 0;
            return report::ParseThreshold(text, &fraction);
          },
          "PERCENT", "threshold"));
  return sub;
}

int ExecuteCompare(const CompareOptions& options, const CommandContext& context) {
  double threshold = 0;
  if (std::string error = report::ParseThreshold(options.threshold, &threshold); !error.empty()) {
    context.err << "error: --threshold: " << error << '\n';
    return kExitUsage;
  }
  v1::GetRunResponse a, b;
  if (int code = FetchRunWithSamples(options.run_a, context, &a); code != kExitOk) return code;
  if (int code = FetchRunWithSamples(options.run_b, context, &b); code != kExitOk) return code;
  const v1::Comparison comparison = report::Compare(a, b, threshold);
  if (context.global.format == Format::kJson) {
    context.out << JsonDocument(comparison);
  } else {
    context.out << RenderTableAs(context.global.format, report::CompareTable(comparison));
  }
  const int regressions = comparison.regressions();
  if (!context.global.quiet) {
    const std::vector<std::string> only_a(comparison.only_in_a().begin(),
                                          comparison.only_in_a().end());
    const std::vector<std::string> only_b(comparison.only_in_b().begin(),
                                          comparison.only_in_b().end());
    context.err << "run " << comparison.run_b() << " against run " << comparison.run_a() << ": "
                << comparison.rows_size() << " compared, " << regressions << " significant "
                << (regressions == 1 ? "slowdown" : "slowdowns") << " beyond " << options.threshold
                << " (Welch's t-test on log sample times, two-sided, p < 0.05)\n";
    if (!only_a.empty())
      context.err << "only in run " << comparison.run_a() << ": " << Join(only_a, ", ") << '\n';
    if (!only_b.empty())
      context.err << "only in run " << comparison.run_b() << ": " << Join(only_b, ", ") << '\n';
    if (comparison.rows().empty())
      context.err << "warning: the runs have no successful measurement in common\n";
  }
  return regressions > 0 ? kExitFailed : kExitOk;
}

}  // namespace ablation::client
