// How a measurement takes its samples (sample_plan.h): the L2 rotation's copy count and its
// fall-back to the flush, the batch size, and the stopping rule applied between batches.
#include "server/worker/sample_plan.h"

#include <gtest/gtest.h>

#include <cmath>

#include "server/worker/sampling.h"

namespace ablation::worker {
namespace {

constexpr double kMiB = 1 << 20;
constexpr double kH200L2 = 60 * kMiB;
constexpr double kPlenty = 100.0 * 1024 * kMiB;

TEST(PlanL2, CopiesTogetherExceedTwiceTheL2) {
  // bf16 4096^3: A and B are 32 MiB each, so two sets (128 MiB) exceed 120 MiB.
  L2Plan p = PlanL2(false, false, 64 * kMiB, kH200L2, kPlenty);
  EXPECT_EQ(p.method, L2Method::kRotate);
  EXPECT_EQ(p.copies, 2);
  EXPECT_EQ(p.note, "");
  // bf16 512^3: 1 MiB a set, 121 sets (120 would only equal twice the L2).
  EXPECT_EQ(PlanL2(false, false, 1 * kMiB, kH200L2, kPlenty).copies, 121);
  EXPECT_EQ(PlanL2(false, false, 60 * kMiB, kH200L2, kPlenty).copies, 3);
  // A set far beyond the L2 still rotates through two: no sample reads what the last one read.
  EXPECT_EQ(PlanL2(false, false, 1024 * kMiB, kH200L2, kPlenty).copies, 2);
  EXPECT_EQ(PlanL2(false, false, 1 * kMiB, 0, kPlenty).copies, 2) << "L2 size unknown";
}

TEST(PlanL2, FallsBackToTheFlushWhereTheCopiesDoNotFit) {
  // One extra 64 MiB set against a quarter of 200 MiB free (50 MiB).
  L2Plan p = PlanL2(false, false, 64 * kMiB, kH200L2, 200 * kMiB);
  EXPECT_EQ(p.method, L2Method::kFlush);
  EXPECT_EQ(p.copies, 1);
  EXPECT_NE(p.note.find("flushed before each sample"), std::string::npos) << p.note;
  EXPECT_NE(p.note.find("25%"), std::string::npos) << p.note;
  // Exactly a quarter fits.
  EXPECT_EQ(PlanL2(false, false, 64 * kMiB, kH200L2, 256 * kMiB).method, L2Method::kRotate);
}

TEST(PlanL2, TheTaskChooses) {
  EXPECT_EQ(PlanL2(true, false, kMiB, kH200L2, kPlenty).method, L2Method::kHot);
  EXPECT_EQ(PlanL2(false, true, kMiB, kH200L2, kPlenty).method, L2Method::kFlush);
  EXPECT_EQ(PlanL2(true, true, kMiB, kH200L2, kPlenty).method, L2Method::kHot) << "hot wins";
  EXPECT_EQ(PlanL2(true, false, kMiB, kH200L2, kPlenty).copies, 1);
  EXPECT_EQ(RequestedL2Method(false, false), L2Method::kRotate);
}

SamplingOptions Opts() {
  SamplingOptions o;
  o.min_samples = 10;
  o.min_seconds = 0.5;
  o.max_seconds = 1;
  o.target_noise = 0.005;
  o.max_samples = 1000;
  return o;
}

RunningStats Taken(int n, double ms) {
  RunningStats r;
  for (int i = 0; i < n; ++i) r.Add(ms);
  return r;
}

TEST(NextBatchSize, FillsTheTargetTimeWithinTheCap) {
  EXPECT_EQ(NextBatchSize({}, Opts(), 0.2, kMaxBatch), kMaxBatch);  // 250 would fit 50 ms
  EXPECT_EQ(NextBatchSize({}, Opts(), 10, kMaxBatch), 5);
  EXPECT_EQ(NextBatchSize({}, Opts(), 100, kMaxBatch), 1) << "at least one";
  EXPECT_EQ(NextBatchSize({}, Opts(), 0, kMaxBatch), kMaxBatch) << "no estimate";
  EXPECT_EQ(NextBatchSize({}, Opts(), NAN, kMaxBatch), kMaxBatch);
  EXPECT_EQ(NextBatchSize({}, Opts(), 0.2, 1), 1) << "the flush: one sample a batch";
  // Once there are samples their mean is the estimate, not the warm-up's.
  EXPECT_EQ(NextBatchSize(Taken(4, 25), Opts(), 0.001, kMaxBatch), 2);
}

TEST(NextBatchSize, StopsAtTheCaps) {
  // 995 ms of the 1 s cap taken at 1 ms a sample: 5 more.
  EXPECT_EQ(NextBatchSize(Taken(995, 1), Opts(), 1, kMaxBatch), 5);
  // Past the time cap: still one (the stopping rule, not the batch, ends the measurement).
  EXPECT_EQ(NextBatchSize(Taken(1000, 1.5), Opts(), 1, kMaxBatch), 0) << "max_samples";
  EXPECT_EQ(NextBatchSize(Taken(700, 1.5), Opts(), 1, kMaxBatch), 1);
  SamplingOptions o = Opts();
  o.max_samples = 100;
  EXPECT_EQ(NextBatchSize(Taken(98, 0.01), o, 0.01, kMaxBatch), 2);
}

/// The measurement loop without a GPU: batches of NextBatchSize, the stopping rule between them.
StopReason RunLoop(const SamplingOptions& o, double sample_ms, RunningStats* r, int* batches) {
  StopReason why = StopReason::kContinue;
  while (why == StopReason::kContinue) {
    const int n = NextBatchSize(*r, o, sample_ms, kMaxBatch);
    for (int i = 0; i < n; ++i) r->Add(sample_ms * (1 + 0.001 * ((r->count() % 2) ? 1 : -1)));
    ++*batches;
    why = ShouldStop(*r, o);
  }
  return why;
}

TEST(NextBatchSize, TheStoppingRuleBetweenBatchesOvershootsByLessThanABatch) {
  // Quiet 0.125 ms samples: the noise target is met at once, so min_seconds (0.5 s = 4000
  // samples) decides; batches of 32 end at the first batch boundary at or past it.
  RunningStats r;
  int batches = 0;
  SamplingOptions quiet = Opts();
  quiet.max_samples = 100000;
  EXPECT_EQ(RunLoop(quiet, 0.125, &r, &batches), StopReason::kNoiseTarget);
  EXPECT_GE(r.count(), 4000);
  EXPECT_LT(r.count(), 4000 + kMaxBatch);
  EXPECT_EQ(r.count(), int64_t(batches) * kMaxBatch);
  // 30 ms samples: batches of one (50 / 30), the cap of 1 s reached after 34.
  r = RunningStats();
  batches = 0;
  SamplingOptions noisy = Opts();
  noisy.target_noise = 1e-9;
  EXPECT_EQ(RunLoop(noisy, 30, &r, &batches), StopReason::kTimeCap);
  EXPECT_EQ(r.count(), 34);
  EXPECT_LE(r.sum(), 1000 + 30 * 1.001);
  // max_samples is met exactly, never passed, whatever the batch.
  r = RunningStats();
  batches = 0;
  noisy.max_samples = 45;
  noisy.max_seconds = 100;
  EXPECT_EQ(RunLoop(noisy, 0.01, &r, &batches), StopReason::kMaxSamples);
  EXPECT_EQ(r.count(), 45);
  EXPECT_EQ(batches, 2);
}

TEST(CanEnqueueAhead, OnlyWhileTheBatchInFlightCannotEndTheMeasurement) {
  const SamplingOptions o = Opts();  // >= 10 samples and 0.5 s, at most 1 s and 1000 samples
  // 0.1 s taken at 1 ms a sample, 32 in flight (at most 40 ms with the margin): short of 0.5 s.
  EXPECT_TRUE(CanEnqueueAhead(Taken(100, 1), 32, o, 0, 0.1));
  // 0.47 s + 32 x 1.25 ms = 0.51 s: the batch in flight may reach min_seconds.
  EXPECT_FALSE(CanEnqueueAhead(Taken(470, 1), 32, o, 0, 0.5));
  EXPECT_TRUE(CanEnqueueAhead(Taken(455, 1), 32, o, 0, 0.5));
  // min_samples alone keeps the rule from stopping, short of the caps.
  SamplingOptions many = o;
  many.min_samples = 900;
  EXPECT_TRUE(CanEnqueueAhead(Taken(700, 1), 32, many, 0, 0.7));
  EXPECT_FALSE(CanEnqueueAhead(Taken(950, 1), 32, many, 0, 0.95)) << "the time cap is near";
  many.max_samples = 720;
  EXPECT_FALSE(CanEnqueueAhead(Taken(700, 1), 32, many, 0, 0.7)) << "max_samples";
  // The wall-clock cap (2 x max_seconds) counts too.
  EXPECT_FALSE(CanEnqueueAhead(Taken(100, 1), 32, o, 0, 1.97));
  // Before the first sample, the warm-up's estimate; without any, never.
  EXPECT_TRUE(CanEnqueueAhead({}, 32, o, 1, 0));
  EXPECT_FALSE(CanEnqueueAhead({}, 32, o, 0, 0));
  EXPECT_FALSE(CanEnqueueAhead({}, 32, o, NAN, 0));
  EXPECT_FALSE(CanEnqueueAhead(Taken(100, 1), 0, o, 0, 0.1)) << "nothing in flight";
}

TEST(NextBatchSizeAhead, CountsTheBatchInFlight) {
  const SamplingOptions o = Opts();
  EXPECT_EQ(NextBatchSizeAhead(Taken(100, 1), 32, o, 0, kMaxBatch), kMaxBatch);
  // 900 ms taken and 32 x 1.25 ms in flight: 60 ms left under the 1 s cap at 1 ms a sample.
  EXPECT_EQ(NextBatchSizeAhead(Taken(900, 1), 32, o, 0, 64), 50) << "the 50 ms target first";
  EXPECT_EQ(NextBatchSizeAhead(Taken(930, 1), 32, o, 0, 64), 30);
  SamplingOptions few = o;
  few.max_samples = 140;
  EXPECT_EQ(NextBatchSizeAhead(Taken(100, 0.1), 32, few, 0, kMaxBatch), 8) << "max_samples";
  EXPECT_EQ(NextBatchSizeAhead(Taken(100, 0.1), 40, few, 0, kMaxBatch), 0);
}

/// measure.cc's loop without a GPU: a batch enqueued ahead where CanEnqueueAhead allows, the
/// stopping rule after each batch collected, batches in flight collected after the stop.
/// Sample i takes sample_ms(i).
template <typename SampleMs>
StopReason RunPipelined(const SamplingOptions& o, SampleMs sample_ms, RunningStats* r, int* ahead,
                        int* past_stop) {
  std::vector<int> in_flight;
  StopReason why = StopReason::kContinue;
  auto take = [&](int n) {
    for (int i = 0; i < n; ++i) r->Add(sample_ms(r->count()));
  };
  while (!in_flight.empty() || why == StopReason::kContinue) {
    if (in_flight.empty()) in_flight.push_back(NextBatchSize(*r, o, sample_ms(0), kMaxBatch));
    if (why == StopReason::kContinue && in_flight.size() < size_t(kBatchSlots) &&
        CanEnqueueAhead(*r, in_flight.back(), o, sample_ms(0), 0)) {
      in_flight.push_back(NextBatchSizeAhead(*r, in_flight.back(), o, sample_ms(0), kMaxBatch));
      ++*ahead;
    }
    const int n = in_flight.front();
    in_flight.erase(in_flight.begin());
    if (why != StopReason::kContinue) *past_stop += n;
    take(n);
    if (why == StopReason::kContinue) why = ShouldStop(*r, o);
  }
  return why;
}

TEST(CanEnqueueAhead, TheLoopTakesTheSamplesItWouldTakeOneBatchAtATime) {
  SamplingOptions quiet = Opts();
  quiet.max_samples = 100000;
  for (double ms : {0.125, 0.5, 3.0, 30.0}) {
    RunningStats one, piped;
    int batches = 0, ahead = 0, past = 0;
    const StopReason a = RunLoop(quiet, ms, &one, &batches);
    const StopReason b = RunPipelined(
        quiet, [&](int64_t i) { return ms * (1 + 0.001 * ((i % 2) ? 1 : -1)); }, &piped, &ahead,
        &past);
    EXPECT_EQ(a, b) << ms;
    EXPECT_EQ(one.count(), piped.count()) << ms;
    EXPECT_EQ(past, 0) << ms;
    // All but the last batch or two were enqueued while the one before ran.
    EXPECT_GE(ahead, batches - 2) << ms;
  }
}

TEST(CanEnqueueAhead, ABatchFarLongerThanPredictedRunsAtMostOneBatchPastTheStop) {
  // 0.5 ms samples, then five times as long (a clock collapse): the batch ahead was planned on
  // the short ones, and is collected, and kept, after the rule stopped.
  SamplingOptions o = Opts();
  o.max_samples = 100000;
  RunningStats r;
  int ahead = 0, past = 0;
  RunPipelined(
      o, [](int64_t i) { return i < 900 ? 0.5 : 2.5; }, &r, &ahead, &past);
  EXPECT_LE(past, kMaxBatch);
  EXPECT_LE(r.sum(), 1e3 * o.max_seconds + kMaxBatch * 2.5);
}

TEST(PlanWarmup, AnIdleGpuGetsTheWholeWarmUpABusyOneAShortOne) {
  SamplingOptions o;  // 3 launches, 0.1 s
  // The worker's first task, or a GPU idle for longer than kWarmIdleSeconds: all of it.
  for (double idle : {-1.0, kWarmIdleSeconds + 1e-3, 10.0}) {
    const WarmupPlan p = PlanWarmup(o, idle);
    EXPECT_FALSE(p.warm) << idle;
    EXPECT_EQ(p.launches, 3) << idle;
    EXPECT_DOUBLE_EQ(p.seconds, 0.1) << idle;
  }
  // Busy a moment ago (the item before): the count and kWarmGpuWarmupSeconds.
  for (double idle : {0.0, 0.004, kWarmIdleSeconds}) {
    const WarmupPlan p = PlanWarmup(o, idle);
    EXPECT_TRUE(p.warm) << idle;
    EXPECT_EQ(p.launches, 3) << idle;
    EXPECT_DOUBLE_EQ(p.seconds, kWarmGpuWarmupSeconds) << idle;
  }
  // Never longer than asked for, and the count is always the task's.
  o.warmup_seconds = 0.001;
  o.warmup_count = 7;
  EXPECT_DOUBLE_EQ(PlanWarmup(o, 0.01).seconds, 0.001);
  EXPECT_EQ(PlanWarmup(o, 0.01).launches, 7);
  EXPECT_DOUBLE_EQ(PlanWarmup(o, -1).seconds, 0.001);
  // The policy's numbers, as the README states them.
  EXPECT_DOUBLE_EQ(kWarmIdleSeconds, 0.05);
  EXPECT_DOUBLE_EQ(kWarmGpuWarmupSeconds, 0.005);
}

}  // namespace
}  // namespace ablation::worker
