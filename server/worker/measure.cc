#include "server/worker/measure.h"

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <vector>

#include "server/worker/diagnostics.h"
#include "server/worker/l2_rotation.h"
#include "server/worker/launch.h"
#include "server/worker/occupancy.h"
#include "server/worker/resident.h"
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

/// Warm-up: by count and by time (PlanWarmup, sample_plan.h: the full warmup_seconds on an idle
/// GPU, a short one on a GPU that was busy a moment ago), so that clocks, caches of the launch
/// path and cuBLAS's heuristics are settled. max_seconds bounds it too (a kernel of seconds per
/// launch). *per_launch_ms: the wall time per launch, the first batch's estimate of a sample
/// (high for a small kernel, whose launches the synchronisations dominate, which only makes the
/// batch short).
std::string WarmUp(Device& d, const Ready& r, const k::GemmArgs& args, const WarmupPlan& plan,
                   double max_seconds, int* launched, double* per_launch_ms) {
  const auto warm0 = std::chrono::steady_clock::now();
  std::string err;
  for (;;) {
    const int batch = *launched < plan.launches ? std::min(kWarmupBatch, plan.launches - *launched)
                                                : kWarmupBatch;
    for (int i = 0; i < batch; ++i, ++*launched) {
      if (!(err = LaunchChecked(d, r, args)).empty()) return err;
    }
    if (!(err = d.Check(cudaStreamSynchronize(d.stream), "warm-up")).empty()) return err;
    const double s = Seconds(warm0);
    *per_launch_ms = 1e3 * s / std::max(*launched, 1);
    if (*launched >= plan.launches && s >= plan.seconds) break;
    if (s >= max_seconds) break;
  }
  return "";
}

