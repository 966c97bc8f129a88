#include "client/commands/cmd_show.h"

#include "client/cli/exit_codes.h"
#include "client/cli/run_arg.h"
#include "client/output/render.h"
#include "client/output/render_counters.h"
#include "client/sources/source.h"

namespace ablation::client {

CLI::App* SetupShow(CLI::App& app, ShowOptions& options) {
  CLI::App* sub = app.add_subcommand("show", "Show a run: device, state, times, tags, results");
  AddRunArgument(sub, options.run_id, {"Run id, or 'latest'", true, false});
  sub->add_flag("--samples", options.samples, "Include the raw samples (JSON output only)");
  sub->add_flag("--metrics", options.metrics,
                "Include the hardware counters (run --profile, profile) as columns");
  return sub;
}

int ExecuteShow(const ShowOptions& options, const CommandContext& context) {
  v1::GetRunResponse response;
  if (int code = OpenSource(context)->Run(
          options.run_id, {.samples = options.samples, .counters = options.metrics}, &response);
      code != kExitOk)
    return code;

  const std::vector<v1::Measurement> measurements(response.measurements().begin(),
                                                  response.measurements().end());
  const std::vector<v1::VerifyResult> verifications(response.verifications().begin(),
                                                    response.verifications().end());
  switch (context.global.format) {
    case Format::kJson:
      context.out << JsonEnvelope("run", response);
      break;
    case Format::kCsv:
      // CSV holds one table: a verify run's results, else the measurements.
      context.out << RenderCsv(measurements.empty() && !verifications.empty()
                                   ? VerifyTable(verifications)
                                   : MeasurementsWithAllCounters(measurements));
      break;
    case Format::kTable:
    case Format::kMarkdown:
      context.out << RunHeader(response.run(), measurements);
      if (!measurements.empty()) {
        context.out << '\n'
                    << RenderTableAs(context.global.format, MeasurementsWithCounters(measurements));
      }
      if (!verifications.empty()) {
        context.out << '\n' << RenderTableAs(context.global.format, VerifyTable(verifications));
      }
      break;
  }
  return kExitOk;
}

}  // namespace ablation::client
