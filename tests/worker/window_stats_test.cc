// MemberResult.stats, the statistics the daemon stores as the worker (or its test double) sends
// them: exact values for fixed samples, by the definitions of sampling.cc.
#include "server/protocol/window_stats.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "server/protocol/sampling.h"

namespace ablation::worker {
namespace {

v1::MemberResult WithSamples(const std::vector<double>& ms) {
  v1::MemberResult r;
  for (double x : ms) r.add_sample_ms(x);
  protocol::SetStatsFromSamples(&r);
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
  const v1::MemberResult r = WithSamples({4, 1, 3, 2});
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
  const v1::MemberResult r = WithSamples({});
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
  const protocol::SampleStats s = protocol::ComputeStats(xs);
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

/// Samples with per-sample clocks, as the worker fills them.
v1::MemberResult WithClocks(const std::vector<double>& ms, const std::vector<double>& mhz,
                            const protocol::ClockBounds& bounds) {
  v1::MemberResult r;
  for (double x : ms) r.add_sample_ms(x);
  protocol::SetSampleClocks(&r, mhz);
  protocol::SetStatsFromSamples(&r, bounds);
  return r;
}

TEST(TimingStats, ClocksExactly) {
  // 1, 2, 3, 4 ms at 1980, 1980, 1400, 1980 MHz against a 1980 MHz maximum: the bound is
  // 0.75 * 1980 = 1485 MHz, so the 1400 MHz sample is the one low-clock sample.
  const v1::MemberResult r =
      WithClocks({1, 2, 3, 4}, {1980, 1980, 1400, 1980}, {.max_sm_mhz = 1980});
  // Cycles = MHz * 1e3 * ms: 1.98e6, 3.96e6, 4.2e6, 7.92e6.
  ASSERT_EQ(r.sample_cycles_size(), 4);
  EXPECT_EQ(r.sample_cycles(0), 1.98e6);
  EXPECT_EQ(r.sample_cycles(1), 3.96e6);
  EXPECT_EQ(r.sample_cycles(2), 4.2e6);
  EXPECT_EQ(r.sample_cycles(3), 7.92e6);
  EXPECT_EQ(r.sample_sm_mhz(2), 1400);
  const ::ablation::v1::TimingStats& s = r.stats();
  ASSERT_TRUE(s.has_low_clock_samples());
  EXPECT_EQ(s.low_clock_samples(), 1);
  EXPECT_EQ(s.median_sm_mhz(), 1980);  // of 1400, 1980, 1980, 1980
  // Median of the cycles: between 3.96e6 and 4.2e6.
  EXPECT_DOUBLE_EQ(s.median_cycles(), 4.08e6);
  EXPECT_EQ(s.median_ms(), 2.5) << "the time statistics are unchanged";
}

TEST(TimingStats, LowClockFractionIsTheTasks) {
  // 0.5 * 1980 = 990: nothing is below it. Zero means the default, 0.75.
  EXPECT_EQ(WithClocks({1, 2, 3, 4}, {1980, 1980, 1400, 1980},
                       {.max_sm_mhz = 1980, .low_clock_fraction = 0.5})
                .stats()
                .low_clock_samples(),
            0);
  EXPECT_EQ(WithClocks({1, 2, 3, 4}, {1980, 1980, 1400, 1980},
                       {.max_sm_mhz = 1980, .low_clock_fraction = 0})
                .stats()
                .low_clock_samples(),
            1);
}

TEST(TimingStats, UnusableSamplesAreLeftOut) {
  // The second sample's probes ran on different SMs: NaN in both per-sample arrays, and not in
  // the medians or the count.
  const double nan = std::nan("");
  const v1::MemberResult r = WithClocks({1, 2, 3}, {1000, nan, 1500}, {.max_sm_mhz = 1980});
  ASSERT_EQ(r.sample_sm_mhz_size(), 3);
  EXPECT_TRUE(std::isnan(r.sample_sm_mhz(1)));
  EXPECT_TRUE(std::isnan(r.sample_cycles(1)));
  EXPECT_EQ(r.stats().median_sm_mhz(), 1250);
  EXPECT_EQ(r.stats().median_cycles(), (1e6 + 4.5e6) / 2);
  EXPECT_EQ(r.stats().low_clock_samples(), 1);  // 1000 < 1485
}

TEST(TimingStats, NoClockLeavesTheClockStatsUnset) {
  const double nan = std::nan("");
  for (const v1::MemberResult& r :
       {WithClocks({1, 2}, {nan, nan}, {.max_sm_mhz = 1980}), WithClocks({1, 2}, {}, {}),
        WithClocks({1, 2}, {1980}, {.max_sm_mhz = 1980})}) {  // counts differ: not trusted
    EXPECT_EQ(r.sample_cycles_size(), 0);
    EXPECT_EQ(r.sample_sm_mhz_size(), 0);
    EXPECT_FALSE(r.stats().has_median_cycles());
    EXPECT_FALSE(r.stats().has_median_sm_mhz());
    EXPECT_FALSE(r.stats().has_low_clock_samples());
    EXPECT_EQ(r.stats().samples(), 2);
  }
  // Clocks but no known maximum: medians, and no low-clock count.
  const v1::MemberResult r = WithClocks({1, 2}, {1980, 1980}, {});
  EXPECT_EQ(r.stats().median_sm_mhz(), 1980);
  EXPECT_FALSE(r.stats().has_low_clock_samples());
}

TEST(TimingStats, L2ModeAsked) {
  ::ablation::v1::TimingOptions t;
  EXPECT_EQ(protocol::RequestedL2Mode(t), ::ablation::v1::L2_MODE_COLD_ROTATED);
  t.set_flush_l2(true);
  EXPECT_EQ(protocol::RequestedL2Mode(t), ::ablation::v1::L2_MODE_COLD);
  t.set_hot_l2(true);
  EXPECT_EQ(protocol::RequestedL2Mode(t), ::ablation::v1::L2_MODE_HOT);
  t.set_flush_l2(false);
  EXPECT_EQ(protocol::RequestedL2Mode(t), ::ablation::v1::L2_MODE_HOT);
}

TEST(TimingStats, RecomputedStatsReplaceOldOnes) {
  v1::MemberResult r = WithSamples({10, 20});
  r.clear_sample_ms();
  r.add_sample_ms(1);
  r.add_sample_ms(3);
  protocol::SetStatsFromSamples(&r);
  EXPECT_EQ(r.stats().samples(), 2);
  EXPECT_EQ(r.stats().median_ms(), 2);
  EXPECT_EQ(r.stats().max_ms(), 3);
  // Clock statistics that no longer have clocks behind them are cleared too.
  v1::MemberResult c = WithClocks({1, 2}, {1980, 1980}, {.max_sm_mhz = 1980});
  c.clear_sample_cycles();
  c.clear_sample_sm_mhz();
  protocol::SetStatsFromSamples(&c, {.max_sm_mhz = 1980});
  EXPECT_FALSE(c.stats().has_median_sm_mhz());
  EXPECT_FALSE(c.stats().has_low_clock_samples());
}

}  // namespace
}  // namespace ablation::worker