/// The occupancy of r's kernel, from the resident answer when this kernel has had one.
std::string Occupancy(Device& d, Resident& res, const Ready& r, apb::Occupancy* occ) {
  const void* fn = r.variant->kernel ? r.variant->kernel(r.problem.dtype) : nullptr;
  if (fn == nullptr) return "";  // a library entry (cuBLAS): nothing of ours to describe
  if (auto it = res.occupancy.find(fn); it != res.occupancy.end()) {
    *occ = it->second;
    return "";
  }
  std::string err = FillOccupancy(d, r, occ);
  if (err.empty()) res.occupancy[fn] = *occ;
  return err;
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

std::string RunMeasure(Device& d, Resident& res, const k::Registry& registry,
                       const ::ablation::worker::v1::MeasureTask& task,
                       ::ablation::worker::v1::MeasureResult* result) {
  const auto setup0 = std::chrono::steady_clock::now();
  apb::Cost* cost = result->mutable_cost();
  Ready r;
  std::string err = Resolve(registry, task.variant(), task.dtype(), task.shape(), &r);
  if (!err.empty()) return err;
  const apb::TimingOptions& t = task.timing();
  const SamplingOptions o = ResolveOptions(
      t.min_samples(), t.min_seconds(), t.max_seconds(), t.target_noise(), t.warmup_count(),
      t.warmup_seconds(), t.hot_l2(), t.max_samples(), t.flush_l2(), t.low_clock_fraction());
  // The inputs and the L2 rotation's copies, resident from the last measurement of this problem
  // and seed or made now (resident_inputs.h); C poisoned either way.
  ProblemInputs in;
  err = res.inputs.Prepare({.problem = r.problem,
                            .seed = task.seed(),
                            .need_nk = r.variant->b_layout == k::BLayout::kNK},
                           &in);
  L2Plan plan;
  std::vector<k::GemmArgs> sets;
  bool sets_reused = false;
  const k::GemmArgs args = ArgsFor(d, r, in, in.c);
  if (err.empty()) err = MakeInputSets(res.inputs, r, args, o, &plan, &sets, &sets_reused);
  if (!err.empty()) {
    cost->set_setup_seconds(Seconds(setup0));
    return err;
  }
  if (!plan.note.empty())
    Log("%s %s: %s", r.variant->name.c_str(), task.dtype().c_str(), plan.note.c_str());
  cost->set_inputs_reused(in.reused && sets_reused);
  double setup_s = Seconds(setup0);

  // Right before the samples, so that nothing cools the GPU between the two.
  const double idle_s = res.IdleSeconds();
  const WarmupPlan warmup = PlanWarmup(o, idle_s);
  int launched = 0;
  double estimate_ms = 0;
  const auto warm0 = std::chrono::steady_clock::now();
  err = WarmUp(d, r, args, warmup, o.max_seconds, &launched, &estimate_ms);
  cost->set_warmup_seconds(Seconds(warm0));
  if (!err.empty()) return err;

  // After the warm-up: a launcher may set the kernel's dynamic shared memory limit on first use,
  // and the occupancy calculator honours that attribute.
  const auto occupancy0 = std::chrono::steady_clock::now();
  err = Occupancy(d, res, r, result->mutable_occupancy());
  if (!err.empty()) {
    if (d.fatal) return err;
    Log("occupancy of %s not reported: %s", r.variant->name.c_str(), err.c_str());
    result->clear_occupancy();
  }
  setup_s += Seconds(occupancy0);
  cost->set_setup_seconds(setup_s);

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
  int dropped = 0, ahead_batches = 0, past_stop = 0;
  struct InFlight {
    int slot = 0, count = 0;
  };
  std::vector<InFlight> in_flight;  // enqueued and not yet collected, oldest first
  int next_slot = 0;
  auto enqueue = [&](int n) {
    std::string e = EnqueueBatch(d, r, sets, next_set, n, flush, next_slot);
    if (!e.empty()) return e;
    in_flight.push_back({next_slot, n});
    next_set += n;
    next_slot = (next_slot + 1) % kBatchSlots;
    return std::string();
  };
  const auto loop0 = std::chrono::steady_clock::now();
  while (!in_flight.empty() || why == StopReason::kContinue) {
    if (in_flight.empty()) {
      if (!(err = enqueue(NextBatchSize(running, o, estimate_ms, max_batch))).empty()) break;
    }
    // The next batch behind its own gate while this one runs, where this one cannot end the
    // measurement (CanEnqueueAhead): the GPU then goes from one batch to the next without
    // waiting for the host to enqueue it. Never with the flush, whose samples are one at a time.
    if (!flush && why == StopReason::kContinue && in_flight.size() < size_t(kBatchSlots) &&
        CanEnqueueAhead(running, in_flight.back().count, o, estimate_ms, Seconds(loop0))) {
      const int n = NextBatchSizeAhead(running, in_flight.back().count, o, estimate_ms, max_batch);
      if (n > 0) {
        if (!(err = enqueue(n)).empty()) break;
        ++ahead_batches;
      }
    }
    const InFlight done = in_flight.front();
    in_flight.erase(in_flight.begin());
    bool timed_out = false;
    if (!(err = CollectBatch(d, done.slot, done.count, &batch, &timed_out)).empty()) break;
    if (timed_out) {
      // The host did not enqueue the batch before the gate gave up: host time may sit between
      // some sample's events. A shorter batch next time, in case the queue was what held it.
      ++dropped;
      max_batch = std::max(1, max_batch / 2);
      Log("a batch of %d samples of %s was dropped: its gate timed out before it was enqueued",
          done.count, r.variant->name.c_str());
    } else {
      // A batch enqueued ahead that runs past the stop (its predecessor ran far longer than the
      // margin allows for) is kept: its samples are as good as any.
      if (why != StopReason::kContinue) past_stop += done.count;
      for (const BatchSample& x : batch) {
        result->add_sample_ms(double(x.ms));
        sm_mhz.push_back(x.sm_mhz);
        running.Add(double(x.ms));
      }
    }
    if (why == StopReason::kContinue) why = ShouldStop(running, o, Seconds(loop0));
  }
  if (!err.empty()) {
    cost->set_sampling_seconds(Seconds(loop0));
    return err;
  }
  if (past_stop > 0) {
    Log("%s: %d samples past the stop (a batch enqueued ahead)", r.variant->name.c_str(),
        past_stop);
  }
  res.Busy();
  cost->set_sampling_seconds(Seconds(loop0));
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
      " input sets%s), %d warm-up launches in %.1f ms (%s), %d batches dropped, %d enqueued "
      "ahead, stopped: %s; setup %.1f ms, sampling %.1f ms",
      r.variant->name.c_str(), task.dtype().c_str(), ShapeText(task.shape()).c_str(),
      running.count(), running.mean(), 100 * running.noise(), st.median_sm_mhz(),
      st.low_clock_samples(), MethodText(plan.method), int64_t(sets.size()),
      cost->inputs_reused() ? ", resident" : "", launched, 1e3 * cost->warmup_seconds(),
      warmup.warm ? "warm GPU" : "cold GPU", dropped, ahead_batches, ToString(why).c_str(),
      1e3 * setup_s, 1e3 * cost->sampling_seconds());
  return "";
}

}  // namespace ablation::worker
