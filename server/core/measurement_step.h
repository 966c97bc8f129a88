// One item of a run on its GPU: verify it when the plan asks, then time it, and return the
// measurement as it will be stored. Knows the worker protocol and the verification policy; knows
// nothing of queues, storage or events (the run executor records what this returns).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

#include "ablation/v1/ablation.pb.h"
#include "server/core/gpu_worker.h"
#include "server/core/nvml.h"
#include "server/core/run_plan.h"
#include "server/core/telemetry.h"
#include "server/core/verification_policy.h"

namespace ablation::core {

/// What every step of one run shares.
struct StepContext {
  GpuWorker* gpu = nullptr;
  const RunPlan* plan = nullptr;
  int64_t run_id = 0;
  Nvml* nvml = nullptr;                 ///< null: no telemetry
  std::string nvml_unavailable;         ///< why, when nvml is null
  std::string uuid;                     ///< the GPU's, for NVML
  double expected_sm_mhz = 0;           ///< below it a sample counts as throttled (0: no test)
  std::chrono::seconds hang_margin{120};  ///< beyond a task's own budget before it is hung
  std::atomic<uint64_t>* next_task = nullptr;
  /// Called with each verification as soon as it is known (the executor stores it).
  std::function<void(const v1::VerifyResult&)> on_verified;
};

class MeasurementStep {
 public:
  explicit MeasurementStep(StepContext context) : ctx_(std::move(context)) {}

  /// Item `sequence` of the plan: its verification (when asked) and its timing.
  v1::Measurement Measure(const PlannedMeasurement& item, int sequence);

  /// One verification against `reference`. A worker that fails or dies gives a result that did
  /// not pass, with the reason in its error.
  v1::VerifyResult Verify(const PlannedMeasurement& item, const ReferenceChoice& reference,
                          uint64_t seed);

 private:
  /// Verifies for `run --verify`: sets the measurement's outcome; false when it must not be timed.
  bool VerifyBeforeTiming(const PlannedMeasurement& item, int sequence, v1::Measurement* m);
  /// Times the item; fills the statistics, occupancy and telemetry, or returns why it failed.
  std::string Time(const PlannedMeasurement& item, int sequence, v1::Measurement* m);
  uint64_t NextTask() { return (*ctx_.next_task)++; }

  StepContext ctx_;
  TelemetrySampler sampler_;
};

/// "failed against cublas: rel frobenius 0.17, max abs 3.2, 12 mismatches, 0 NaN, 0 unwritten".
std::string DescribeFailedVerification(const v1::VerifyResult& result);

}  // namespace ablation::core
