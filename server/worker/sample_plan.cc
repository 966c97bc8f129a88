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

WarmupPlan PlanWarmup(const SamplingOptions& o, double idle_seconds) {
  WarmupPlan plan;
  plan.launches = o.warmup_count;
  plan.warm = idle_seconds >= 0 && idle_seconds <= kWarmIdleSeconds;
  plan.seconds = plan.warm ? std::min(o.warmup_seconds, kWarmGpuWarmupSeconds) : o.warmup_seconds;
  return plan;
}

namespace {

/// NextBatchSize on `count` samples summing `sum_ms`, the next ones at `per_ms` each.
int BatchSize(int64_t count, double sum_ms, double per_ms, const SamplingOptions& o,
              int max_batch) {
  const int64_t left = int64_t(o.max_samples) - count;
  if (left <= 0) return 0;
  double n = std::max(max_batch, 1);
  if (per_ms > 0 && std::isfinite(per_ms)) {
    n = std::min(n, std::floor(kBatchTargetMs / per_ms));
    // The GPU-time cap is checked between batches: a batch must not run far past it.
    n = std::min(n, std::floor((1e3 * o.max_seconds - sum_ms) / per_ms));
  }
  n = std::min(n, double(left));
  return int(std::max(n, 1.0));
}

double PerSampleMs(const RunningStats& taken, double estimate_ms) {
  return taken.count() > 0 ? taken.mean() : estimate_ms;
}

}  // namespace

int NextBatchSize(const RunningStats& taken, const SamplingOptions& o, double estimate_ms,
                  int max_batch) {
  return BatchSize(taken.count(), taken.sum(), PerSampleMs(taken, estimate_ms), o, max_batch);
}

bool CanEnqueueAhead(const RunningStats& taken, int pending, const SamplingOptions& o,
                     double estimate_ms, double wall_seconds) {
  const double per_ms = PerSampleMs(taken, estimate_ms);
  if (pending <= 0 || !(per_ms > 0) || !std::isfinite(per_ms)) return false;
  const int64_t count = taken.count() + pending;
  const double pending_ms = kAheadMargin * double(pending) * per_ms;
  const double sum_ms = taken.sum() + pending_ms;
  if (count >= o.max_samples || sum_ms >= 1e3 * o.max_seconds) return false;
  if (wall_seconds + pending_ms / 1e3 >= o.wall_cap_factor * o.max_seconds) return false;
  return count < o.min_samples || sum_ms < 1e3 * o.min_seconds;
}

int NextBatchSizeAhead(const RunningStats& taken, int pending, const SamplingOptions& o,
                       double estimate_ms, int max_batch) {
  const double per_ms = PerSampleMs(taken, estimate_ms);
  const double pending_ms =
      per_ms > 0 && std::isfinite(per_ms) ? kAheadMargin * double(pending) * per_ms : 0;
  return BatchSize(taken.count() + pending, taken.sum() + pending_ms, per_ms, o, max_batch);
}

}  // namespace ablation::worker
