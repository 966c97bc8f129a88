#include "client/cli/exit_codes.h"

#include <iterator>

#include "client/output/escape.h"

namespace ablation::client {

std::string_view ExitCodesHelp() {
  return "Exit codes:\n"
         "  0    success\n"
         "  1    the daemon answered but something failed: a run ended failed, partial or\n"
         "       cancelled, a measurement failed, or a verification did not pass\n"
         "  2    bad usage, or an RPC error (daemon unreachable, invalid argument, not found,\n"
         "       deadline exceeded, ...)\n"
         "  130  interrupted with Ctrl-C (the run is cancelled at the next measurement boundary)\n";
}

std::string_view StatusCodeName(grpc::StatusCode code) {
  // In the order of their numbers, 0 to 16, as gRPC's documentation names them.
  static constexpr std::string_view kNames[] = {"OK",
                                                "CANCELLED",
                                                "UNKNOWN",
                                                "INVALID_ARGUMENT",
                                                "DEADLINE_EXCEEDED",
                                                "NOT_FOUND",
                                                "ALREADY_EXISTS",
                                                "PERMISSION_DENIED",
                                                "RESOURCE_EXHAUSTED",
                                                "FAILED_PRECONDITION",
                                                "ABORTED",
                                                "OUT_OF_RANGE",
                                                "UNIMPLEMENTED",
                                                "INTERNAL",
                                                "UNAVAILABLE",
                                                "DATA_LOSS",
                                                "UNAUTHENTICATED"};
  const auto number = static_cast<std::size_t>(code);
  return number < std::size(kNames) ? kNames[number] : "UNKNOWN";
}

std::string DescribeRpcError(const grpc::Status& status, std::string_view server) {
  std::string text = "error: ";
  text += StatusCodeName(status.error_code());
  if (!status.error_message().empty()) {
    text += ": ";
    text += Printable(status.error_message());
  }
  // The two errors users most often meet without a daemon-side message that explains them.
  if (status.error_code() == grpc::StatusCode::UNAVAILABLE) {
    text += "\n(is ablationd running and listening on ";
    text += server;
    text += "? set --server or ABLATION_SERVER)";
  } else if (status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED) {
    text += "\n(the daemon did not answer in time; raise --timeout)";
  }
  return text;
}

int ExitCodeForStatus(const grpc::Status& status) { return status.ok() ? kExitOk : kExitUsage; }

int ExitCodeForRun(const RunOutcome& outcome) {
  if (outcome.interrupted) return kExitInterrupted;
  if (outcome.code != grpc::StatusCode::OK) return kExitUsage;
  if (outcome.failed_event || outcome.failed_measurements > 0) return kExitFailed;
  // A stream that closes OK without a final event was cut short: we cannot tell how the run ended.
  if (!outcome.finished_event) return kExitUsage;
  if (outcome.finished_state != ablation::v1::RUN_STATE_SUCCEEDED)
    return kExitFailed;  // partial, cancelled
  return kExitOk;
}

}  // namespace ablation::client
