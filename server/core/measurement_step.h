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
  std::chrono::seconds hang_margin{5};  ///< beyond twice a task's own budget: hung
  std::atomic<uint64_t>* next_task = nullptr;
  const kernels::Registry* registry = nullptr;  ///< which references take which shapes
  /// Called with each verification as soon as it is known (the executor stores it).
  std::function<void(const v1::VerifyResult&)> on_verified;
};

class MeasurementStep {
 public:
  explicit MeasurementStep(StepContext context) : ctx_(std::move(context)) {}

  /// Where one measurement stands in its run.
  struct Slot {
    int item = 0;         ///< the item's index in the plan
    int round = 0;        ///< the round it belongs to
    int sequence = 0;     ///< its position in the run, across rounds
    bool verify = false;  ///< verify before timing (the item's first visit of a --verify run)
  };
  /// One measurement of an item: its verification (when asked) and its timing.
  v1::Measurement Measure(const PlannedMeasurement& item, const Slot& slot);

  /// One verification against `reference`. A worker that fails or dies gives a result that did
  /// not pass, with the reason in its error.
  v1::VerifyResult Verify(const PlannedMeasurement& item, const ReferenceChoice& reference,
                          uint64_t seed);

  /// Asks the worker to free the inputs it keeps between measurements (the end of a run, before
  /// a profile, which runs in a process of its own). Nothing when no worker is up; a worker that
  /// fails to answer is handled as any other (the next measurement starts a new one).
  void ReleaseInputs();

 private:
  /// Verifies for `run --verify`: sets the measurement's outcome; false when it must not be timed.
  bool VerifyBeforeTiming(const PlannedMeasurement& item, uint64_t seed, v1::Measurement* m);
  /// Times the item; fills the statistics, occupancy and telemetry, or returns why it failed.
  std::string Time(const PlannedMeasurement& item, uint64_t seed, v1::Measurement* m);
  uint64_t NextTask() { return (*ctx_.next_task)++; }

  StepContext ctx_;
  TelemetrySampler sampler_;
};

/// True when a verification failed because its reference could not run (the worker says so with
/// an error starting "reference: "): the variant is then "not checked", never "failed".
bool IsReferenceFailure(const v1::VerifyResult& result);

/// "failed against cublas: rel frobenius 0.17, max abs 3.2, 12 mismatches, 0 NaN, 0 unwritten".
std::string DescribeFailedVerification(const v1::VerifyResult& result);

}  // namespace ablation::core
