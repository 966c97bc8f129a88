#include "client/cmd_sass.h"

#include "client/exit_codes.h"
#include "client/render.h"
#include "client/rpc.h"

namespace ablation::client {

CLI::App* SetupSass(CLI::App& app, SassOptions& options) {
  CLI::App* sub = app.add_subcommand(
      "sass", "Disassemble a variant's kernel and check load/compute overlap in its main loop");
  sub->add_option("variant", options.variant, "Variant name or short name (L1_R1_s3)")->required();
  sub->add_option("--dtype", options.dtype, "Data type (default: the variant's first)");
  sub->add_option("--device,-d", options.device, "GPU whose worker names the kernel")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  return sub;
}

int ExecuteSass(const SassOptions& options, const CommandContext& context) {
  v1::SassRequest request;
  request.set_variant(options.variant);
  request.set_dtype(options.dtype);
  request.set_device(options.device);
  v1::SassResponse response;
  grpc::ClientContext call;
  // Waits for the GPU's worker between measurements, then for cuobjdump: longer than a query.
  SetDeadline(call, context.global, 300);
  grpc::Status status = context.stub.InspectSass(&call, request, &response);
  if (!status.ok()) return ReportRpcError(status, context);
  switch (context.global.format) {
    case Format::kJson:
      context.out << JsonObject(response) << '\n';
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
