#include "server/worker/sampling.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

namespace ablation::worker {
namespace {

TEST(Sampling, StatsOfKnownSamples) {
  SampleStats s = ComputeStats({5, 1, 4, 2, 3});
  EXPECT_EQ(s.count, 5);
  EXPECT_DOUBLE_EQ(s.sum_ms, 15);
  EXPECT_DOUBLE_EQ(s.mean_ms, 3);
  EXPECT_DOUBLE_EQ(s.median_ms, 3);
  EXPECT_DOUBLE_EQ(s.min_ms, 1);
  EXPECT_DOUBLE_EQ(s.max_ms, 5);
  EXPECT_DOUBLE_EQ(s.q1_ms, 2);
  EXPECT_DOUBLE_EQ(s.q3_ms, 4);
  EXPECT_NEAR(s.stddev_ms, std::sqrt(2.5), 1e-12);
  EXPECT_NEAR(s.noise, std::sqrt(2.5) / std::sqrt(5.0) / 3.0, 1e-12);
}

TEST(Sampling, QuartilesInterpolate) {
  SampleStats s = ComputeStats({4, 3, 2, 1});
  EXPECT_DOUBLE_EQ(s.median_ms, 2.5);
  EXPECT_DOUBLE_EQ(s.q1_ms, 1.75);
  EXPECT_DOUBLE_EQ(s.q3_ms, 3.25);
}

TEST(Sampling, EmptyAndSingleHaveUnknownNoise) {
  EXPECT_EQ(ComputeStats({}).count, 0);
  EXPECT_TRUE(std::isinf(ComputeStats({}).noise));
  SampleStats one = ComputeStats({2});
  EXPECT_DOUBLE_EQ(one.median_ms, 2);
  EXPECT_DOUBLE_EQ(one.stddev_ms, 0);
  EXPECT_TRUE(std::isinf(one.noise));
  EXPECT_TRUE(std::isinf(RelativeNoise({1})));
}

TEST(Sampling, RunningStatsMatchTwoPass) {
  std::mt19937 rng(1);
  std::normal_distribution<double> d(0.2, 0.01);
  std::vector<double> xs;
  RunningStats r;
  for (int i = 0; i < 1000; ++i) {
    xs.push_back(d(rng));
    r.Add(xs.back());
  }
  SampleStats s = ComputeStats(xs);
  EXPECT_NEAR(r.mean(), s.mean_ms, 1e-12);
  EXPECT_NEAR(std::sqrt(r.variance()), s.stddev_ms, 1e-12);
  EXPECT_NEAR(r.noise(), s.noise, 1e-12);
  EXPECT_NEAR(r.noise(), 0.01 / 0.2 / std::sqrt(1000.0), 2e-4);
}

TEST(Sampling, ResolveOptionsFillsDefaults) {
  SamplingOptions o = ResolveOptions(0, 0, 0, 0, 0, 0, false, 0);
  EXPECT_EQ(o.min_samples, 10);
  EXPECT_DOUBLE_EQ(o.min_seconds, 0.5);
  EXPECT_DOUBLE_EQ(o.max_seconds, 10);
  EXPECT_DOUBLE_EQ(o.target_noise, 0.005);
  EXPECT_EQ(o.warmup_count, 3);
  EXPECT_DOUBLE_EQ(o.warmup_seconds, 0.1);
  EXPECT_FALSE(o.hot_l2);
  EXPECT_EQ(o.max_samples, 100000);
  EXPECT_FALSE(o.flush_l2);
  EXPECT_DOUBLE_EQ(o.low_clock_fraction, 0.75);
  SamplingOptions p = ResolveOptions(20, 1, 3, 0.01, 5, 0.2, true, 50, true, 0.5);
  EXPECT_EQ(p.min_samples, 20);
  EXPECT_DOUBLE_EQ(p.max_seconds, 3);
  EXPECT_TRUE(p.hot_l2);
  EXPECT_EQ(p.max_samples, 50);
  EXPECT_TRUE(p.flush_l2);
  EXPECT_DOUBLE_EQ(p.low_clock_fraction, 0.5);
}

SamplingOptions Opts() {
  SamplingOptions o;
  o.min_samples = 10;
  o.min_seconds = 0.01;  // 10 ms of summed GPU time
  o.max_seconds = 1;
  o.target_noise = 0.005;
  o.max_samples = 1000;
  return o;
}

TEST(Sampling, NeedsMinSamplesEvenWhenQuiet) {
  std::vector<double> xs(9, 5.0);  // 45 ms summed, zero noise, but only 9 samples
  EXPECT_EQ(ShouldStop(xs, Opts()), StopReason::kContinue);
  xs.push_back(5.0);
  EXPECT_EQ(ShouldStop(xs, Opts()), StopReason::kNoiseTarget);
}

TEST(Sampling, NeedsMinSecondsEvenWhenQuiet) {
  // 0.125 is exact in binary, so the sums are exact.
  std::vector<double> xs(20, 0.125);  // 2.5 ms summed < 10 ms
  EXPECT_EQ(ShouldStop(xs, Opts()), StopReason::kContinue);
  xs.resize(80, 0.125);  // 10 ms
  EXPECT_EQ(ShouldStop(xs, Opts()), StopReason::kNoiseTarget);
}

TEST(Sampling, NoisySamplesContinueUntilTheNoiseDrops) {
  // Alternating 1 and 2 ms: stddev ~0.5, mean 1.5; noise = 0.5/1.5/sqrt(n) <= 0.005 needs
  // n >= ~4450, beyond max_samples here, so the time cap ends it (summed 1 s at n ~667).
  std::vector<double> xs;
  RunningStats r;
  StopReason why = StopReason::kContinue;
  while (why == StopReason::kContinue) {
    xs.push_back(xs.size() % 2 ? 2.0 : 1.0);
    r.Add(xs.back());
    why = ShouldStop(r, Opts());
  }
  EXPECT_EQ(why, StopReason::kTimeCap);
  EXPECT_NEAR(r.sum(), 1000, 2);
  // The vector form agrees.
  EXPECT_EQ(ShouldStop(xs, Opts()), StopReason::kTimeCap);
  // A looser target stops it early on noise.
  SamplingOptions loose = Opts();
  loose.target_noise = 0.05;
  EXPECT_EQ(ShouldStop(std::vector<double>(xs.begin(), xs.begin() + 100), loose),
            StopReason::kNoiseTarget);
}

TEST(Sampling, MaxSamplesStops) {
  SamplingOptions o = Opts();
  o.max_samples = 5;
  std::vector<double> xs = {1, 3, 1, 3};
  EXPECT_EQ(ShouldStop(xs, o), StopReason::kContinue);
  xs.push_back(1);
  EXPECT_EQ(ShouldStop(xs, o), StopReason::kMaxSamples);
}

TEST(Sampling, TimeCapWinsOverMinimums) {
  // One sample longer than the cap: stop, even though min_samples is not met.
  EXPECT_EQ(ShouldStop(std::vector<double>{1500.0}, Opts()), StopReason::kTimeCap);
}

TEST(Sampling, WallCapStopsTinyKernels) {
  std::vector<double> xs = {0.001, 0.002, 0.001};
  EXPECT_EQ(ShouldStop(xs, Opts(), 1.5), StopReason::kContinue);
  EXPECT_EQ(ShouldStop(xs, Opts(), 2.0), StopReason::kWallCap);
}

TEST(Sampling, ReasonsHaveNames) {
  EXPECT_EQ(ToString(StopReason::kNoiseTarget), "noise target reached");
  EXPECT_EQ(ToString(StopReason::kMaxSamples), "max_samples");
}

}  // namespace
}  // namespace ablation::worker
