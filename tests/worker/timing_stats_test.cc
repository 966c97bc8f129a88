// MeasureResult.stats, the statistics the daemon stores as the worker (or its test double) sends
// them: exact values for fixed samples, by the definitions of sampling.cc.
#include "server/worker/timing_stats.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "server/worker/sampling.h"

namespace ablation::worker {
namespace {

v1::MeasureResult WithSamples(const std::vector<double>& ms) {
  v1::MeasureResult r;
  for (double x : ms) r.add_sample_ms(x);
  SetStatsFromSamples(&r);
  return r;
}

TEST(TimingStats, FourSamplesExactly) {
  const ::ablation::v1::TimingStats s = WithSamples({1, 2, 3, 4}).stats();
  EXPECT_EQ(s.samples(), 4);
  EXPECT_EQ(s.min_ms(), 1);
  EXPECT_EQ(s.max_ms(), 4);
  EXPECT_EQ(s.mean_ms(), 2.5);
  // Linear interpolation between order statistics: positions 1.5, 0.75 and 2.25.
  EXPECT_EQ(s.median_ms(), 2.5);
  EXPECT_EQ(s.q1_ms(), 1.75);
  EXPECT_EQ(s.q3_ms(), 3.25);
  // Sample standard deviation (n - 1): the squared deviations sum to 5.
  EXPECT_DOUBLE_EQ(s.stddev_ms(), std::sqrt(5.0 / 3.0));
  // Relative standard error of the mean: stddev / sqrt(n) / mean.
  EXPECT_DOUBLE_EQ(s.noise(), std::sqrt(5.0 / 3.0) / 2.0 / 2.5);
  EXPECT_EQ(s.total_seconds(), 0.010);
}

TEST(TimingStats, OrderOfTheSamplesDoesNotMatterAndIsKept) {
  const v1::MeasureResult r = WithSamples({4, 1, 3, 2});
  EXPECT_EQ(r.stats().SerializeAsString(), WithSamples({1, 2, 3, 4}).stats().SerializeAsString());
  ASSERT_EQ(r.sample_ms_size(), 4);
  EXPECT_EQ(r.sample_ms(0), 4);  // the samples stay in the order they were taken
  EXPECT_EQ(r.sample_ms(3), 2);
}

TEST(TimingStats, OneSampleHasNoNoise) {
  const ::ablation::v1::TimingStats s = WithSamples({2}).stats();
  EXPECT_EQ(s.samples(), 1);
  EXPECT_EQ(s.median_ms(), 2);
  EXPECT_EQ(s.q1_ms(), 2);
  EXPECT_EQ(s.q3_ms(), 2);
  EXPECT_EQ(s.stddev_ms(), 0);
  EXPECT_EQ(s.noise(), 0) << "not finite in ComputeStats: stored as 0 with the count beside it";
  EXPECT_EQ(s.total_seconds(), 0.002);
}

TEST(TimingStats, ZeroMeanHasNoNoise) {
  const ::ablation::v1::TimingStats s = WithSamples({0, 0}).stats();
  EXPECT_EQ(s.samples(), 2);
  EXPECT_EQ(s.noise(), 0);
}

TEST(TimingStats, NoSamplesAllZero) {
  const v1::MeasureResult r = WithSamples({});
  EXPECT_TRUE(r.has_stats());
  EXPECT_EQ(r.stats().samples(), 0);
  EXPECT_EQ(r.stats().noise(), 0);
  EXPECT_EQ(r.stats().total_seconds(), 0);
  EXPECT_EQ(r.stats().median_ms(), 0);
}

TEST(TimingStats, SameNumbersAsComputeStats) {
  // Timings as the worker sends them: floats from cudaEventElapsedTime, widened to double.
  std::mt19937 rng(7);
  std::normal_distribution<float> d(0.5f, 0.01f);
  std::vector<double> xs;
  for (int i = 0; i < 777; ++i) xs.push_back(double(d(rng)));
  const ::ablation::v1::TimingStats t = WithSamples(xs).stats();
  const SampleStats s = ComputeStats(xs);
  EXPECT_EQ(t.median_ms(), s.median_ms);
  EXPECT_EQ(t.mean_ms(), s.mean_ms);
  EXPECT_EQ(t.stddev_ms(), s.stddev_ms);
  EXPECT_EQ(t.min_ms(), s.min_ms);
  EXPECT_EQ(t.max_ms(), s.max_ms);
  EXPECT_EQ(t.q1_ms(), s.q1_ms);
  EXPECT_EQ(t.q3_ms(), s.q3_ms);
  EXPECT_EQ(t.samples(), s.count);
  EXPECT_EQ(t.noise(), s.noise);
  EXPECT_EQ(t.total_seconds(), s.sum_ms / 1e3);
}

TEST(TimingStats, RecomputedStatsReplaceOldOnes) {
  v1::MeasureResult r = WithSamples({10, 20});
  r.clear_sample_ms();
  r.add_sample_ms(1);
  r.add_sample_ms(3);
  SetStatsFromSamples(&r);
  EXPECT_EQ(r.stats().samples(), 2);
  EXPECT_EQ(r.stats().median_ms(), 2);
  EXPECT_EQ(r.stats().max_ms(), 3);
}

}  // namespace
}  // namespace ablation::worker
