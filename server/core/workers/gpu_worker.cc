#include "server/core/workers/gpu_worker.h"

#include <spdlog/spdlog.h>

namespace ablation::core {

GpuWorker::GpuWorker(int index, std::unique_ptr<Worker> worker, DaemonEvents* events)
    : index_(index), worker_(std::move(worker)), events_(events ? *events : NoEvents()) {}

Status GpuWorker::Adopt(Status started) {
  std::lock_guard lock(mu_);
  hello_ = worker_->hello();
  if (started.ok() && !hello_.device_present())
    started = FailedPrecondition(hello_.no_device_reason());
  usable_ = started;
  events_.GpuAdopted(index_, started.ok(), hello_.device().uuid(), hello_.device().name());
  return started;
}

Status GpuWorker::Start() { return Adopt(worker_->Start()); }

std::string GpuWorker::Supervise() {
  const std::string how = worker_->CheckExited();
  if (how.empty()) return "";
  // Not the next run's fault: said now, and healed before that run asks for the worker.
  spdlog::error("GPU {}: the worker died while the GPU was idle ({}); starting a new one", index_,
                how);
  events_.WorkerDiedIdle(index_);
  (void)Ensure();
  return how;
}

Status GpuWorker::Ensure() {
  if (worker_->running()) {
    if (const std::string how = worker_->CheckExited(); !how.empty()) {
      spdlog::error("GPU {}: the worker had died before this task ({})", index_, how);
      events_.WorkerDiedIdle(index_);
    }
  }
  if (worker_->running()) return usable();
  spdlog::warn("GPU {}: starting a new worker", index_);
  events_.WorkerRestarted(index_);
  Status st = Adopt(worker_->Start());
  if (st.ok()) return st;
  return FailedPrecondition("GPU " + std::to_string(index_) +
                            ": cannot restart the worker: " + st.message());
}

Worker::CallResult GpuWorker::Call(const worker::v1::WorkerRequest& request,
                                   std::chrono::milliseconds timeout) {
  const auto started = std::chrono::steady_clock::now();
  Worker::CallResult result = worker_->Call(request, timeout);
  // No reply after the whole time: the worker was killed as hung (a death comes back sooner).
  if (!result.ok && std::chrono::steady_clock::now() - started >= timeout)
    events_.WorkerHung(index_);
  return result;
}

void GpuWorker::Stop() { worker_->Stop(); }

Status GpuWorker::usable() const {
  std::lock_guard lock(mu_);
  return usable_;
}

worker::v1::Hello GpuWorker::hello() const {
  std::lock_guard lock(mu_);
  return hello_;
}

v1::DeviceIdentity GpuWorker::identity() const {
  std::lock_guard lock(mu_);
  v1::DeviceIdentity identity = hello_.device();
  identity.set_index(index_);
  return identity;
}

DeviceLimits GpuWorker::limits() const {
  std::lock_guard lock(mu_);
  DeviceLimits limits;
  if (usable_.ok() && hello_.device_present()) {
    limits.known = true;
    limits.memory_bytes = hello_.device().memory_bytes();
    limits.l2_bytes = hello_.device().l2_bytes();
    limits.compute_capability = hello_.device().compute_capability();
  }
  return limits;
}

}  // namespace ablation::core
