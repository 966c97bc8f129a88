// How a window takes its samples (sample_plan.h): the L2 rotation's copy count and its fall-back
// to the flush, where a window of interleaved variants ends and how its batches are cut.
#include "server/worker/sample_plan.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <vector>

#include "server/protocol/sampling.h"

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

TEST(PlanL2, EachMethodHasItsWordsForTheLog) {
  EXPECT_STREQ(L2MethodText(L2Method::kRotate), "cold (rotated)");
  EXPECT_STREQ(L2MethodText(L2Method::kFlush), "cold (flushed)");
  EXPECT_STREQ(L2MethodText(L2Method::kHot), "hot");
}

TEST(PlanL2, TheTaskChooses) {
  EXPECT_EQ(PlanL2(true, false, kMiB, kH200L2, kPlenty).method, L2Method::kHot);
  EXPECT_EQ(PlanL2(false, true, kMiB, kH200L2, kPlenty).method, L2Method::kFlush);
  EXPECT_EQ(PlanL2(true, true, kMiB, kH200L2, kPlenty).method, L2Method::kHot) << "hot wins";
  EXPECT_EQ(PlanL2(true, false, kMiB, kH200L2, kPlenty).copies, 1);
  EXPECT_EQ(RequestedL2Method(false, false), L2Method::kRotate);
}

TEST(WindowDone, GpuTimeAndMinimumCyclesOrTheCap) {
  const WindowSpec w{.members = 3, .window_ms = 100, .min_cycles = 10, .max_cycles = 0};
  EXPECT_FALSE(WindowDone(w, 9, 500)) << "time reached, cycles not";
  EXPECT_FALSE(WindowDone(w, 50, 99.9)) << "cycles reached, time not";
  EXPECT_TRUE(WindowDone(w, 10, 100));
  const WindowSpec capped{.members = 1, .window_ms = 1e9, .min_cycles = 1, .max_cycles = 7};
  EXPECT_FALSE(WindowDone(capped, 6, 1));
  EXPECT_TRUE(WindowDone(capped, 7, 1)) << "the cap wins over the time";
  EXPECT_TRUE(WindowDone({.members = 1, .window_ms = 0, .min_cycles = 0}, 1, 0))
      << "at least one cycle, then done";
  EXPECT_FALSE(WindowDone({.members = 1, .window_ms = 0, .min_cycles = 0}, 0, 0));
}

TEST(CyclesLeft, EnoughForTheTimeAndTheMinimumNeverPastTheCap) {
  const WindowSpec w{.members = 4, .window_ms = 100, .min_cycles = 10};
  EXPECT_EQ(CyclesLeft(w, 0, 0, 2.0), 50) << "100 ms at 2 ms a cycle";
  EXPECT_EQ(CyclesLeft(w, 0, 0, 50.0), 10) << "the minimum cycles";
  EXPECT_EQ(CyclesLeft(w, 40, 80, 2.0), 10);
  EXPECT_EQ(CyclesLeft(w, 40, 99, 3.0), 1) << "rounded up to whole cycles";
  EXPECT_EQ(CyclesLeft(w, 60, 120, 2.0), 0) << "done";
  EXPECT_EQ(CyclesLeft(w, 0, 0, 0.0), 10) << "unknown cycle time: the minimum";
  EXPECT_EQ(CyclesLeft(w, 10, 10, std::nan("")), 1) << "unknown, minimum met: one more";
  const WindowSpec capped{.members = 4, .window_ms = 1e6, .min_cycles = 1, .max_cycles = 30};
  EXPECT_EQ(CyclesLeft(capped, 25, 10, 1.0), 5);
}

