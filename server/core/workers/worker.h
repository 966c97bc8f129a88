// A GPU's worker as the run manager sees it: something that says hello, takes one request at a
// time and may die or hang doing it. WorkerProcess is the real one (a child process); tests give
// the run manager an in-process one, so run execution is tested without processes.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "ablation/v1/worker.pb.h"
#include "server/core/base/status.h"

namespace ablation::core {

class Worker {
 public:
  struct CallResult {
    bool ok = false;  ///< a reply came back
    worker::v1::WorkerReply reply;
    std::string failure;  ///< when !ok: how the worker died or why it was killed
  };

  virtual ~Worker() = default;

  /// Starts the worker and waits for its hello. An error says why it could not.
  virtual Status Start() = 0;
  /// False once the worker died, was killed or stopped: the next Start makes a new one.
  virtual bool running() const = 0;
  /// The hello of the current (or last) worker.
  virtual const worker::v1::Hello& hello() const = 0;
  /// Sends one request and waits at most `timeout` for its reply; a worker that dies or does not
  /// answer in time is ended (running() turns false) and `failure` says what happened.
  virtual CallResult Call(const worker::v1::WorkerRequest& request,
                          std::chrono::milliseconds timeout) = 0;
  virtual void Stop() = 0;
  /// Looks, without waiting, whether a worker that is running() has ended on its own (killed,
  /// crashed) while nobody called it: then it is reaped, running() turns false, and the answer
  /// says how it ended; "" while it lives (or when this worker cannot die on its own).
  virtual std::string CheckExited() { return ""; }
};

/// Makes the worker of GPU `device_index` (not yet started).
using WorkerFactory = std::function<std::unique_ptr<Worker>(int device_index)>;

}  // namespace ablation::core
