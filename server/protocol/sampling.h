// The statistics of a timed window's samples, as pure functions of them, so that they are tested
// without a GPU. The reply's statistics come from here (window_stats.h),
// in the worker and in its test double alike.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/stats.h"

namespace ablation::protocol {

/// The timing options with every default resolved (the proto's 0 / false mean "default"). A
/// window ends on its span and cycles (sample_plan.h); of these the worker uses the warm-up's
/// (max_seconds bounds it), the L2's and the low-clock fraction.
struct SamplingOptions {
  int min_samples = 10;
  double min_seconds = 0.5;
  double max_seconds = 10;
  double target_noise = 0.005;
  int warmup_count = 3;
  double warmup_seconds = 0.1;
  bool hot_l2 = false;
  int max_samples = 100000;
  bool flush_l2 = false;             ///< L2 cold by a flush per sample, not by rotation
  double low_clock_fraction = 0.75;  ///< kDefaultLowClockFraction (clocks.h)
};

/// Fills unset (zero or negative) fields with the defaults above; the daemon normally did so
/// already, but the worker must never loop forever on a zero max_samples/max_seconds.
SamplingOptions ResolveOptions(int min_samples, double min_seconds, double max_seconds,
                               double target_noise, int warmup_count, double warmup_seconds,
                               bool hot_l2, int max_samples, bool flush_l2 = false,
                               double low_clock_fraction = 0);

struct SampleStats {
  int64_t count = 0;
  double sum_ms = 0;
  double mean_ms = 0;
  double stddev_ms = 0;  ///< sample standard deviation (n - 1); 0 for fewer than two samples
  double min_ms = 0;
  double max_ms = 0;
  double median_ms = 0;
  double q1_ms = 0;  ///< quartiles by linear interpolation between order statistics
  double q3_ms = 0;
  /// Relative standard error of the mean: stddev / sqrt(n) / mean. +inf for fewer than two
  /// samples (nothing is known about the noise yet) or a non-positive mean.
  double noise = 0;
};

/// Statistics of the samples (any order). All zero (noise +inf) when empty.
SampleStats ComputeStats(const std::vector<double>& samples_ms);

/// Relative standard error of the mean of the samples (see SampleStats::noise).
double RelativeNoise(const std::vector<double>& samples_ms);

/// Quantile q in [0, 1] of sorted values, by linear interpolation (the R-7 / NumPy default):
/// common/stats.h's, the daemon's and the client's too.
using common::Quantile;

/// Running count, sum and variance (Welford), in one pass over the samples.
class RunningStats {
 public:
  void Add(double x);
  int64_t count() const { return n_; }
  double sum() const { return sum_; }
  double mean() const { return n_ ? mean_ : 0; }
  /// Sample variance (n - 1); 0 for fewer than two samples.
  double variance() const { return n_ > 1 ? m2_ / double(n_ - 1) : 0; }
  /// See SampleStats::noise.
  double noise() const;

 private:
  int64_t n_ = 0;
  double sum_ = 0;
  double mean_ = 0;
  double m2_ = 0;
};

}  // namespace ablation::protocol
