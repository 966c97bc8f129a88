#include "server/core/runs/item_profiler.h"

#include "server/core/plan/verification_policy.h"

namespace ablation::core {

void ProfileAfterTiming(ItemProfiler* profiler, GpuWorker& gpu, const RunPlan& plan, int item,
                        int round, int64_t run_id, v1::Measurement* m) {
  if (!plan.profile || round != 0 || m->status() != v1::MEASUREMENT_STATUS_OK) return;
  if (!profiler) return m->set_counters_note("not profiled: this daemon has no profiler");
  // The same inputs as the item's timing: the seed is its problem's (verification_policy.h).
  const PlannedMeasurement& planned = plan.items[size_t(item)];
  profiler->ProfileMeasurement(gpu, plan, planned, run_id, InputSeed(run_id, planned.problem), m);
}

}  // namespace ablation::core
