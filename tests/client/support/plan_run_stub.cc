// server/core/presets.cc plans a preset's run with PlanRun (server/core/run_plan.cc), which is not
// built into the report's tests: they only need the presets' parser and what the daemon serves.
// PlanPresetRun's own tests run in core_tests, against the real PlanRun.
#include "server/core/run_plan.h"

namespace ablation::core {

Status PlanRun(const v1::RunRequest&, const kernels::Registry&, const DeviceLimits&,
               const TimingDefaults&, RunPlan*) {
  return FailedPrecondition("PlanRun is not linked into this test");
}

}  // namespace ablation::core
