#include "server/core/workers/worker_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <spdlog/spdlog.h>

#include "server/protocol/framing.h"

extern char** environ;

namespace ablation::core {

std::string DescribeExit(int st) {
  if (WIFSIGNALED(st)) {
    int sig = WTERMSIG(st);
    const char* name = strsignal(sig);
    return "signal " + std::to_string(sig) + " (" + (name ? name : "?") + ")";
  }
  if (WIFEXITED(st)) return "exit code " + std::to_string(WEXITSTATUS(st));
  return "unknown status " + std::to_string(st);
}

WorkerProcess::WorkerProcess(std::string worker_path, int device_index)
    : path_(std::move(worker_path)), device_(device_index) {}

WorkerProcess::~WorkerProcess() { Stop(); }

Status WorkerProcess::Start(std::chrono::milliseconds timeout) {
  Stop();
  // A write to a worker that just died must be an error, not a signal that ends the daemon.
  ::signal(SIGPIPE, SIG_IGN);
  if (::access(path_.c_str(), X_OK) != 0) {
    return FailedPrecondition("the worker executable " + path_ +
                              " cannot be run: " + std::strerror(errno));
  }
  int in_pipe[2], out_pipe[2], err_pipe[2];
  if (::pipe2(in_pipe, O_CLOEXEC) || ::pipe2(out_pipe, O_CLOEXEC) || ::pipe2(err_pipe, O_CLOEXEC))
    return {Code::kInternal, std::string("pipe: ") + std::strerror(errno)};

  std::string device = std::to_string(device_);
  char* argv[] = {const_cast<char*>(path_.c_str()), const_cast<char*>("--device"), device.data(),
                  nullptr};
  const pid_t parent = ::getpid();
  // fork + exec rather than posix_spawn: the child must ask for SIGKILL when the daemon dies
  // (PR_SET_PDEATHSIG) before it runs anything, so that a SIGKILLed daemon leaves no worker
  // holding the GPU, even mid-measurement. The signal follows the thread that forked: this is
  // the GPU's own thread (or the main thread at start), which lives as long as the worker.
  // Between fork and exec only async-signal-safe calls.
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);  // the daemon died before the prctl took effect
    if (::dup2(in_pipe[0], 0) < 0 || ::dup2(out_pipe[1], 1) < 0 || ::dup2(err_pipe[1], 2) < 0)
      ::_exit(127);
    ::execve(path_.c_str(), argv, environ);
    ::_exit(127);
  }
  const int rc = pid < 0 ? errno : 0;
  ::close(in_pipe[0]);
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  if (rc != 0) {
    ::close(in_pipe[1]);
    ::close(out_pipe[0]);
    ::close(err_pipe[0]);
    return FailedPrecondition("cannot start worker " + path_ + ": " + std::strerror(rc));
  }
  pid_ = pid;
  to_worker_ = in_pipe[1];
  from_worker_ = out_pipe[0];
  {
    std::lock_guard lock(stderr_mu_);
    stderr_tail_.clear();
  }
  int err_fd = err_pipe[0];
  int device_index = device_;
  stderr_thread_ = std::thread([this, err_fd, device_index] {
    std::string line;
    char buf[4096];
    while (true) {
      ssize_t n = ::read(err_fd, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      for (ssize_t i = 0; i < n; ++i) {
        if (buf[i] != '\n') {
          line += buf[i];
          continue;
        }
        spdlog::info("[worker {}] {}", device_index, line);
        std::lock_guard lock(stderr_mu_);
        stderr_tail_.push_back(line);
        if (stderr_tail_.size() > 8) stderr_tail_.pop_front();
        line.clear();
      }
    }
    if (!line.empty()) {
      spdlog::info("[worker {}] {}", device_index, line);
      std::lock_guard lock(stderr_mu_);
      stderr_tail_.push_back(line);
    }
    ::close(err_fd);
  });

  // The Hello comes unasked.
  pollfd pfd{from_worker_, POLLIN, 0};
  int pr;
  do {
    pr = ::poll(&pfd, 1, int(timeout.count()));
  } while (pr < 0 && errno == EINTR);
  if (pr == 0) {
    std::string how = Reap(true);
    return FailedPrecondition("worker " + path_ + " sent no hello within " +
                              std::to_string(timeout.count() / 1000) + " s; killed (" + how + ")");
  }
  worker::v1::WorkerReply reply;
  std::string error;
  auto rs = protocol::ReadMessage(from_worker_, &reply, &error);
  if (rs != protocol::ReadStatus::kOk || !reply.has_hello()) {
    std::string how = Reap(true);
    return FailedPrecondition("worker " + path_ + " failed before its hello: " + how +
                              LastStderr());
  }
  hello_ = reply.hello();
  spdlog::info(
      "worker for GPU {} started (pid {}): {}", device_, pid_,
      hello_.device_present() ? hello_.device().name() : "no device: " + hello_.no_device_reason());
  return Status::Ok();
}

