// The process exit codes of ablation-client, and how outcomes map to them.
#pragma once

#include <string>
#include <string_view>

#include <grpcpp/support/status.h>

#include "ablation/v1/ablation.pb.h"

namespace ablation::client {

inline constexpr int kExitOk = 0;
// The daemon answered, but what it reports failed: a run ended Failed, cancelled or with failed
// measurements, or a verification did not pass.
inline constexpr int kExitFailed = 1;
// Bad usage (refused by the client, or INVALID_ARGUMENT and the like from the daemon) or an RPC
// error (daemon unreachable, deadline exceeded, ...).
inline constexpr int kExitUsage = 2;
// The user pressed Ctrl-C during `run` (128 + SIGINT, as shells report it).
inline constexpr int kExitInterrupted = 130;

// Shown at the end of --help.
std::string_view ExitCodesHelp();

// "INVALID_ARGUMENT" for grpc::StatusCode::INVALID_ARGUMENT, as in gRPC's documentation.
std::string_view StatusCodeName(grpc::StatusCode code);

// "error: INVALID_ARGUMENT: variants[0]: unknown variant 'L9'", plus a hint where one helps.
std::string DescribeRpcError(const grpc::Status& status, std::string_view server);

// 0 for OK, kExitUsage for any error status.
int ExitCodeForStatus(const grpc::Status& status);

// What a RunAblation stream came to, as far as the exit code is concerned.
struct RunOutcome {
  grpc::StatusCode code = grpc::StatusCode::OK;
  bool interrupted = false;     // the user cancelled with Ctrl-C
  bool failed_event = false;    // the stream carried RunEvent.Failed
  bool finished_event = false;  // the stream carried RunEvent.Finished
  ablation::v1::RunState finished_state = ablation::v1::RUN_STATE_UNSPECIFIED;  // its state
  int failed_measurements = 0;  // measurements that arrived with status failed
};

int ExitCodeForRun(const RunOutcome& outcome);

}  // namespace ablation::client
