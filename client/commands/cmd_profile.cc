#include "client/commands/cmd_profile.h"

#include "client/cli/calls.h"
#include "client/cli/dtype.h"
#include "client/cli/exit_codes.h"
#include "client/cli/parse.h"
#include "client/cli/validators.h"
#include "client/output/render.h"
#include "client/output/render_counters.h"

namespace ablation::client {

CLI::App* SetupProfile(CLI::App& app, ProfileOptions& options) {
  CLI::App* sub = app.add_subcommand(
      "profile",
      "Hardware counters (Nsight Compute) of one launch of each variant's kernel per shape");
  AddSelectionOptions(sub, options, VariantsAs::kPositional);
  sub->add_option("--metrics,-m", options.metrics,
                  "Sets (default, lsu, tensor, memory, occupancy, stalls), concepts "
                  "(shared_load_instructions) or raw ncu metric names, comma-separated or "
                  "repeated (default: the default set)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  sub->add_option("--device,-d", options.device, "GPU index")
      ->capture_default_str()
      ->check(WholeNumber(0));
  sub->add_option("--warmup", options.warmup,
                  "Warm-up launches before the profiled one (default 3)")
      ->check(WholeNumber(1, 1000));
  return sub;
}

v1::ProfileRequest BuildProfileRequest(const ProfileOptions& options) {
  v1::ProfileRequest request;
  for (const auto& v : options.variants) request.add_variants(v);
  for (const auto& s : options.shapes) *request.add_shapes() = ParseShapeOrThrow(s);
  request.set_dtype(options.dtype);
  for (const auto& m : options.metrics) request.add_metrics(m);
  request.set_device(options.device);
  request.set_warmup_launches(options.warmup);
  return request;
}

// Alike in shape to verify's and run's: the selection's dtype resolved first (selection.h), the
// call, a refusal reported with where an inferred dtype came from; what is asked and shown
// differs (their requests, responses and deadlines are types and words of their own).
int ExecuteProfile(const ProfileOptions& options, const CommandContext& context) {
  DTypeChoice dtype;
  if (!ResolveSelectionDType(options, context, &dtype)) return kExitUsage;
  v1::ProfileRequest request = BuildProfileRequest(options);
  request.set_dtype(dtype.dtype);
  v1::ProfileResponse response;
  grpc::ClientContext call;
  // Waits for the GPU between measurements, then a few seconds of ncu per kernel and shape.
  SetDeadline(call, context.global, 1800);
  grpc::Status status = context.stub.Profile(&call, request, &response);
  if (!status.ok()) return ReportSelectionError(status, dtype, context);
  switch (context.global.format) {
    case Format::kJson:
      context.out << JsonEnvelope("profile", response);
      break;
    case Format::kTable:
      context.out << RenderProfile(response);
      break;
    case Format::kCsv:
    case Format::kMarkdown:
      context.out << RenderTableAs(context.global.format, ProfileCountersTable(response));
      break;
  }
  for (const auto& k : response.kernels())
    if (!k.error().empty()) return kExitFailed;
  return kExitOk;
}

}  // namespace ablation::client
