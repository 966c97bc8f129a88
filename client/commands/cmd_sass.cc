#include "client/commands/cmd_sass.h"
#include "client/cli/validators.h"

#include "client/cli/calls.h"
#include "client/cli/dtype.h"
#include "client/cli/exit_codes.h"
#include "client/cli/parse.h"
#include "client/output/render.h"

namespace ablation::client {

CLI::App* SetupSass(CLI::App& app, SassOptions& options) {
  CLI::App* sub = app.add_subcommand(
      "sass", "Disassemble a variant's kernel and check load/compute overlap in its main loop");
  sub->add_option("variant", options.variant, "Variant name or short name (L1_R1_s3)")
      ->type_name("VARIANT")
      ->required();
  sub->add_option(
         "--dtype", options.dtype,
         "bf16, fp16 (f16), fp32 (f32), tf32, int8 (i8) or fp8 (e4m3); default: the dtype in the "
         "variant's name, else its first")
      ->transform(DTypeTransformer());
  sub->add_option("--device,-d", options.device, "GPU whose worker names the kernel")
      ->capture_default_str()
      ->check(WholeNumber(0));
  sub->add_option("--shape", options.shape,
                  "Disassemble the build that runs this problem (the sm90 family runs its guarded "
                  "build off the tile and H12 runs without clusters where its grid is fitted); "
                  "default: the variant's own build")
      ->type_name("MxNxK");
  return sub;
}

int ExecuteSass(const SassOptions& options, const CommandContext& context) {
  // The name alone decides; a variant that names none gets its first dtype from the daemon.
  const DTypeChoice dtype = ChooseDType(options.dtype, {options.variant});
  if (!dtype.error.empty()) {
    context.err << "error: " << dtype.error << '\n';
    return kExitUsage;
  }
  v1::SassRequest request;
  request.set_variant(options.variant);
  request.set_dtype(dtype.dtype);
  request.set_device(options.device);
  if (!options.shape.empty()) {
    if (std::string e = ParseShape(options.shape, request.mutable_shape()); !e.empty()) {
      context.err << "error: --shape: " << e << '\n';
      return kExitUsage;
    }
  }
  v1::SassResponse response;
  grpc::ClientContext call;
  // Waits for the GPU's worker between measurements, then for cuobjdump: longer than a query.
  SetDeadline(call, context.global, 300);
  grpc::Status status = context.stub.InspectSass(&call, request, &response);
  if (!status.ok()) return ReportRpcError(status, context);
  switch (context.global.format) {
    case Format::kJson:
      context.out << JsonEnvelope("sass", response);
      break;
    case Format::kTable:
      context.out << RenderSass(response);
      break;
    default:
      context.out << RenderTableAs(context.global.format, SassFamilyTable(response));
      break;
  }
  // The answer came; a failed check is what it reports (as a failed verification is).
  for (const auto& c : response.kernel().checks())
    if (!c.passed()) return kExitFailed;
  return response.kernel().error().empty() ? kExitOk : kExitFailed;
}

}  // namespace ablation::client
