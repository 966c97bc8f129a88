// Summary statistics of a measurement's sample times.
#pragma once

#include <vector>

namespace ablation::core {

struct SampleStats {
  double median_ms = 0;
  double mean_ms = 0;
  double stddev_ms = 0;  ///< sample standard deviation (n - 1)
  double min_ms = 0;
  double max_ms = 0;
  double q1_ms = 0;  ///< first quartile, linear interpolation between order statistics
  double q3_ms = 0;
  int samples = 0;
  double noise = 0;  ///< relative standard error of the mean: stddev / sqrt(n) / mean
  double total_seconds = 0;
};

/// Summarises sample times in milliseconds. An empty input gives all zeros.
SampleStats Summarize(const std::vector<double>& sample_ms);

/// Quantile q in [0, 1] of sorted values, linear interpolation (type 7).
double Quantile(const std::vector<double>& sorted, double q);

/// TFLOPS of a GEMM of flops operations taking `ms` milliseconds.
double Tflops(double flops, double ms);

}  // namespace ablation::core