TEST(WindowBatchSize, WholeCyclesThatFillTheTargetTime) {
  // 4 variants of 1 ms: a cycle of 4 ms, 8 cycles fit kMaxBatch (32) and 12 the 50 ms target.
  EXPECT_EQ(WindowBatchSize(4, 0, 100, 1.0), 32);
  // 4 variants of 5 ms: 2 whole cycles fill 50 ms (40 ms); never less than one cycle.
  EXPECT_EQ(WindowBatchSize(4, 8, 100, 5.0), 8);
  EXPECT_EQ(WindowBatchSize(4, 0, 100, 100.0), 4);
  // Never past the cycles left.
  EXPECT_EQ(WindowBatchSize(4, 0, 3, 0.01), 12);
  EXPECT_EQ(WindowBatchSize(1, 0, 5, 0.01), 5);
  EXPECT_EQ(WindowBatchSize(4, 0, 0, 1.0), 0) << "nothing left";
  // Unknown time: as many whole cycles as fit the batch.
  EXPECT_EQ(WindowBatchSize(3, 0, 100, 0), 30);
  // A batch that begins mid-cycle completes the cycle first.
  EXPECT_EQ(WindowBatchSize(4, 6, 100, 1.0), 2);
}

TEST(WindowBatchSize, ACycleLongerThanABatchGoesInPieces) {
  // 70 variants: pieces of kMaxBatch, the last the rest of the cycle.
  EXPECT_EQ(WindowBatchSize(70, 0, 10, 1.0), kMaxBatch);
  EXPECT_EQ(WindowBatchSize(70, 32, 10, 1.0), kMaxBatch);
  EXPECT_EQ(WindowBatchSize(70, 64, 10, 1.0), 6);
  EXPECT_EQ(WindowBatchSize(70, 70, 10, 1.0), kMaxBatch) << "the next cycle";
}

TEST(WindowBatchSize, ABurstWindowIsTakenWithoutOvershootingByABatch) {
  // The loop of measure.cc on a fixed sample time: a 20 ms window of 12 variants of 0.2 ms (a
  // cycle of 2.4 ms) takes the 9 cycles the time needs, not a 50 ms batch's worth.
  const WindowSpec w{.members = 12, .window_ms = 20, .min_cycles = 1};
  int64_t next = 0, cycles = 0;
  double gpu_ms = 0;
  while (true) {
    const int64_t left = CyclesLeft(w, cycles, gpu_ms, 12 * 0.2);
    const int count = WindowBatchSize(12, next, left, 0.2);
    if (count == 0) break;
    next += count;
    cycles += count / 12;
    gpu_ms += count * 0.2;
  }
  EXPECT_EQ(cycles, 9);
  EXPECT_TRUE(WindowDone(w, cycles, gpu_ms));
  EXPECT_LT(gpu_ms, 20 + 12 * 0.2 + 1e-9);
}

TEST(CycleOrder, EachCycleIsAPermutationOfItsOwnAndTheSameEverywhere) {
  EXPECT_EQ(CycleOrder(1, 7, 0), std::vector<int>{0});
  EXPECT_TRUE(CycleOrder(0, 7, 0).empty());
  // The same seed and cycle: the same order (a window's order can be told again).
  EXPECT_EQ(CycleOrder(12, 42, 5), CycleOrder(12, 42, 5));
  // Every cycle a permutation; over many cycles each variant follows every other one, about
  // equally often: no variant always starts after the same neighbour.
  const int n = 4, cycles = 4000;
  int follows[4][4] = {};
  std::set<std::vector<int>> distinct;
  for (int c = 0; c < cycles; ++c) {
    std::vector<int> o = CycleOrder(n, 42, c);
    std::vector<int> sorted = o;
    std::sort(sorted.begin(), sorted.end());
    ASSERT_EQ(sorted, (std::vector<int>{0, 1, 2, 3})) << "cycle " << c;
    distinct.insert(o);
    for (int i = 1; i < n; ++i) ++follows[o[size_t(i - 1)]][o[size_t(i)]];
  }
  EXPECT_EQ(distinct.size(), 24u) << "all 4! orders occur";
  // 4000 cycles x 3 neighbours = 12000 pairs over 12 ordered pairs: 1000 each, +-15%.
  for (int a = 0; a < n; ++a)
    for (int b = 0; b < n; ++b)
      if (a != b) EXPECT_NEAR(follows[a][b], 1000, 150) << a << " then " << b;
  // Another seed, other orders.
  int same = 0;
  for (int c = 0; c < 100; ++c) same += CycleOrder(n, 42, c) == CycleOrder(n, 43, c);
  EXPECT_LT(same, 20);
}

}  // namespace
}  // namespace ablation::worker
