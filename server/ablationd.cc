// ablationd: the GPU kernel benchmarking daemon. Reads what it is asked to do (daemon/settings.h),
// then runs until a signal (daemon/run.h); everything it serves lives in server/core and
// server/rpc.
#include "server/daemon/run.h"
#include "server/daemon/settings.h"

int main(int argc, char** argv) {
  ablation::daemon::DaemonSettings settings;
  int exit_code = 0;
  if (!ablation::daemon::ReadSettings(argc, argv, &settings, &exit_code)) return exit_code;
  if (!settings.hash_token.empty()) return ablation::daemon::HashToken(settings.hash_token);
  return ablation::daemon::RunDaemon(settings);
}
