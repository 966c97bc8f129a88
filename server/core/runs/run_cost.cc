#include "server/core/runs/run_cost.h"

#include <cstdio>

namespace ablation::core {

void RunCost::Add(const v1::Measurement& m) {
  ++measurements_;
  wall_ += m.wall_seconds();
  sampled_ += m.stats().total_seconds();
  const v1::Cost& c = m.cost();
  worker_ += c.worker_seconds();
  setup_ += c.setup_seconds();
  warmup_ += c.warmup_seconds();
  sampling_ += c.sampling_seconds();
  verify_ += c.verify_seconds();
  settle_ += c.settle_seconds();
  cool_ += c.cool_seconds();
  solo_ += c.solo_seconds();
  reused_ += c.inputs_reused() ? 1 : 0;
}

std::string RunCost::Summary(double run_seconds) const {
  const double worker_other = worker_ - setup_ - warmup_ - sampling_;
  // The cool-downs are the daemon's own waiting; settling is worker time (its chunks).
  const double calls = wall_ - worker_ - verify_ - cool_;
  const double rest = run_seconds - wall_ - storing_ - profiling_;
  char ratio[32] = "no GPU time";
  if (sampled_ > 0) std::snprintf(ratio, sizeof ratio, "%.3fx", run_seconds / sampled_);
  char buf[640];
  std::snprintf(buf, sizeof buf,
                "%d measurements: %.1f s of wall time for %.1f s of sampled GPU time (%s); the "
                "regime: settling %.2f s, cooling %.2f s, solo spans %.2f s; in the worker: setup "
                "%.2f s, warm-up "
                "%.2f s, sampling %.2f s, other %.2f s; in the daemon: verification %.2f s, "
                "telemetry and worker calls %.2f s, storing %.2f s, profiling %.2f s, the rest "
                "%.2f s; %d of %d on resident inputs",
                measurements_, run_seconds, sampled_, ratio, settle_, cool_, solo_, setup_, warmup_,
                sampling_, worker_other, verify_, calls, storing_, profiling_, rest, reused_,
                measurements_);
  return buf;
}

}  // namespace ablation::core
