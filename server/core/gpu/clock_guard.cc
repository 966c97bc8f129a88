#include "server/core/gpu/clock_guard.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <spdlog/spdlog.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <string_view>
#include <vector>

#include "server/core/gpu/clock_lock.h"
#include "server/core/gpu/nvml.h"

extern char** environ;

namespace ablation::core {

namespace {

bool ParseNumber(std::string_view text, int64_t* out) {
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return ec == std::errc() && end == text.data() + text.size();
}

}  // namespace

Status ClockGuard::Start(const ClockGuardOptions& options, std::unique_ptr<ClockGuard>* out) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0)
    return {Code::kInternal, std::string("clock guard: pipe: ") + std::strerror(errno)};
  const int read_fd = fds[0], write_fd = fds[1];
  // The read end goes to the guard (by number, so not close-on-exec); the write end stays
  // close-on-exec, so only this process ever holds it and its end is the daemon's end.
  ::fcntl(read_fd, F_SETFD, 0);
  const std::string fd_arg = std::to_string(read_fd);
  const std::string pid_arg = std::to_string(::getpid());
  std::vector<std::string> args = {"ablationd",          kClockGuardFlag,      fd_arg,
                                   options.journal_path, options.nvml_library, pid_arg};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  // Signals as a fresh process has them: the daemon blocks SIGTERM/SIGINT/SIGHUP for sigwait.
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &all);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  pid_t pid = -1;
  const int rc =
      ::posix_spawn(&pid, options.executable.c_str(), nullptr, &attr, argv.data(), environ);
  posix_spawnattr_destroy(&attr);
  ::close(read_fd);
  if (rc != 0) {
    ::close(write_fd);
    return {Code::kInternal,
            "clock guard: cannot start " + options.executable + ": " + std::strerror(rc)};
  }
  out->reset(new ClockGuard(pid, write_fd));
  return Status::Ok();
}

ClockGuard::~ClockGuard() {
  ::close(write_fd_);
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
}

int RunClockGuard(int argc, char** argv) {
  int64_t fd = -1, daemon_pid = 0;
  if (argc != 6 || std::string_view(argv[1]) != kClockGuardFlag || !ParseNumber(argv[2], &fd) ||
      fd < 0 || !ParseNumber(argv[5], &daemon_pid) || daemon_pid <= 0) {
    std::fprintf(stderr,
                 "usage: ablationd --clock-guard FD JOURNAL NVML_LIBRARY PID (started by the "
                 "daemon itself, not by hand)\n");
    return 2;
  }
  const std::string journal_path = argv[3], nvml_library = argv[4];
  spdlog::set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%l%$ clock guard: %v");
  ::prctl(PR_SET_NAME, "ablationd-guard", 0, 0, 0);
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE}) ::signal(sig, SIG_IGN);
  // Nothing of the daemon's but stdio and the pipe: no listener, log file or database kept open.
  if (fd > 3) ::close_range(3, unsigned(fd) - 1, 0);
  ::close_range(unsigned(fd) + 1, ~0U, 0);

  // Returns when the daemon's process has ended (EOF: its write end closed with it), or at once
  // if the daemon is already gone. The daemon never writes.
  char byte;
  while (true) {
    const ssize_t r = ::read(int(fd), &byte, 1);
    if (r == 0 || (r < 0 && errno != EINTR)) break;
  }
  ::close(int(fd));

  ClockLockJournal journal(journal_path);
  std::vector<JournalEntry> entries;
  if (Status st = journal.Read(&entries); !st.ok()) {
    spdlog::error("{} (daemon pid {} ended; its locks, if any, are reset at the next start)",
                  st.message(), daemon_pid);
    return 1;
  }
  size_t left = 0;
  for (const auto& e : entries) left += e.pid == daemon_pid;
  if (left == 0) return 0;  // a clean end, or nothing was locked

  spdlog::warn("the daemon (pid {}) ended with {} clock lock(s) held; resetting them", daemon_pid,
               left);
  std::string why;
  std::unique_ptr<Nvml> nvml = Nvml::Load(nvml_library, &why);
  if (!nvml) {
    spdlog::error("cannot load NVML {} ({}): the locks stay in {} for the next start", nvml_library,
                  why, journal_path);
    return 1;
  }
  std::vector<std::string> reset;
  const Status st = journal.ResetAll(nvml.get(), &reset, daemon_pid);
  spdlog::warn("{} clock lock(s) of daemon pid {} reset (journal {})", reset.size(), daemon_pid,
               journal_path);
  if (!st.ok()) {
    spdlog::error("{}", st.message());
    return 1;
  }
  return 0;
}

}  // namespace ablation::core
