#include "client/commands/cmd_device.h"
#include "client/cli/validators.h"

#include "client/cli/calls.h"
#include "client/cli/exit_codes.h"
#include "client/output/render.h"

namespace ablation::client {

CLI::App* SetupDevice(CLI::App& app, DeviceOptions& options) {
  CLI::App* sub = app.add_subcommand("device", "Show a GPU: identity, clocks, queue");
  sub->add_option("--device,-d", options.device, "GPU index")
      ->capture_default_str()
      ->check(WholeNumber(0));
  return sub;
}

int ExecuteDevice(const DeviceOptions& options, const CommandContext& context) {
  v1::GetDeviceRequest request;
  request.set_device(options.device);
  v1::GetDeviceResponse response;
  grpc::ClientContext call;
  SetDeadline(call, context.global, kDefaultQueryTimeoutS);
  grpc::Status status = context.stub.GetDevice(&call, request, &response);
  if (!status.ok()) return ReportRpcError(status, context);
  if (context.global.format == Format::kJson) {
    context.out << JsonEnvelope("device", response);
  } else if (!response.available() && context.global.format == Format::kTable) {
    // The daemon answered; an unavailable GPU (no driver, index out of range) is its answer.
    context.out << "GPU " << options.device << " unavailable: " << response.unavailable_reason()
                << '\n';
    if (response.device_count() > 0) {
      context.out << "the daemon sees " << response.device_count() << " GPU"
                  << (response.device_count() == 1 ? "" : "s") << '\n';
    }
  } else {
    context.out << RenderTableAs(context.global.format, DeviceTable(response));
  }
  return kExitOk;
}

}  // namespace ablation::client
