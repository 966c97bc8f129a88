#include "server/worker/measure.h"

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <vector>

#include "server/worker/diagnostics.h"
#include "server/worker/l2_rotation.h"
#include "server/worker/launch.h"
#include "server/worker/occupancy.h"
#include "server/worker/sample_batch.h"
#include "server/worker/sample_plan.h"
#include "server/worker/sampling.h"
#include "server/worker/timing_stats.h"
#include "server/worker/variant_lookup.h"

namespace ablation::worker {

namespace k = ::ablation::kernels;
namespace apb = ::ablation::v1;

namespace {

/// Launches enqueued in warm-up between synchronisations: keeps the GPU busy (clocks up) while
/// still checking the elapsed time and errors often.
constexpr int kWarmupBatch = 4;

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

/// Warm-up: by count and by time, so that clocks, caches of the launch path and cuBLAS's
/// heuristics are settled. max_seconds bounds it too (a kernel of seconds per launch).
/// *per_launch_ms: the wall time per launch, the first batch's estimate of a sample (high for a
/// small kernel, whose launches the synchronisations dominate, which only makes the batch short).
std::string WarmUp(Device& d, const Ready& r, const k::GemmArgs& args, const SamplingOptions& o,
                   int* launched, double* per_launch_ms) {
  const auto warm0 = std::chrono::steady_clock::now();
  std::string err;
  for (;;) {
    const int batch = *launched < o.warmup_count
                          ? std::min(kWarmupBatch, o.warmup_count - *launched)
                          : kWarmupBatch;
    for (int i = 0; i < batch; ++i, ++*launched) {
      if (!(err = LaunchChecked(d, r, args)).empty()) return err;
    }
    if (!(err = d.Check(cudaStreamSynchronize(d.stream), "warm-up")).empty()) return err;
    const double s = Seconds(warm0);
    *per_launch_ms = 1e3 * s / std::max(*launched, 1);
    if (*launched >= o.warmup_count && s >= o.warmup_seconds) break;
    if (s >= o.max_seconds) break;
  }
  return "";
}

const char* MethodText(L2Method m) {
  switch (m) {
    case L2Method::kRotate:
      return "cold (rotated)";
    case L2Method::kFlush:
      return "cold (flushed)";
    case L2Method::kHot:
      return "hot";
  }
  return "?";
}

}  // namespace

std::string RunMeasure(Device& d, const k::Registry& registry,
                       const ::ablation::worker::v1::MeasureTask& task,
                       ::ablation::worker::v1::MeasureResult* result) {
  Ready r;
  std::string err = Resolve(registry, task.variant(), task.dtype(), task.shape(), &r);
  if (!err.empty()) return err;
  const apb::TimingOptions& t = task.timing();
  const SamplingOptions o = ResolveOptions(
      t.min_samples(), t.min_seconds(), t.max_seconds(), t.target_noise(), t.warmup_count(),
      t.warmup_seconds(), t.hot_l2(), t.max_samples(), t.flush_l2(), t.low_clock_fraction());
  Buffers b;
  err = MakeInputs(d, r.problem, task.seed(), r.variant->b_layout == k::BLayout::kNK, 1, &b);
  if (!err.empty()) return err;
  const k::GemmArgs args = ArgsFor(d, r, b, b.c.data());

  int launched = 0;
  double estimate_ms = 0;
  if (!(err = WarmUp(d, r, args, o, &launched, &estimate_ms)).empty()) return err;

  // After the warm-up: a launcher may set the kernel's dynamic shared memory limit on first use,
  // and the occupancy calculator honours that attribute.
  err = FillOccupancy(d, r, result->mutable_occupancy());
  if (!err.empty()) {
    if (d.fatal) return err;
    Log("occupancy of %s not reported: %s", r.variant->name.c_str(), err.c_str());
    result->clear_occupancy();
  }

  L2Plan plan;
  InputSets sets;
  if (!(err = MakeInputSets(d, r, b, args, task.seed(), o, &plan, &sets)).empty()) return err;
  if (!plan.note.empty())
    Log("%s %s: %s", r.variant->name.c_str(), task.dtype().c_str(), plan.note.c_str());
  // The flush is per sample with a synchronisation each (today's method, kept on request); the
  // rotation and the hot L2 queue samples back to back.
  const bool flush = plan.method == L2Method::kFlush;
  int max_batch = flush ? 1 : kMaxBatch;

  // The stopping rule runs on running sums: recomputing from the samples would be quadratic.
  RunningStats running;
  std::vector<double> sm_mhz;
  std::vector<BatchSample> batch;
  StopReason why = StopReason::kContinue;
  int64_t next_set = 0;
  int dropped = 0;
  const auto loop0 = std::chrono::steady_clock::now();
  while (why == StopReason::kContinue) {
    const int n = NextBatchSize(running, o, estimate_ms, max_batch);
    bool timed_out = false;
    if (!(err = RunBatch(d, r, sets.args, next_set, n, flush, &batch, &timed_out)).empty()) {
      return err;
    }
    next_set += n;
    if (timed_out) {
      // The host did not enqueue the batch before the gate gave up: host time may sit between
      // some sample's events. A shorter batch next time, in case the queue was what held it.
      ++dropped;
      max_batch = std::max(1, max_batch / 2);
      Log("a batch of %d samples of %s was dropped: its gate timed out before it was enqueued", n,
          r.variant->name.c_str());
    } else {
      for (const BatchSample& s : batch) {
        result->add_sample_ms(double(s.ms));
        sm_mhz.push_back(s.sm_mhz);
        running.Add(double(s.ms));
      }
    }
    why = ShouldStop(running, o, Seconds(loop0));
  }
  if (running.count() == 0) {
    return "no sample of " + r.variant->name + " was kept: every batch's gate timed out (" +
           std::to_string(dropped) + " batches dropped) before the wall-clock cap";
  }
  result->set_l2(ToL2Mode(plan.method));
  SetSampleClocks(result, sm_mhz);
  SetStatsFromSamples(
      result, {.max_sm_mhz = d.max_sm_khz / 1e3, .low_clock_fraction = o.low_clock_fraction});
  const apb::TimingStats& st = result->stats();
  Log("measured %s %s %s: %" PRId64
      " samples, mean %.4f ms, noise %.3f%%, median %.0f MHz, %d low-clock, L2 %s (%" PRId64
      " input sets), %d warm-up launches, %d batches dropped, stopped: %s",
      r.variant->name.c_str(), task.dtype().c_str(), ShapeText(task.shape()).c_str(),
      running.count(), running.mean(), 100 * running.noise(), st.median_sm_mhz(),
      st.low_clock_samples(), MethodText(plan.method), int64_t(sets.args.size()), launched, dropped,
      ToString(why).c_str());
  return "";
}

}  // namespace ablation::worker
