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

}  // namespace
}  // namespace ablation::worker
