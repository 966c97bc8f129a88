#include "client/report/stats.h"

#include <cmath>
#include <random>

#include <gtest/gtest.h>

namespace ablation::client::report {
namespace {

// Log-normal timings around `ms` with a relative spread, as GPU samples look (std::mt19937_64
// is specified exactly by the standard; the normal distribution is not, so the tests only count).
std::vector<double> Timings(std::mt19937_64& rng, int n, double ms, double spread) {
  std::normal_distribution<double> noise(0.0, spread);
  std::vector<double> out;
  for (int i = 0; i < n; ++i) out.push_back(ms * std::exp(noise(rng)));
  return out;
}

TEST(Stats, Median) {
  EXPECT_EQ(Median({3, 1, 2}), 2);
  EXPECT_EQ(Median({4, 1, 3, 2}), 2.5);
  EXPECT_TRUE(std::isnan(Median({})));
}

TEST(Stats, StudentTMatchesTables) {
  EXPECT_NEAR(StudentTCdf(0, 5), 0.5, 1e-12);
  EXPECT_NEAR(StudentTCdf(2.015, 5), 0.95, 1e-3);     // t_0.95,5 = 2.015
  EXPECT_NEAR(StudentTCdf(-2.228, 10), 0.025, 1e-3);  // t_0.975,10 = 2.228
  EXPECT_NEAR(StudentTQuantile(0.975, 30), 2.042, 1e-3);
  EXPECT_NEAR(StudentTQuantile(0.975, 1e6), 1.960, 1e-3);  // the normal limit
}

TEST(Stats, WelchKnownExample) {
  // Equal spreads, means differing by log(1.05): the change is +5% and clearly significant.
  std::vector<double> a, b;
  for (int i = 0; i < 50; ++i) {
    const double wiggle = std::exp(0.01 * std::sin(double(i)));
    a.push_back(1.0 * wiggle);
    b.push_back(1.05 * wiggle);
  }
  WelchResult w = WelchLogT(a, b);
  ASSERT_TRUE(w.valid);
  EXPECT_NEAR(w.time_change, 0.05, 1e-9);
  EXPECT_LT(w.p, 1e-10);
  EXPECT_LT(w.low, 0.05);
  EXPECT_GT(w.high, 0.05);
  WelchResult same = WelchLogT(a, a);
  EXPECT_NEAR(same.time_change, 0, 1e-12);
  EXPECT_NEAR(same.p, 1, 1e-9);
}

TEST(Stats, WelchNeedsTwoSamplesASide) {
  EXPECT_FALSE(WelchLogT({1.0}, {1.0, 1.1}).valid);
  EXPECT_FALSE(WelchLogT({1.0, -1.0}, {1.0, 1.1}).valid);  // a time must be positive
}

TEST(Stats, IdenticalDistributionsAreRarelySignificant) {
  std::mt19937_64 rng(12345);
  int welch_significant = 0, bootstrap_outside = 0;
  const int trials = 200;
  for (int t = 0; t < trials; ++t) {
    auto a = Timings(rng, 60, 1.0, 0.02), b = Timings(rng, 60, 1.0, 0.02);
    welch_significant += WelchLogT(a, b).p < 0.05;
    bootstrap_outside += !SpeedChange(a, b, SeedFor(std::to_string(t)), 1000).within_noise();
  }
  // Nominal 5%; allow for sampling error of 200 trials and the percentile bootstrap's slight
  // anti-conservatism at n = 60.
  EXPECT_LE(welch_significant, trials * 0.10) << welch_significant;
  EXPECT_LE(bootstrap_outside, trials * 0.12) << bootstrap_outside;
}

TEST(Stats, AFivePercentShiftIsSignificant) {
  std::mt19937_64 rng(777);
  int welch_hits = 0, bootstrap_hits = 0;
  const int trials = 50;
  for (int t = 0; t < trials; ++t) {
    auto a = Timings(rng, 60, 1.0, 0.02), b = Timings(rng, 60, 1.05, 0.02);
    WelchResult w = WelchLogT(a, b);
    welch_hits += w.p < 0.05 && w.time_change > 0;
    Change c = SpeedChange(a, b, SeedFor(std::to_string(t)), 1000);
    bootstrap_hits += !c.within_noise() && c.high < 0;  // b is slower: negative speed change
  }
  EXPECT_EQ(welch_hits, trials);
  EXPECT_EQ(bootstrap_hits, trials);
}

TEST(Stats, SpeedChangeIsDeterministicAndBracketsTheEstimate) {
  std::mt19937_64 rng(1);
  auto a = Timings(rng, 400, 1.10, 0.01), b = Timings(rng, 400, 1.00, 0.01);
  Change one = SpeedChange(a, b, 42), two = SpeedChange(a, b, 42);
  ASSERT_TRUE(one.has_interval);
  EXPECT_EQ(one.low, two.low);
  EXPECT_EQ(one.high, two.high);
  EXPECT_NEAR(one.estimate, Median(a) / Median(b) - 1, 1e-12);
  EXPECT_LE(one.low, one.estimate);
  EXPECT_GE(one.high, one.estimate);
  EXPECT_NEAR(one.estimate, 0.10, 0.01);
  EXPECT_FALSE(one.within_noise());
}

TEST(Stats, SpeedChangeWithoutSamplesHasNoInterval) {
  Change c = SpeedChange({2.0}, {1.0, 1.0}, 1);
  EXPECT_FALSE(c.has_interval);
  EXPECT_FALSE(c.within_noise());
  EXPECT_NEAR(SpeedChangeFromMedians(2.0, 1.0).estimate, 1.0, 1e-12);
}

}  // namespace
}  // namespace ablation::client::report
