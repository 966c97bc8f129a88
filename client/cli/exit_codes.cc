#include "client/cli/exit_codes.h"

#include <iterator>

#include "client/output/escape.h"

namespace ablation::client {

std::string_view ExitCodesHelp() {
  return "Exit codes (as sysexits.h numbers them):\n"
         "  0    success\n"
         "  1    the daemon answered but something failed: a run ended failed, partial or\n"
         "       cancelled, a measurement failed, a verification did not pass, compare\n"
         "       found a significant slowdown, or a user kernel did not compile (kernel add,\n"
         "       kernel check)\n"
         "  64   usage error: the command line is wrong (nothing was asked of the daemon)\n"
         "  65   the daemon refused the input: an unknown variant, run or preset, a bad value\n"
         "  69   unavailable: no daemon at --server, or it cannot do this now (no usable GPU,\n"
         "       a limit reached)\n"
         "  70   the daemon failed inside (internal error)\n"
         "  73   -o FILE could not be written\n"
         "  75   temporary failure, try again: busy, deadline exceeded, a stream cut short\n"
         "  77   permission denied: no token, a bad token, or a role that may not do this\n"
         "  130  interrupted with Ctrl-C (a run is cancelled at the next measurement boundary)\n";
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

int ExitCodeForStatusCode(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::OK:
      return kExitOk;
    case grpc::StatusCode::INVALID_ARGUMENT:
    case grpc::StatusCode::NOT_FOUND:
    case grpc::StatusCode::OUT_OF_RANGE:
    case grpc::StatusCode::ALREADY_EXISTS:
      return kExitDataError;
    case grpc::StatusCode::UNAVAILABLE:
    case grpc::StatusCode::FAILED_PRECONDITION:
    case grpc::StatusCode::UNIMPLEMENTED:
      return kExitUnavailable;
    case grpc::StatusCode::RESOURCE_EXHAUSTED:
    case grpc::StatusCode::ABORTED:
    case grpc::StatusCode::DEADLINE_EXCEEDED:
    case grpc::StatusCode::CANCELLED:
      return kExitTempFail;
    case grpc::StatusCode::PERMISSION_DENIED:
    case grpc::StatusCode::UNAUTHENTICATED:
      return kExitNoPermission;
    default:  // INTERNAL, UNKNOWN, DATA_LOSS
      return kExitSoftware;
  }
}

int ExitCodeForStatus(const grpc::Status& status) {
  return ExitCodeForStatusCode(status.error_code());
}

int ExitCodeForRun(const RunOutcome& outcome) {
  if (outcome.interrupted) return kExitInterrupted;
  if (outcome.code != grpc::StatusCode::OK) return ExitCodeForStatusCode(outcome.code);
  if (outcome.failed_event || outcome.failed_measurements > 0) return kExitFailed;
  // A stream that closes OK without a final event was cut short: we cannot tell how the run ended.
  if (!outcome.finished_event) return kExitTempFail;
  if (outcome.finished_state != ablation::v1::RUN_STATE_SUCCEEDED)
    return kExitFailed;  // partial, cancelled
  return kExitOk;
}

}  // namespace ablation::client
