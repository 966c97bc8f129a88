// The process exit codes of ablation-client, and how outcomes map to them.
#pragma once

#include <string>
#include <string_view>

#include <grpcpp/support/status.h>

#include "ablation/v1/ablation.pb.h"

namespace ablation::client {

// The process exit codes, as sysexits.h numbers them from 64 (EX_USAGE) on, so that a script
// can tell "you asked wrongly" from "the daemon refused the data" from "try again later".
inline constexpr int kExitOk = 0;
// The daemon answered, but what it reports failed: a run ended Failed, cancelled or with failed
// measurements, a verification did not pass, `compare` found a significant slowdown, or a user
// kernel's source did not compile (`kernel add`, `kernel check`: the trailer ablation-reason).
inline constexpr int kExitFailed = 1;
// EX_USAGE: the command line is wrong (refused by the client before any call).
inline constexpr int kExitUsage = 64;
// EX_DATAERR: the daemon refused what was asked for (INVALID_ARGUMENT, NOT_FOUND, OUT_OF_RANGE,
// ALREADY_EXISTS: an unknown variant or run, a shape it cannot take, ...).
inline constexpr int kExitDataError = 65;
// EX_UNAVAILABLE: no daemon to answer (UNAVAILABLE), or one that cannot do it in its state
// (FAILED_PRECONDITION: no usable GPU, a limit reached) or at all (UNIMPLEMENTED).
inline constexpr int kExitUnavailable = 69;
// EX_SOFTWARE: the daemon failed inside (INTERNAL, UNKNOWN, DATA_LOSS).
inline constexpr int kExitSoftware = 70;
// EX_CANTCREAT: -o FILE could not be written once the command was done.
inline constexpr int kExitCantCreate = 73;
// EX_TEMPFAIL: worth trying again later (RESOURCE_EXHAUSTED, ABORTED, DEADLINE_EXCEEDED,
// CANCELLED by the daemon, or a run's stream that ended before saying how the run ended).
inline constexpr int kExitTempFail = 75;
// EX_NOPERM: the caller may not do this (PERMISSION_DENIED, UNAUTHENTICATED).
inline constexpr int kExitNoPermission = 77;
// The user pressed Ctrl-C during `run` (128 + SIGINT, as shells report it).
inline constexpr int kExitInterrupted = 130;

// Shown at the end of --help.
std::string_view ExitCodesHelp();

// "INVALID_ARGUMENT" for grpc::StatusCode::INVALID_ARGUMENT, as in gRPC's documentation.
std::string_view StatusCodeName(grpc::StatusCode code);

// "error: INVALID_ARGUMENT: variants[0]: unknown variant 'L9'", plus a hint where one helps.
std::string DescribeRpcError(const grpc::Status& status, std::string_view server);

// 0 for OK, else the exit code of the status's code (above).
int ExitCodeForStatus(const grpc::Status& status);
int ExitCodeForStatusCode(grpc::StatusCode code);

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