std::string WorkerProcess::LastStderr() {
  std::lock_guard lock(stderr_mu_);
  if (stderr_tail_.empty()) return "";
  return "; last output: " + stderr_tail_.back();
}

void WorkerProcess::CloseFds() {
  if (to_worker_ >= 0) ::close(to_worker_);
  if (from_worker_ >= 0) ::close(from_worker_);
  to_worker_ = from_worker_ = -1;
}

std::string WorkerProcess::Reap(bool kill) {
  if (pid_ <= 0) return "not running";
  if (kill) ::kill(pid_, SIGKILL);
  CloseFds();
  int st = 0;
  pid_t r;
  do {
    r = ::waitpid(pid_, &st, 0);
  } while (r < 0 && errno == EINTR);
  pid_ = -1;
  if (stderr_thread_.joinable()) stderr_thread_.join();
  return r < 0 ? std::string("waitpid: ") + std::strerror(errno) : DescribeExit(st);
}

std::string WorkerProcess::CheckExited() {
  if (pid_ <= 0) return "";
  int st = 0;
  pid_t r;
  do {
    r = ::waitpid(pid_, &st, WNOHANG);
  } while (r < 0 && errno == EINTR);
  if (r == 0) return "";  // alive
  pid_ = -1;
  CloseFds();
  if (stderr_thread_.joinable()) stderr_thread_.join();
  return (r < 0 ? std::string("waitpid: ") + std::strerror(errno) : DescribeExit(st)) +
         LastStderr();
}

WorkerProcess::CallResult WorkerProcess::Call(const worker::v1::WorkerRequest& request,
                                              std::chrono::milliseconds timeout) {
  CallResult result;
  if (pid_ <= 0) {
    result.failure = "worker is not running";
    return result;
  }
  std::string err = protocol::WriteMessage(to_worker_, request);
  if (!err.empty()) {
    std::string how = Reap(true);
    result.failure = "worker died (" + how + ")" + LastStderr();
    return result;
  }
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      std::string how = Reap(true);
      result.failure = "worker did not answer within " + std::to_string(timeout.count() / 1000) +
                       " s and was killed (" + how + ")";
      return result;
    }
    pollfd pfd{from_worker_, POLLIN, 0};
    int pr = ::poll(&pfd, 1, int(left.count()));
    if (pr < 0 && errno == EINTR) continue;
    if (pr == 0) continue;
    break;
  }
  std::string error;
  auto rs = protocol::ReadMessage(from_worker_, &result.reply, &error);
  if (rs != protocol::ReadStatus::kOk) {
    // EOF or a torn frame: the worker is gone or going; wait for it and say how it ended.
    std::string how = Reap(rs != protocol::ReadStatus::kEof);
    result.failure = "worker died during the task (" + how + ")" + LastStderr();
    return result;
  }
  result.ok = true;
  return result;
}

void WorkerProcess::Stop() {
  if (pid_ <= 0) return;
  if (to_worker_ >= 0) {
    ::close(to_worker_);
    to_worker_ = -1;
  }
  // Give it a moment to exit on EOF (it may be tearing down a CUDA context), then force it.
  for (int i = 0; i < 50; ++i) {
    int st = 0;
    pid_t r = ::waitpid(pid_, &st, WNOHANG);
    if (r == pid_) {
      pid_ = -1;
      CloseFds();
      if (stderr_thread_.joinable()) stderr_thread_.join();
      return;
    }
    ::usleep(100 * 1000);
  }
  Reap(true);
}

}  // namespace ablation::core
