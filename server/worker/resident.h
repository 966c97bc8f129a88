// What a worker keeps from one task to the next, so that consecutive measurements pay each fixed
// cost once (server/worker/README.md, "Resident state"): the inputs of recent problems and their
// L2 rotation copies (resident_inputs.h), each kernel's occupancy, and when the device last
// finished work of ours (the warm-up policy, sample_plan.h). Cleared after any failed task.
#pragma once

#include <chrono>
#include <map>
#include <optional>

#include "ablation/v1/ablation.pb.h"
#include "server/worker/cuda_input_ops.h"
#include "server/worker/device.h"
#include "server/worker/resident_inputs.h"

namespace ablation::worker {

struct Resident {
  explicit Resident(Device& d) : ops(d), inputs(ops, double(d.prop.l2CacheSize)) {}

  /// Seconds since the device last finished work of ours; negative before the first.
  double IdleSeconds() const {
    if (!last_busy) return -1;
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - *last_busy).count();
  }
  void Busy() { last_busy = std::chrono::steady_clock::now(); }
  /// Everything but the idle time: after a failure nothing made before it is trusted.
  void Clear() {
    inputs.Clear();
    occupancy.clear();
  }

  CudaInputOps ops;
  ResidentInputs inputs;
  /// By kernel (cudaFuncGetAttributes and the occupancy calculator's answer for it do not change
  /// within a process once the kernel has launched).
  std::map<const void*, ::ablation::v1::Occupancy> occupancy;
  std::optional<std::chrono::steady_clock::time_point> last_busy;
};

}  // namespace ablation::worker
