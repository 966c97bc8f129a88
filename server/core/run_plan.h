// Validation of requests and the measurement plan they produce. Every request is checked here,
// before anything is queued or written; errors name the field that is wrong.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ablation/v1/ablation.pb.h"
#include "kernels/registry.h"
#include "server/core/status.h"

namespace ablation::core {

/// Defaults applied to unset TimingOptions fields (the daemon's config can change them).
struct TimingDefaults {
  int min_samples = 10;
  double min_seconds = 0.5;
  double max_seconds = 10.0;
  double target_noise = 0.005;
  int warmup_count = 3;
  double warmup_seconds = 0.1;
  int max_samples = 100000;
};

/// What the daemon knows of a GPU when it validates a request (from the worker's hello).
struct DeviceLimits {
  bool known = false;
  int64_t memory_bytes = 0;
  int64_t l2_bytes = 0;
};

struct PlannedMeasurement {
  const kernels::Variant* variant = nullptr;
  kernels::Problem problem;
};

struct RunPlan {
  std::vector<const kernels::Variant*> variants;  ///< resolved, deduplicated, in request order
  std::vector<kernels::Problem> problems;
  std::vector<PlannedMeasurement> items;  ///< shape-major: every variant at shape 0, then 1, ...
  v1::TimingOptions timing;               ///< with defaults applied
  kernels::DType dtype = kernels::DType::kBF16;
  int device = 0;
  bool verify = false;
  std::string against;  ///< verify runs only
  std::string clock_policy = "observe";  ///< "observe" or, once resolved, "lock sm=... mem=..."
  std::string lock_sm;   ///< clocks.sm_mhz as asked: a number, "base", "max" or empty
  std::string lock_mem;  ///< clocks.mem_mhz as asked
};

/// Device memory a measurement needs (inputs, both B layouts where a transpose is needed, output,
/// a reference output when verifying, and the L2 flush buffer).
int64_t RequiredDeviceBytes(const kernels::Problem& p, const DeviceLimits& device, bool verify);

Status PlanRun(const v1::RunRequest& request, const kernels::Registry& registry,
               const DeviceLimits& device, const TimingDefaults& defaults, RunPlan* plan);

Status PlanVerify(const v1::VerifyRequest& request, const kernels::Registry& registry,
                  const DeviceLimits& device, RunPlan* plan);

/// Parses "bf16" etc.; empty means bf16. The error names `field` and the known types.
Status ParseDTypeField(const std::string& text, const std::string& field, kernels::DType* out);

}  // namespace ablation::core
