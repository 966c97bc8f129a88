// What a worker keeps from one task to the next, so that consecutive measurements pay each fixed
// cost once (server/worker/README.md, "Resident state"): the inputs of recent problems and their
// L2 rotation copies (resident_inputs.h) and each kernel's occupancy. Cleared after any failed
// task.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "ablation/v1/ablation.pb.h"
#include "server/worker/cuda_input_ops.h"
#include "server/worker/device.h"
#include "server/worker/resident_inputs.h"

namespace ablation::worker {

struct Resident {
  explicit Resident(Device& d) : ops(d), inputs(ops, double(d.prop.l2CacheSize)) {}

  /// After a failure nothing made before it is trusted.
  void Clear() {
    inputs.Clear();
    occupancy.clear();
  }

  CudaInputOps ops;
  ResidentInputs inputs;
  /// By kernel (cudaFuncGetAttributes and the occupancy calculator's answer for it do not change
  /// within a process once the kernel has launched).
  std::map<const void*, ::ablation::v1::Occupancy> occupancy;
  /// The algorithms chosen for cublas_<dtype>_best variants, by "variant dtype MxNxK"
  /// (library_choice.h): kept after a failure too, since they are choices, not device state.
  std::map<std::string, std::shared_ptr<const std::string>> library_algos;
};

}  // namespace ablation::worker
