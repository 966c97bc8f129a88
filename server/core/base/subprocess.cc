#include "server/core/base/subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

extern char** environ;

namespace ablation::core {
namespace {

void CloseAll(std::initializer_list<int> fds) {
  for (int fd : fds)
    if (fd >= 0) ::close(fd);
}

// The child's side between fork and exec: only async-signal-safe calls (the daemon has threads).
[[noreturn]] void Exec(char* const* args, char* const* env, const ProcessOptions& options,
                       pid_t parent, int in, int out, int err) {
  ::setpgid(0, 0);  // its own group, so that a kill at the deadline reaches its children too
  if (options.die_with_parent) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
    if (::getppid() != parent) ::_exit(127);  // the daemon ended before the signal was set
  }
  ::dup2(in, 0);
  ::dup2(out, 1);
  ::dup2(err, 2);
  if (options.close_other_fds) ::syscall(SYS_close_range, 3u, ~0u, 0u);
  if (!options.working_dir.empty() && ::chdir(options.working_dir.c_str()) != 0) ::_exit(127);
  ::execve(args[0], args, env);
  ::_exit(127);
}

// Reads what the child writes and writes what it reads until both its outputs close, the
// deadline passes or stdout passes its bound.
void Pump(int in, int out, int err, const ProcessOptions& options,
          std::chrono::steady_clock::time_point deadline, ProcessResult* result) {
  pollfd fds[3] = {{out, POLLIN, 0}, {err, POLLIN, 0}, {in, POLLOUT, 0}};
  size_t written = 0;
  if (options.stdin_data.empty()) CloseAll({in}), fds[2].fd = -1;
  char buf[65536];
  while (fds[0].fd >= 0 || fds[1].fd >= 0) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      result->timed_out = true;
      break;
    }
    if (::poll(fds, 3, int(std::min<int64_t>(left.count(), 1000))) < 0 && errno != EINTR) break;
    if (fds[2].fd >= 0 && (fds[2].revents & (POLLOUT | POLLERR | POLLHUP))) {
      const ssize_t n = ::write(in, options.stdin_data.data() + written,
                                std::min<size_t>(options.stdin_data.size() - written, 65536));
      if (n > 0) written += size_t(n);
      if ((n < 0 && errno != EAGAIN && errno != EINTR) || written == options.stdin_data.size())
        CloseAll({in}), fds[2].fd = -1;
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      const ssize_t n = ::read(fds[i].fd, buf, sizeof buf);
      if (n > 0) {
        // stdout is kept to one byte past its bound (which ends the child), stderr to its bound.
        std::string& to = i == 0 ? result->out : result->err;
        const size_t bound = i == 0 ? options.max_out_bytes : options.max_err_bytes;
        const size_t cap = bound == 0 ? to.size() + size_t(n) : bound + (i == 0 ? 1 : 0);
        to.append(buf, std::min(size_t(n), cap > to.size() ? cap - to.size() : 0));
      } else if (n == 0 || errno != EINTR) {
        CloseAll({fds[i].fd});
        fds[i].fd = -1;
      }
    }
    if (options.max_out_bytes > 0 && result->out.size() > options.max_out_bytes) {
      result->out_overflow = true;
      break;
    }
  }
  CloseAll({fds[0].fd, fds[1].fd, fds[2].fd});
}

}  // namespace

std::string ProcessResult::Ending() const {
  if (!error.empty()) return error;
  if (signal != 0) return "signal " + std::to_string(signal);
  return "exit " + std::to_string(exit_code);
}

ProcessResult RunProcess(const std::vector<std::string>& argv, std::chrono::seconds timeout,
                         const ProcessOptions& options) {
  ProcessResult result;
  if (argv.empty()) {
    result.error = "nothing to run";
    return result;
  }
  int out_pipe[2], err_pipe[2], in_pipe[2] = {-1, -1};
  if (::pipe2(out_pipe, O_CLOEXEC) != 0) {
    result.error = std::string("pipe: ") + std::strerror(errno);
    return result;
  }
  if (::pipe2(err_pipe, O_CLOEXEC) != 0 ||
      (!options.stdin_data.empty() && ::pipe2(in_pipe, O_CLOEXEC) != 0)) {
    result.error = std::string("pipe: ") + std::strerror(errno);
    CloseAll({out_pipe[0], out_pipe[1], err_pipe[0], err_pipe[1]});
    return result;
  }
  if (in_pipe[1] < 0) in_pipe[0] = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (in_pipe[1] >= 0) ::fcntl(in_pipe[1], F_SETFL, O_NONBLOCK);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  char* no_environment[] = {nullptr};
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    result.error = std::string("fork: ") + std::strerror(errno);
    CloseAll({out_pipe[0], out_pipe[1], err_pipe[0], err_pipe[1], in_pipe[0], in_pipe[1]});
    return result;
  }
  if (pid == 0)
    Exec(args.data(), options.empty_environment ? no_environment : environ, options, parent,
         in_pipe[0], out_pipe[1], err_pipe[1]);
  ::setpgid(pid, pid);  // also here: whichever of the two runs first
  CloseAll({out_pipe[1], err_pipe[1], in_pipe[0]});
  result.started = true;
  Pump(in_pipe[1], out_pipe[0], err_pipe[0], options, std::chrono::steady_clock::now() + timeout,
       &result);
  if (result.timed_out || result.out_overflow) ::kill(-pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (result.timed_out) {
    result.error = "did not finish in " + std::to_string(timeout.count()) + " s";
  } else if (result.out_overflow) {
    result.error = "wrote more than " + std::to_string(options.max_out_bytes) + " bytes";
  } else if (WIFEXITED(status)) {
    result.exit_code = WEXITSTATUS(status);
    if (result.exit_code == 127 && result.out.empty() && result.err.empty()) {
      result.started = false;
      result.error = "cannot run " + argv[0];
    }
  } else if (WIFSIGNALED(status)) {
    result.signal = WTERMSIG(status);
  }
  return result;
}

}  // namespace ablation::core
