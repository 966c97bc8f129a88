#include "server/worker/measure.h"

#include <algorithm>
#include <chrono>
#include <cinttypes>

#include "server/worker/diagnostics.h"
#include "server/worker/launch.h"
#include "server/worker/occupancy.h"
#include "server/worker/sampling.h"
#include "server/worker/timing_kernels.h"
#include "server/worker/timing_stats.h"
#include "server/worker/variant_lookup.h"

namespace ablation::worker {

namespace k = ::ablation::kernels;
namespace apb = ::ablation::v1;

namespace {

/// GPU-side delay enqueued before each sample's start event (see EnqueueDelay).
constexpr uint32_t kPreSampleDelayNs = 50'000;
/// Launches enqueued in warm-up between synchronisations: keeps the GPU busy (clocks up) while
/// still checking the elapsed time and errors often.
constexpr int kWarmupBatch = 4;

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

/// Warm-up: by count and by time, so that clocks, caches of the launch path and cuBLAS's
/// heuristics are settled. max_seconds bounds it too (a kernel of seconds per launch).
std::string WarmUp(Device& d, const Ready& r, const k::GemmArgs& args, const SamplingOptions& o,
                   int* launched) {
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
    if (*launched >= o.warmup_count && s >= o.warmup_seconds) break;
    if (s >= o.max_seconds) break;
  }
  return "";
}

/// One sample: [L2 flush] -> GPU spin -> start event -> launch -> stop event -> synchronise.
std::string TakeSample(Device& d, const Ready& r, const k::GemmArgs& args, bool cold, float* ms) {
  std::string err;
  if (cold) {
    // Outside the events: the next sample starts with none of its data in L2. The value changes
    // each time so no layer can treat the write as redundant.
    d.flush_value = (d.flush_value + 1) & 0xff;
    err = d.Check(cudaMemsetAsync(d.flush.data(), int(d.flush_value), d.flush.bytes(), d.stream),
                  "L2 flush");
    if (!err.empty()) return err;
  }
  if (!(err = EnqueueDelay(d.stream, kPreSampleDelayNs)).empty()) return d.Failed(err);
  if (!(err = d.Check(cudaEventRecord(d.start, d.stream), "cudaEventRecord")).empty()) return err;
  if (!(err = LaunchChecked(d, r, args)).empty()) return err;
  if (!(err = d.Check(cudaEventRecord(d.stop, d.stream), "cudaEventRecord")).empty()) return err;
  if (!(err = d.Check(cudaEventSynchronize(d.stop), "waiting for a sample")).empty()) return err;
  return d.Check(cudaEventElapsedTime(ms, d.start, d.stop), "cudaEventElapsedTime");
}

}  // namespace

std::string RunMeasure(Device& d, const k::Registry& registry,
                       const ::ablation::worker::v1::MeasureTask& task,
                       ::ablation::worker::v1::MeasureResult* result) {
  Ready r;
  std::string err = Resolve(registry, task.variant(), task.dtype(), task.shape(), &r);
  if (!err.empty()) return err;
  const apb::TimingOptions& t = task.timing();
  const SamplingOptions o =
      ResolveOptions(t.min_samples(), t.min_seconds(), t.max_seconds(), t.target_noise(),
                     t.warmup_count(), t.warmup_seconds(), t.hot_l2(), t.max_samples());
  Buffers b;
  err = MakeInputs(d, r.problem, task.seed(), r.variant->b_layout == k::BLayout::kNK, 1, &b);
  if (!err.empty()) return err;
  const k::GemmArgs args = ArgsFor(d, r, b, b.c.data());

  int launched = 0;
  if (!(err = WarmUp(d, r, args, o, &launched)).empty()) return err;

  // After the warm-up: a launcher may set the kernel's dynamic shared memory limit on first use,
  // and the occupancy calculator honours that attribute.
  err = FillOccupancy(d, r, result->mutable_occupancy());
  if (!err.empty()) {
    if (d.fatal) return err;
    Log("occupancy of %s not reported: %s", r.variant->name.c_str(), err.c_str());
    result->clear_occupancy();
  }

  const bool cold = !o.hot_l2;
  // The stopping rule runs on running sums: recomputing from the samples would be quadratic.
  RunningStats running;
  StopReason why = StopReason::kContinue;
  const auto loop0 = std::chrono::steady_clock::now();
  while (why == StopReason::kContinue) {
    float ms = 0;
    if (!(err = TakeSample(d, r, args, cold, &ms)).empty()) return err;
    result->add_sample_ms(double(ms));
    running.Add(double(ms));
    why = ShouldStop(running, o, Seconds(loop0));
  }
  result->set_l2(cold ? apb::L2_MODE_COLD : apb::L2_MODE_HOT);
  SetStatsFromSamples(result);
  Log("measured %s %s %s: %" PRId64
      " samples, mean %.4f ms, noise %.3f%%, L2 %s, %d warm-up "
      "launches, stopped: %s",
      r.variant->name.c_str(), task.dtype().c_str(), ShapeText(task.shape()).c_str(),
      running.count(), running.mean(), 100 * running.noise(), cold ? "cold" : "hot", launched,
      ToString(why).c_str());
  return "";
}

}  // namespace ablation::worker
