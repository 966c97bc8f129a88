#include "client/cmd_show.h"

#include "client/exit_codes.h"
#include "client/parse.h"
#include "client/render.h"
#include "client/render_counters.h"
#include "client/rpc.h"
#include "client/run_arg.h"

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
  v1::GetRunRequest request;
  std::int64_t run_id = 0;
  ParseRunId(options.run_id, &run_id, true);
  request.set_run_id(run_id);
  request.set_include_samples(options.samples);
  request.set_include_counters(options.metrics);
  v1::GetRunResponse response;
  grpc::ClientContext call;
  SetDeadline(call, context.global, kDefaultQueryTimeoutS);
  grpc::Status status = context.stub.GetRun(&call, request, &response);
  if (!status.ok()) return ReportRpcError(status, context);

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
