// Test helper: runs the ablation-worker binary with pipes on stdin/stdout, as the daemon does,
// and speaks the framed protocol to it. Header-only; used by the CPU and the GPU worker tests.
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "ablation/v1/worker.pb.h"
#include "server/protocol/framing.h"

extern char** environ;

namespace ablation::worker::testing {

class WorkerClient {
 public:
  WorkerClient() = default;
  ~WorkerClient() { Kill(); }
  WorkerClient(const WorkerClient&) = delete;
  WorkerClient& operator=(const WorkerClient&) = delete;

  /// Starts `path` with `args`; `env` entries ("K=V") are added to the environment. Stderr is
  /// inherited, so the worker's log lines show in the test output.
  bool Start(const std::string& path, const std::vector<std::string>& args,
             const std::vector<std::string>& env = {}) {
    int in_pipe[2], out_pipe[2];
    if (::pipe2(in_pipe, O_CLOEXEC) || ::pipe2(out_pipe, O_CLOEXEC)) return false;
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, in_pipe[0], 0);
    posix_spawn_file_actions_adddup2(&actions, out_pipe[1], 1);
    std::vector<std::string> argv_s = {path};
    argv_s.insert(argv_s.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& s : argv_s) argv.push_back(s.data());
    argv.push_back(nullptr);
    std::vector<std::string> env_s;
    for (char** e = environ; *e; ++e) env_s.emplace_back(*e);
    env_s.insert(env_s.end(), env.begin(), env.end());
    std::vector<char*> envp;
    for (auto& s : env_s) envp.push_back(s.data());
    envp.push_back(nullptr);
    int rc = ::posix_spawn(&pid_, path.c_str(), &actions, nullptr, argv.data(), envp.data());
    posix_spawn_file_actions_destroy(&actions);
    ::close(in_pipe[0]);
    ::close(out_pipe[1]);
    if (rc != 0) {
      ::close(in_pipe[1]);
      ::close(out_pipe[0]);
      pid_ = -1;
      return false;
    }
    signal(SIGPIPE, SIG_IGN);
    to_ = in_pipe[1];
    from_ = out_pipe[0];
    return true;
  }

  std::string Send(const v1::WorkerRequest& req) { return protocol::WriteMessage(to_, req); }
  /// Writes raw bytes on the worker's stdin (malformed frames).
  bool SendRaw(const std::string& bytes) {
    return ::write(to_, bytes.data(), bytes.size()) == ssize_t(bytes.size());
  }

  /// Waits up to timeout_ms for one reply. kEof when the worker closed stdout (exited).
  protocol::ReadStatus Receive(v1::WorkerReply* reply, std::string* error, int timeout_ms = 60000) {
    pollfd pfd{from_, POLLIN, 0};
    int pr;
    do {
      pr = ::poll(&pfd, 1, timeout_ms);
    } while (pr < 0 && errno == EINTR);
    if (pr == 0) {
      *error = "timed out";
      return protocol::ReadStatus::kError;
    }
    return protocol::ReadMessage(from_, reply, error);
  }

  void CloseStdin() {
    if (to_ >= 0) ::close(to_);
    to_ = -1;
  }

  /// Waits for the process to end; returns the waitpid status, or -1 after `timeout_ms`
  /// (the process is then killed).
  int Wait(int timeout_ms = 30000) {
    if (pid_ <= 0) return -1;
    for (int waited = 0;; waited += 10) {
      int st = 0;
      pid_t r = ::waitpid(pid_, &st, WNOHANG);
      if (r == pid_) {
        pid_ = -1;
        Close();
        return st;
      }
      if (waited >= timeout_ms) {
        Kill();
        return -1;
      }
      ::usleep(10000);
    }
  }

  void Kill() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      int st;
      ::waitpid(pid_, &st, 0);
      pid_ = -1;
    }
    Close();
  }

 private:
  void Close() {
    CloseStdin();
    if (from_ >= 0) ::close(from_);
    from_ = -1;
  }

  pid_t pid_ = -1;
  int to_ = -1;
  int from_ = -1;
};

}  // namespace ablation::worker::testing
