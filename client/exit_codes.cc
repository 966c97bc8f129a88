#include "client/exit_codes.h"

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
  switch (code) {
    case grpc::StatusCode::OK:
      return "OK";
    case grpc::StatusCode::CANCELLED:
      return "CANCELLED";
    case grpc::StatusCode::UNKNOWN:
      return "UNKNOWN";
    case grpc::StatusCode::INVALID_ARGUMENT:
      return "INVALID_ARGUMENT";
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      return "DEADLINE_EXCEEDED";
    case grpc::StatusCode::NOT_FOUND:
      return "NOT_FOUND";
    case grpc::StatusCode::ALREADY_EXISTS:
      return "ALREADY_EXISTS";
    case grpc::StatusCode::PERMISSION_DENIED:
      return "PERMISSION_DENIED";
    case grpc::StatusCode::RESOURCE_EXHAUSTED:
      return "RESOURCE_EXHAUSTED";
    case grpc::StatusCode::FAILED_PRECONDITION:
      return "FAILED_PRECONDITION";
    case grpc::StatusCode::ABORTED:
      return "ABORTED";
    case grpc::StatusCode::OUT_OF_RANGE:
      return "OUT_OF_RANGE";
    case grpc::StatusCode::UNIMPLEMENTED:
      return "UNIMPLEMENTED";
    case grpc::StatusCode::INTERNAL:
      return "INTERNAL";
    case grpc::StatusCode::UNAVAILABLE:
      return "UNAVAILABLE";
    case grpc::StatusCode::DATA_LOSS:
      return "DATA_LOSS";
    case grpc::StatusCode::UNAUTHENTICATED:
      return "UNAUTHENTICATED";
    default:
      return "UNKNOWN";
  }
}

std::string DescribeRpcError(const grpc::Status& status, std::string_view server) {
  std::string text = "error: ";
  text += StatusCodeName(status.error_code());
  if (!status.error_message().empty()) {
    text += ": ";
    text += status.error_message();
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
