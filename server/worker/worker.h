// What ablation-worker does for each request: owns one device (device.h: the CUDA context, stream,
// events, cuBLAS handles, workspace and L2 flush buffer) and what it keeps between tasks
// (resident.h), and answers one task at a time, by measuring (measure.h), verifying (verify.h),
// describing (describe.h) or releasing. Never throws; every failure becomes an ok=false /
// passed=false reply with the error text.
#pragma once

#include <memory>
#include <string>

#include "ablation/v1/worker.pb.h"
#include "kernels/registry.h"

namespace ablation::worker {

namespace wpb = ::ablation::worker::v1;
namespace apb = ::ablation::v1;

class Worker {
 public:
  /// Adds entries beyond the catalog (after RegisterCatalog and BindLaunchers): tests use it to
  /// load variants with planted bugs that never ship in the worker binary.
  using ExtraVariants = void (*)(kernels::Registry& registry);

  explicit Worker(ExtraVariants extra = nullptr);
  ~Worker();
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  /// Opens device `device` (context, stream, events, cuBLAS handles, workspace, flush buffer) and
  /// describes it. With no usable device, has_device is false and no_device_reason says why;
  /// every later task is then answered ok=false with that reason.
  wpb::Hello Open(int device);

  wpb::MeasureResult Measure(const wpb::MeasureTask& task);
  apb::VerifyResult Verify(const wpb::VerifyTask& task);
  /// The variant's kernel symbol, the executable it is in and the device's SASS arch, so that the
  /// daemon can disassemble exactly the code that runs.
  wpb::DescribeResult Describe(const wpb::DescribeTask& task);
  /// Frees the resident inputs (resident_inputs.h): the device's memory is free again.
  wpb::ReleaseResult Release(const wpb::ReleaseTask& task);

  /// True after a sticky CUDA error (the context is unusable): the caller writes the reply, then
  /// exits non-zero so that the daemon starts a fresh worker.
  bool fatal() const;
  const std::string& fatal_error() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ablation::worker
