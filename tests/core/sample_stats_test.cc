#include "server/core/sample_stats.h"

#include <cmath>

#include <gtest/gtest.h>

namespace ablation::core {
namespace {

TEST(Summarize, MatchesHandComputedValues) {
  SampleStats s = Summarize({4, 1, 3, 2, 5});
  EXPECT_EQ(s.samples, 5);
  EXPECT_DOUBLE_EQ(s.median_ms, 3);
  EXPECT_DOUBLE_EQ(s.mean_ms, 3);
  EXPECT_DOUBLE_EQ(s.min_ms, 1);
  EXPECT_DOUBLE_EQ(s.max_ms, 5);
  EXPECT_DOUBLE_EQ(s.q1_ms, 2);
  EXPECT_DOUBLE_EQ(s.q3_ms, 4);
  EXPECT_NEAR(s.stddev_ms, std::sqrt(2.5), 1e-12);
  EXPECT_NEAR(s.noise, std::sqrt(2.5) / std::sqrt(5.0) / 3.0, 1e-12);
  EXPECT_NEAR(s.total_seconds, 0.015, 1e-12);
}

TEST(Summarize, EvenCountInterpolatesTheMedian) {
  SampleStats s = Summarize({1, 2, 3, 10});
  EXPECT_DOUBLE_EQ(s.median_ms, 2.5);
  EXPECT_DOUBLE_EQ(s.q1_ms, 1.75);
}

TEST(Summarize, EmptyAndSingle) {
  EXPECT_EQ(Summarize({}).samples, 0);
  SampleStats one = Summarize({2});
  EXPECT_DOUBLE_EQ(one.median_ms, 2);
  EXPECT_DOUBLE_EQ(one.stddev_ms, 0);
}

TEST(Tflops, FromFlopsAndMilliseconds) {
  // 4096^3 GEMM in 0.2 ms is 687.2 TFLOPS.
  EXPECT_NEAR(Tflops(2.0 * 4096.0 * 4096.0 * 4096.0, 0.2), 687.19, 0.01);
  EXPECT_EQ(Tflops(1e12, 0), 0);
}

}  // namespace
}  // namespace ablation::core
