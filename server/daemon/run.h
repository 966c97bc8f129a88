// Running the daemon from its settings (settings.h): NVML and the clock journal, the core, the gRPC
// service with health and reflection, the metrics endpoint, then signals until SIGTERM or SIGINT.
#pragma once

#include <string>

#include "server/daemon/settings.h"

namespace ablation::daemon {

/// Serves until a signal; the process's exit code (0 after a clean stop, 1 when something could
/// not start, 2 when the listener is refused).
int RunDaemon(const DaemonSettings& settings);

/// `ablationd --hash-token NAME:ROLE`: the token from stdin (or a new one, printed on stderr), its
/// line for the token file on stdout. The exit code.
int HashToken(const std::string& name_role);

}  // namespace ablation::daemon
