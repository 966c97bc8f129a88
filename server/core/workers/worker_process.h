// One GPU's worker process, seen from the daemon: spawn it, read its Hello, send it tasks, notice
// when it dies or hangs, and start a new one. Blocking calls; one caller thread per GPU.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <deque>
#include <mutex>
#include <string>
#include <thread>

#include "ablation/v1/worker.pb.h"
#include "server/core/base/status.h"
#include "server/core/workers/worker.h"

namespace ablation::core {

class WorkerProcess final : public Worker {
 public:
  WorkerProcess(std::string worker_path, int device_index);
  ~WorkerProcess();
  WorkerProcess(const WorkerProcess&) = delete;
  WorkerProcess& operator=(const WorkerProcess&) = delete;

  /// Spawns the worker and waits for its Hello. A worker that cannot be started, dies or says
  /// nothing within `timeout` is an error whose message says which.
  Status Start(std::chrono::milliseconds timeout);
  Status Start() override { return Start(std::chrono::seconds(120)); }

  bool running() const override { return pid_ > 0; }
  pid_t pid() const { return pid_; }
  const worker::v1::Hello& hello() const override { return hello_; }

  /// Sends one request and waits for its reply. If the worker dies or does not answer within
  /// `timeout`, it is killed and reaped, running() turns false and `failure` says what happened.
  CallResult Call(const worker::v1::WorkerRequest& request,
                  std::chrono::milliseconds timeout) override;

  /// Closes the worker's stdin (it exits on EOF), waits a moment, then kills it.
  void Stop() override;

  /// waitpid(WNOHANG): a worker that died while idle is reaped here, not left a zombie until the
  /// next run's first call fails on it.
  std::string CheckExited() override;

 private:
  /// Reaps the process (killing it first if `kill`), returns how it ended.
  std::string Reap(bool kill);
  void CloseFds();
  std::string LastStderr();

  std::string path_;
  int device_;
  pid_t pid_ = -1;
  int to_worker_ = -1;
  int from_worker_ = -1;
  std::thread stderr_thread_;
  std::mutex stderr_mu_;
  std::deque<std::string> stderr_tail_;
  worker::v1::Hello hello_;
};

/// "signal 9 (Killed)" / "exit code 3" for a waitpid status.
std::string DescribeExit(int wait_status);

}  // namespace ablation::core
