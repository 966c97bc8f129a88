// ablationd: the GPU kernel benchmarking daemon. Reads what it is asked to do (daemon/settings.h),
// then runs until a signal (daemon/run.h); everything it serves lives in server/core and
// server/rpc.
#include <csignal>
#include <string_view>

#include "server/core/gpu/clock_guard.h"
#include "server/daemon/memory_trim.h"
#include "server/daemon/run.h"
#include "server/daemon/settings.h"

int main(int argc, char** argv) {
  // The clock guard the daemon starts of itself (server/core/gpu/clock_guard.h): before anything
  // else, so that it parses, opens and loads nothing the daemon does.
  if (argc > 1 && std::string_view(argv[1]) == ablation::core::kClockGuardFlag)
    return ablation::core::RunClockGuard(argc, argv);
  // A file-size limit (RLIMIT_FSIZE) reached by the database is a write that fails (EFBIG), which
  // ends the run that wrote with a reason, like a full disk; by default it is a signal that
  // kills the daemon.
  std::signal(SIGXFSZ, SIG_IGN);
  // Before any thread exists (daemon/memory_trim.h): bursts of calls leave less behind.
  ablation::daemon::LimitMallocArenas(2);
  ablation::daemon::DaemonSettings settings;
  int exit_code = 0;
  if (!ablation::daemon::ReadSettings(argc, argv, &settings, &exit_code)) return exit_code;
  if (!settings.hash_token.empty()) return ablation::daemon::HashToken(settings.hash_token);
  return ablation::daemon::RunDaemon(settings);
}
