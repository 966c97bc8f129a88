// The clock guard: a small process that resets the daemon's clock locks when the daemon dies in a
// way nothing inside it can handle.
//
// In the daemon, a lock is undone by ScopedClockLock's destructor (every way out of a run), by
// the shutdown path (SIGTERM/SIGINT) and, best effort, by the fatal-signal handler. None of these
// runs when the daemon is killed by SIGKILL (the OOM killer, `kill -9`, a watchdog) or when its
// stack overflows (the kernel has no stack to run the handler on, so it kills the process with
// SIGSEGV at once). The journal covers them only at the next start, which may be never, or
// minutes later: until then the GPU stays at clocks nobody asked for.
//
// The daemon therefore starts the guard once, right after it has reset what an earlier daemon
// left (ClockGuard::Start): its own executable, `ablationd --clock-guard FD JOURNAL NVML PID`,
// holding the read end of a pipe whose write end only the daemon holds (close-on-exec, so no
// worker or compiler inherits it). The guard reads nothing from it: the read returns when the
// daemon's process has ended, however it ended, because the kernel closes its descriptors then.
// The guard then reads the journal and resets the locks that daemon (its PID) recorded and did
// not clear, loading NVML only then, and exits. After a clean exit the journal lists nothing of
// that daemon and the guard exits without touching NVML.
//
// The guard ignores SIGINT, SIGTERM, SIGHUP and SIGQUIT: a Ctrl-C in a terminal or systemd's
// SIGTERM to the whole unit must not end it before the daemon it watches (it ends on its own right
// after). What still defeats it: SIGKILL of the guard itself, and a container whose PID 1 is the
// daemon (the kernel kills the whole PID namespace with it); the journal and the next start (or
// `ablationd --reset-clocks`, systemd's ExecStopPost=) remain for those.
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>

#include "server/core/base/status.h"

namespace ablation::core {

struct ClockGuardOptions {
  /// The executable to run with --clock-guard: the daemon's own.
  std::string executable = "/proc/self/exe";
  std::string journal_path;
  /// The NVML library the daemon loaded (the guard loads the same one, only when it must reset).
  std::string nvml_library;
};

class ClockGuard {
 public:
  /// Starts the guard of this process. Call once, after the journal's start-up reset (the guard
  /// resets only this process's entries, so the two never reset the same lock twice).
  static Status Start(const ClockGuardOptions& options, std::unique_ptr<ClockGuard>* out);
  /// Closes the daemon's end of the pipe (the guard then finds the journal clear of this process's
  /// locks, once they have been released, and exits) and waits for the guard to end.
  ~ClockGuard();
  ClockGuard(const ClockGuard&) = delete;
  ClockGuard& operator=(const ClockGuard&) = delete;

  pid_t pid() const { return pid_; }

 private:
  ClockGuard(pid_t pid, int write_fd) : pid_(pid), write_fd_(write_fd) {}
  pid_t pid_;
  int write_fd_;
};

/// The first argument that makes `ablationd` the guard (main() looks for it before anything else).
inline constexpr const char* kClockGuardFlag = "--clock-guard";

/// The guard's whole life: `argv` is {exe, "--clock-guard", FD, JOURNAL, NVML_LIBRARY, PID}.
/// Returns the process's exit code: 0 when nothing was left locked or everything left was reset,
/// 1 when a reset failed (the journal keeps the entry for the next start), 2 for bad arguments.
int RunClockGuard(int argc, char** argv);

}  // namespace ablation::core
