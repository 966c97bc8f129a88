#include "server/worker/sample_plan.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace ablation::worker {

L2Method RequestedL2Method(bool hot_l2, bool flush_l2) {
  if (hot_l2) return L2Method::kHot;
  return flush_l2 ? L2Method::kFlush : L2Method::kRotate;
}

L2Plan PlanL2(bool hot_l2, bool flush_l2, double set_bytes, double l2_bytes, double free_bytes) {
  L2Plan plan;
  plan.method = RequestedL2Method(hot_l2, flush_l2);
  if (plan.method != L2Method::kRotate) return plan;
  set_bytes = std::max(set_bytes, 1.0);
  const double copies = std::max(2.0, std::floor(2 * std::max(l2_bytes, 0.0) / set_bytes) + 1);
  const double extra = (copies - 1) * set_bytes;
  if (extra > kRotationMemoryShare * free_bytes) {
    char buf[256];
    std::snprintf(buf, sizeof buf,
                  "L2 rotation needs %.0f copies of %.1f MiB of inputs, %.1f MiB beyond the first, "
                  "more than %.0f%% of the %.1f MiB free: the L2 is flushed before each sample",
                  copies, set_bytes / (1 << 20), extra / (1 << 20), 100 * kRotationMemoryShare,
                  free_bytes / (1 << 20));
    plan.method = L2Method::kFlush;
    plan.note = buf;
    return plan;
  }
  plan.method = L2Method::kRotate;
  plan.copies = int64_t(copies);
  return plan;
}

int NextBatchSize(const RunningStats& taken, const SamplingOptions& o, double estimate_ms,
                  int max_batch) {
  const int64_t left = int64_t(o.max_samples) - taken.count();
  if (left <= 0) return 0;
  const double per_ms = taken.count() > 0 ? taken.mean() : estimate_ms;
  double n = std::max(max_batch, 1);
  if (per_ms > 0 && std::isfinite(per_ms)) {
    n = std::min(n, std::floor(kBatchTargetMs / per_ms));
    // The GPU-time cap is checked between batches: a batch must not run far past it.
    n = std::min(n, std::floor((1e3 * o.max_seconds - taken.sum()) / per_ms));
  }
  n = std::min(n, double(left));
  return int(std::max(n, 1.0));
}

}  // namespace ablation::worker
