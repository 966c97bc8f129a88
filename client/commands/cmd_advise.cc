#include "client/commands/cmd_advise.h"
#include "client/cli/validators.h"

#include "client/cli/calls.h"
#include "client/cli/dtype.h"
#include "client/cli/exit_codes.h"
#include "client/output/render.h"

namespace ablation::client {

CLI::App* SetupAdvise(CLI::App& app, AdviseOptions& options) {
  CLI::App* sub = app.add_subcommand(
      "advise",
      "Pipelining advice for a block tile: compute/load ratio, shared memory budget, "
      "and what this GPU measured");
  sub->add_option("--bm", options.bm, "Block tile M")->required()->check(WholeNumber(1));
  sub->add_option("--bn", options.bn, "Block tile N")->required()->check(WholeNumber(1));
  sub->add_option("--bk", options.bk, "Block tile K")->required()->check(WholeNumber(1));
  sub->add_option("--dtype", options.dtype, DTypeWordsHelp())
      ->required()
      ->transform(DTypeTransformer());
  sub->add_option("--arch", options.arch, "sm_80 (A100), sm_86 (GA104), sm_89, sm_90 (H100/H200)")
      ->required();
  sub->add_option("--device,-d", options.device, "GPU whose measurements count")
      ->capture_default_str()
      ->check(WholeNumber(0));
  return sub;
}

int ExecuteAdvise(const AdviseOptions& options, const CommandContext& context) {
  v1::AdviseRequest request;
  request.set_bm(options.bm);
  request.set_bn(options.bn);
  request.set_bk(options.bk);
  request.set_dtype(options.dtype);
  request.set_arch(options.arch);
  request.set_device(options.device);
  v1::AdviseResponse response;
  grpc::ClientContext call;
  SetDeadline(call, context.global, kDefaultQueryTimeoutS);
  grpc::Status status = context.stub.Advise(&call, request, &response);
  if (!status.ok()) return ReportRpcError(status, context);
  switch (context.global.format) {
    case Format::kJson:
      context.out << JsonEnvelope("advice", response);
      break;
    case Format::kTable:
      context.out << RenderAdvice(request, response);
      break;
    default:
      context.out << RenderTableAs(context.global.format, AdviceTable(request, response));
      break;
  }
  return kExitOk;
}

}  // namespace ablation::client
