// The Worker facade: owns the device and the registry, and turns each task into exactly one
// reply. The steps themselves live in measure.cc, verify.cc and describe.cc; what is here is what
// they share: no device or a host-side exception becomes the reply's error text, never a crash.
#include "server/worker/worker.h"

#include <unistd.h>

#include <chrono>
#include <exception>
#include <memory>
#include <string>

#include "server/protocol/verify_reference.h"
#include "server/worker/describe.h"
#include "server/worker/device.h"
#include "server/worker/diagnostics.h"
#include "server/worker/fault_injection.h"
#include "server/worker/measure.h"
#include "server/worker/resident.h"
#include "server/worker/user_kernels.h"
#include "server/worker/verify.h"

namespace ablation::worker {

namespace k = ::ablation::kernels;

struct Worker::Impl {
  Device device;
  std::unique_ptr<Resident> resident;  // with a device: what is kept between tasks
  k::Registry registry;
  UserKernels user_kernels;  // the user variants' builds loaded so far, entered into `registry`
  Worker::ExtraVariants extra = nullptr;
};

namespace {

/// Runs one task's step on an open device: "" or the error text. Without a device the error is
/// the reason there is none; an exception can only be host-side (allocation of host vectors, a
/// registry error), so the context is fine and the worker goes on.
template <typename Step>
std::string Guarded(const Device& d, Step step) {
  if (!d.present) return d.no_device_reason;
  try {
    return step();
  } catch (const std::exception& e) {
    return std::string("internal error in the worker: ") + e.what();
  }
}

}  // namespace

Worker::Worker(ExtraVariants extra) : impl_(std::make_unique<Impl>()) { impl_->extra = extra; }
Worker::~Worker() = default;

bool Worker::fatal() const { return impl_->device.fatal; }
const std::string& Worker::fatal_error() const { return impl_->device.fatal_error; }

wpb::Hello Worker::Open(int device) {
  Impl& s = *impl_;
  wpb::Hello hello;
  hello.set_pid(int(::getpid()));

  // The catalog is needed even without a device: requests are still answered (ok=false).
  k::RegisterCatalog(s.registry);
  k::BindLaunchers(s.registry);
  if (s.extra) s.extra(s.registry);

  hello.set_device_count(s.device.Open(device));
  hello.set_device_present(s.device.present);
  if (!s.device.present) {
    hello.set_no_device_reason(s.device.no_device_reason);
    Log("%s", s.device.no_device_reason.c_str());
    return hello;
  }
  s.resident = std::make_unique<Resident>(s.device);
  apb::DeviceIdentity* id = hello.mutable_device();
  s.device.Describe(id);
  Log("device %d: %s (%s), cc %s, %d SMs, driver %s, runtime %s, cuBLAS %s, %zu variants", device,
      id->name().c_str(), id->uuid().c_str(), id->compute_capability().c_str(), id->sm_count(),
      id->driver_version().c_str(), id->cuda_runtime_version().c_str(),
      id->cublas_version().c_str(), s.registry.All().size());
  return hello;
}

wpb::MeasureResult Worker::Measure(const wpb::MeasureTask& task) {
  // TEST-ONLY; no effect unless the variable is set. Before anything else, device or not.
  for (const std::string& name : task.variants()) MaybeInjectTestFault(name);
  Impl& s = *impl_;
  const auto started = std::chrono::steady_clock::now();
  wpb::MeasureResult result;
  result.set_task_id(task.task_id());
  const std::string err = Guarded(s.device, [&] {
    if (std::string e = s.user_kernels.Load(task.user_code(), s.registry); !e.empty()) return e;
    return RunMeasure(s.device, *s.resident, s.registry, task, &result);
  });
  result.set_ok(err.empty());
  if (!err.empty()) {
    // Samples of a window that failed half-way describe nothing the daemon may store.
    result.set_error(err);
    for (auto& m : *result.mutable_members()) {
      m.clear_sample_ms();
      m.clear_sample_cycles();
      m.clear_sample_sm_mhz();
      m.clear_stats();
    }
    result.clear_cycles();
    result.clear_gpu_seconds();
    result.clear_sm_mhz();
    // Nothing made before a failure is trusted after it.
    if (s.resident) s.resident->Clear();
  }
  result.mutable_cost()->set_worker_seconds(
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
  return result;
}

apb::VerifyResult Worker::Verify(const wpb::VerifyTask& task) {
  Impl& s = *impl_;
  apb::VerifyResult result;
  result.set_variant(task.variant());
  result.set_dtype(task.dtype());
  *result.mutable_shape() = task.shape();
  result.set_reference(task.reference());
  result.set_reference_variant(task.reference_variant());
  // The reference is checked first, device or not: a task without one is the daemon's mistake,
  // and it should show the same on every machine.
  std::string err = protocol::CheckReference(task);
  if (err.empty()) {
    err = Guarded(s.device, [&] {
      if (std::string e = s.user_kernels.Load(task.user_code(), s.registry); !e.empty()) return e;
      return RunVerify(s.device, *s.resident, s.registry, task, &result);
    });
  }
  if (!err.empty()) {
    result.set_passed(false);
    result.set_error(err);
    if (s.resident) s.resident->Clear();
  }
  return result;
}

wpb::DescribeResult Worker::Describe(const wpb::DescribeTask& task) {
  Impl& s = *impl_;
  wpb::DescribeResult result;
  result.set_task_id(task.task_id());
  const std::string err = Guarded(s.device, [&] {
    if (std::string e = s.user_kernels.Load(task.user_code(), s.registry); !e.empty()) return e;
    return RunDescribe(s.device, s.resident.get(), s.registry, task, &result);
  });
  result.set_ok(err.empty());
  if (!err.empty()) result.set_error(err);
  return result;
}

wpb::ReleaseResult Worker::Release(const wpb::ReleaseTask& task) {
  Impl& s = *impl_;
  wpb::ReleaseResult result;
  result.set_task_id(task.task_id());
  if (!s.resident) return result;
  result.set_released_bytes(int64_t(s.resident->inputs.bytes()));
  result.set_released_problems(int(s.resident->inputs.problems()));
  s.resident->Clear();
  if (result.released_bytes() > 0) {
    Log("released the resident inputs of %d problems (%.1f MiB)", result.released_problems(),
        double(result.released_bytes()) / double(1u << 20));
  }
  return result;
}

}  // namespace ablation::worker
