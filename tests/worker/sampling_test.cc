#include "server/protocol/sampling.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

namespace ablation::worker {
namespace {

TEST(Sampling, StatsOfKnownSamples) {
  protocol::SampleStats s = protocol::ComputeStats({5, 1, 4, 2, 3});
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
  protocol::SampleStats s = protocol::ComputeStats({4, 3, 2, 1});
  EXPECT_DOUBLE_EQ(s.median_ms, 2.5);
  EXPECT_DOUBLE_EQ(s.q1_ms, 1.75);
  EXPECT_DOUBLE_EQ(s.q3_ms, 3.25);
}

TEST(Sampling, EmptyAndSingleHaveUnknownNoise) {
  EXPECT_EQ(protocol::ComputeStats({}).count, 0);
  EXPECT_TRUE(std::isinf(protocol::ComputeStats({}).noise));
  protocol::SampleStats one = protocol::ComputeStats({2});
  EXPECT_DOUBLE_EQ(one.median_ms, 2);
  EXPECT_DOUBLE_EQ(one.stddev_ms, 0);
  EXPECT_TRUE(std::isinf(one.noise));
  EXPECT_TRUE(std::isinf(protocol::RelativeNoise({1})));
}

TEST(Sampling, RunningStatsMatchTwoPass) {
  std::mt19937 rng(1);
  std::normal_distribution<double> d(0.2, 0.01);
  std::vector<double> xs;
  protocol::RunningStats r;
  for (int i = 0; i < 1000; ++i) {
    xs.push_back(d(rng));
    r.Add(xs.back());
  }
  protocol::SampleStats s = protocol::ComputeStats(xs);
  EXPECT_NEAR(r.mean(), s.mean_ms, 1e-12);
  EXPECT_NEAR(std::sqrt(r.variance()), s.stddev_ms, 1e-12);
  EXPECT_NEAR(r.noise(), s.noise, 1e-12);
  EXPECT_NEAR(r.noise(), 0.01 / 0.2 / std::sqrt(1000.0), 2e-4);
}

TEST(Sampling, ResolveOptionsFillsDefaults) {
  protocol::SamplingOptions o = protocol::ResolveOptions(0, 0, 0, 0, 0, 0, false, 0);
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
  protocol::SamplingOptions p =
      protocol::ResolveOptions(20, 1, 3, 0.01, 5, 0.2, true, 50, true, 0.5);
  EXPECT_EQ(p.min_samples, 20);
  EXPECT_DOUBLE_EQ(p.max_seconds, 3);
  EXPECT_TRUE(p.hot_l2);
  EXPECT_EQ(p.max_samples, 50);
  EXPECT_TRUE(p.flush_l2);
  EXPECT_DOUBLE_EQ(p.low_clock_fraction, 0.5);
}

}  // namespace
}  // namespace ablation::worker
