#include "common/history/change_points.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

namespace ablation::history {
namespace {

// Nights of a median around `level` with relative Gaussian noise; from `step_at` on, the level
// is multiplied by (1 + step).
std::vector<double> Nights(int n, double noise, uint64_t seed, int step_at = -1, double step = 0) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> gauss(0.0, noise);
  std::vector<double> out;
  for (int i = 0; i < n; ++i) {
    const double level = (step_at >= 0 && i >= step_at) ? 1.0 + step : 1.0;
    out.push_back(level * (1.0 + gauss(rng)));
  }
  return out;
}

TEST(ChangePoints, DivergenceMatchesWorkedExamples) {
  // [0 0 | 1 1]: every cross pair is 1 apart, none within: (2*2/4) * (2*4/4 - 0 - 0) = 2.
  const std::vector<double> x = {0, 0, 1, 1};
  EXPECT_DOUBLE_EQ(DivergenceAt(x, 2), 2.0);
  // [0 | 0 1 1]: cross mean 2/3, left within 0 (one point), right within (1+1+0)/3:
  // (1*3/4) * (2*2/3 - 0 - 2/3) = 0.5.
  EXPECT_DOUBLE_EQ(DivergenceAt(x, 1), 0.5);
  // [1 2 | 3 4 5]... a split inside a straight line still counts its spread: cross mean 2.5,
  // within left 1, within right 4/3: (2*3/5) * (5 - 1 - 4/3) = 3.2.
  const std::vector<double> line = {1, 2, 3, 4, 5};
  EXPECT_NEAR(DivergenceAt(line, 2), 3.2, 1e-12);
  EXPECT_EQ(DivergenceAt(line, 0), 0);
  EXPECT_EQ(DivergenceAt(line, 5), 0);
}

TEST(ChangePoints, ClearStepIsFoundWithItsMagnitude) {
  const std::vector<double> x = {10, 10, 10, 10, 10, 10, 12, 12, 12, 12, 12, 12};
  const auto cps = FindChangePoints(x);
  ASSERT_EQ(cps.size(), 1u);
  EXPECT_EQ(cps[0].index, 6);
  EXPECT_DOUBLE_EQ(cps[0].before_mean, 10);
  EXPECT_DOUBLE_EQ(cps[0].after_mean, 12);
  EXPECT_NEAR(cps[0].relative_change, 0.2, 1e-12);
  EXPECT_LE(cps[0].p_value, 0.01);
}

TEST(ChangePoints, TwoStepsAreBothFound) {
  std::vector<double> x;
  for (int i = 0; i < 10; ++i) x.push_back(1.0 + 0.001 * (i % 3));
  for (int i = 0; i < 10; ++i) x.push_back(1.1 + 0.001 * (i % 3));
  for (int i = 0; i < 10; ++i) x.push_back(0.95 + 0.001 * (i % 3));
  const auto cps = FindChangePoints(x);
  ASSERT_EQ(cps.size(), 2u);
  EXPECT_EQ(cps[0].index, 10);
  EXPECT_EQ(cps[1].index, 20);
  EXPECT_GT(cps[0].relative_change, 0.09);
  EXPECT_LT(cps[1].relative_change, -0.13);
}

TEST(ChangePoints, FlatSeriesAndTooShortSeriesHaveNone) {
  EXPECT_TRUE(FindChangePoints(std::vector<double>(20, 3.0)).empty());
  EXPECT_TRUE(FindChangePoints(std::vector<double>{1.0, 2.0, 3.0}).empty());
  EXPECT_TRUE(FindChangePoints(std::vector<double>{}).empty());
}

TEST(ChangePoints, StepInsideTheNoiseFloorIsNotCalled) {
  // A clean 0.5 % step: significant for the permutation test, but below the 1 % minimum.
  std::vector<double> x(10, 1.0);
  x.insert(x.end(), 10, 1.005);
  EXPECT_TRUE(FindChangePoints(x).empty());
  ChangePointOptions fine;
  fine.min_relative_change = 0.001;
  ASSERT_EQ(FindChangePoints(x, fine).size(), 1u);
  // The points' own noise raises the floor: 3 x 1 % noise hides even a 2 % step.
  std::vector<double> y(10, 1.0);
  y.insert(y.end(), 10, 1.02);
  EXPECT_EQ(FindChangePoints(y).size(), 1u);
  EXPECT_TRUE(FindChangePoints(y, {}, std::vector<double>(20, 0.01)).empty());
}

// The acceptance: a 2 % step at night 20 of 30 nights with 0.5 % noise is found there.
TEST(ChangePoints, FindsTwoPercentStepAtNightTwentyOfThirty) {
  int found = 0;
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    const auto x = Nights(30, 0.005, seed, 20, 0.02);
    const auto cps = FindChangePoints(x);
    ASSERT_EQ(cps.size(), 1u) << "seed " << seed;
    EXPECT_NEAR(cps[0].relative_change, 0.02, 0.006) << "seed " << seed;
    if (cps[0].index == 20) ++found;
  }
  // Noise can move the split by a night when the night next to the step looks like the other
  // side; the rule asks for night 20, and it is found there in all but rare cases.
  EXPECT_GE(found, 19);
}

