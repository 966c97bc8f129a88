// What a run asks of a profiler: `run --profile` reads one launch's counters of an item after its
// timing, never under it. The runs know only this interface; inspect/profiler.h implements it with
// Nsight Compute, and the daemon hands one to the run manager (tests hand their own or none).
#pragma once

#include <cstdint>

#include "ablation/v1/ablation.pb.h"
#include "server/core/plan/run_plan.h"
#include "server/core/workers/gpu_worker.h"

namespace ablation::core {

class ItemProfiler {
 public:
  virtual ~ItemProfiler() = default;
  /// On the GPU's thread after the item's timing: fills m's counters, or its counters_note with
  /// why there are none. `seed` makes the same inputs as the timing's.
  virtual void ProfileMeasurement(GpuWorker& gpu, const RunPlan& plan,
                                  const PlannedMeasurement& item, int64_t run_id, uint64_t seed,
                                  v1::Measurement* m) = 0;
};

/// The run executor's hook, after item `item` of round `round` was timed: with plan.profile, the
/// item's first round and a timing that succeeded, its counters (or why not) go into m. A daemon
/// without a profiler (null) notes that on the row.
void ProfileAfterTiming(ItemProfiler* profiler, GpuWorker& gpu, const RunPlan& plan, int item,
                        int round, int64_t run_id, v1::Measurement* m);

}  // namespace ablation::core
