// One GPU's worker, supervised: started at daemon start, restarted after a death or a hang, and
// asked one request at a time from the GPU's thread. Other threads read its state (the hello, why
// it is unusable) under a lock, to admit runs and answer GetDevice.
#pragma once

#include <chrono>
#include <memory>
#include <mutex>
#include <string>

#include "ablation/v1/ablation.pb.h"
#include "server/core/base/events.h"
#include "server/core/base/status.h"
#include "server/core/plan/run_plan.h"
#include "server/core/workers/worker.h"

namespace ablation::core {

class GpuWorker {
 public:
  /// `events` hears the worker's starts, deaths and hangs (null: NoEvents()); it outlives this.
  GpuWorker(int index, std::unique_ptr<Worker> worker, DaemonEvents* events = nullptr);

  int index() const { return index_; }

  /// Starts the worker (daemon start). Not ok: the GPU cannot run (no worker, or no device).
  Status Start();
  /// Restarts the worker if it died (GPU thread only), also one that died while idle and was not
  /// noticed yet. Ok, or why it cannot run now.
  Status Ensure();
  /// Between runs (GPU thread only, every few seconds while idle): a worker that died is noticed,
  /// logged, counted (ablationd_worker_idle_deaths_total) and started
  /// again, so that the next run finds a live one. Returns how it had ended, "" when it lives.
  std::string Supervise();
  /// One request to the worker (GPU thread only).
  Worker::CallResult Call(const worker::v1::WorkerRequest& request,
                          std::chrono::milliseconds timeout);
  void Stop();
  /// True while the worker process is up (GPU thread only).
  bool running() const { return worker_->running(); }

  /// Ok when the worker is up and sees a device; otherwise the reason.
  Status usable() const;
  worker::v1::Hello hello() const;
  /// The device as the worker reported it, with this GPU's index.
  v1::DeviceIdentity identity() const;
  DeviceLimits limits() const;

 private:
  /// Records the worker's state after a start; returns it.
  Status Adopt(Status started);

  const int index_;
  std::unique_ptr<Worker> worker_;
  DaemonEvents& events_;
  mutable std::mutex mu_;
  Status usable_ = FailedPrecondition("the worker has not been started");  ///< guarded by mu_
  worker::v1::Hello hello_;                                                ///< guarded by mu_
};

}  // namespace ablation::core