// ... and in at most 1 % of 1000 series without a change, a change is called. The permutation
// test runs in full for every split that passes the magnitude floor (199 shuffles).
TEST(ChangePoints, CallsAChangeInAtMostOnePercentOfSeriesWithout) {
  int called = 0;
  for (uint64_t seed = 1000; seed < 2000; ++seed) {
    if (!FindChangePoints(Nights(30, 0.005, seed)).empty()) ++called;
  }
  EXPECT_LE(called, 10);
}

// Without the magnitude floor the permutation test alone holds its level: at most ~1 % + slack
// of null series give a significant first split (recursion can add a few more).
TEST(ChangePoints, PermutationTestAloneKeepsItsLevel) {
  ChangePointOptions test_only;
  test_only.min_relative_change = 0;
  test_only.noise_multiple = 0;
  test_only.permutations = 99;
  int called = 0;
  for (uint64_t seed = 5000; seed < 5200; ++seed) {
    if (!FindChangePoints(Nights(30, 0.005, seed), test_only).empty()) ++called;
  }
  EXPECT_LE(called, 8);  // 200 series at 1 %: 2 expected; 8 is far in the binomial tail
}

TEST(ChangePoints, SameSeedSameAnswer) {
  const auto x = Nights(30, 0.005, 7, 15, 0.03);
  const auto a = FindChangePoints(x);
  const auto b = FindChangePoints(x);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].index, b[i].index);
    EXPECT_EQ(a[i].p_value, b[i].p_value);
  }
}

TEST(ChangePoints, NewestPointShiftIsACandidateOnlyBeyondTheSpread) {
  auto x = Nights(20, 0.005, 3);
  x.push_back(x.back());  // placeholder for the newest night
  x.back() = 1.05;
  NewestShift s = NewestPointShift(x, FindChangePoints(x));
  EXPECT_TRUE(s.candidate);
  EXPECT_EQ(s.baseline_points, 20);
  EXPECT_NEAR(s.relative_change, 0.05, 0.01);
  x.back() = 1.004;
  s = NewestPointShift(x, FindChangePoints(x));
  EXPECT_FALSE(s.candidate);
  EXPECT_GE(s.threshold, 0.01);
  // The baseline starts at the last change point before the newest night.
  std::vector<double> y(10, 1.0);
  y.insert(y.end(), 10, 2.0);
  y.push_back(2.0);
  const auto cps = FindChangePoints(y);
  ASSERT_EQ(cps.size(), 1u);
  s = NewestPointShift(y, cps);
  EXPECT_EQ(s.baseline_points, 10);
  EXPECT_DOUBLE_EQ(s.baseline, 2.0);
  EXPECT_FALSE(s.candidate);
  EXPECT_FALSE(NewestPointShift(std::vector<double>{1.0}, {}).candidate);
}

}  // namespace
}  // namespace ablation::history
