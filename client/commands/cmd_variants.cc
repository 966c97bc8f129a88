#include "client/commands/cmd_variants.h"

#include "client/cli/calls.h"
#include "client/cli/dtype.h"
#include "client/cli/exit_codes.h"
#include "client/cli/parse.h"
#include "client/output/render.h"

namespace ablation::client {

CLI::App* SetupVariants(CLI::App& app, VariantsOptions& options) {
  CLI::App* sub = app.add_subcommand("variants", "List the kernel variants the daemon can run");
  sub->add_option("glob", options.glob,
                  "Only names matching this glob (abl_*_s3_*) or short name (L1_R1_s3)")
      ->type_name("VARIANT");
  sub->add_option("--shape", options.shape,
                  "Name the build each variant runs at this problem (the sm90 family: own, guarded "
                  "or padded, with or without clusters, and its grid on GPU 0)")
      ->type_name("MxNxK");
  sub->add_option("--dtype", options.dtype, "The dtype of --shape (default: each variant's first)")
      ->transform(DTypeTransformer());
  return sub;
}

int ExecuteVariants(const VariantsOptions& options, const CommandContext& context) {
  v1::ListVariantsRequest request;
  request.set_glob(options.glob);
  if (!options.shape.empty()) {
    if (std::string e = ParseShape(options.shape, request.mutable_shape()); !e.empty()) {
      context.err << "error: --shape: " << e << '\n';
      return kExitUsage;
    }
  } else if (!options.dtype.empty()) {
    context.err << "error: --dtype is the dtype of --shape; give --shape too\n";
    return kExitUsage;
  }
  request.set_dtype(options.dtype);
  v1::ListVariantsResponse response;
  grpc::ClientContext call;
  SetDeadline(call, context.global, kDefaultQueryTimeoutS);
  grpc::Status status = context.stub.ListVariants(&call, request, &response);
  if (!status.ok()) return ReportRpcError(status, context);
  std::vector<v1::Variant> variants(response.variants().begin(), response.variants().end());
  context.out << RenderList(context.global.format, "variants", variants, &VariantsTable);
  if (variants.empty() && context.global.format == Format::kTable) {
    context.err << "no variant matches '" << options.glob << "'\n";
  }
  return kExitOk;
}

}  // namespace ablation::client
