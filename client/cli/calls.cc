#include "client/cli/calls.h"

#include <chrono>

#include "client/cli/exit_codes.h"

namespace ablation::client {

void SetDeadline(grpc::ClientContext& context, const GlobalOptions& global, double default_s) {
  const double seconds = global.timeout_s.value_or(default_s);
  if (seconds <= 0) return;
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::duration_cast<std::chrono::system_clock::duration>(
                           std::chrono::duration<double>(seconds)));
}

int ReportRpcError(const grpc::Status& status, const CommandContext& context) {
  context.err << DescribeRpcError(status, context.global.server) << '\n';
  return ExitCodeForStatus(status);
}

}  // namespace ablation::client
