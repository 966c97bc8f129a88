#include "server/core/sample_stats.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace ablation::core {

double Quantile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  double pos = q * double(sorted.size() - 1);
  size_t lo = size_t(std::floor(pos));
  size_t hi = std::min(lo + 1, sorted.size() - 1);
  double frac = pos - double(lo);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * frac;
}

SampleStats Summarize(const std::vector<double>& sample_ms) {
  SampleStats s;
  if (sample_ms.empty()) return s;
  std::vector<double> sorted = sample_ms;
  std::sort(sorted.begin(), sorted.end());
  const double n = double(sorted.size());
  const double sum = std::accumulate(sorted.begin(), sorted.end(), 0.0);
  s.samples = int(sorted.size());
  s.mean_ms = sum / n;
  double ss = 0;
  for (double x : sorted) ss += (x - s.mean_ms) * (x - s.mean_ms);
  s.stddev_ms = sorted.size() > 1 ? std::sqrt(ss / (n - 1)) : 0.0;
  s.min_ms = sorted.front();
  s.max_ms = sorted.back();
  s.median_ms = Quantile(sorted, 0.5);
  s.q1_ms = Quantile(sorted, 0.25);
  s.q3_ms = Quantile(sorted, 0.75);
  s.noise = s.mean_ms > 0 ? s.stddev_ms / std::sqrt(n) / s.mean_ms : 0.0;
  s.total_seconds = sum / 1e3;
  return s;
}

double Tflops(double flops, double ms) { return ms > 0 ? flops / (ms * 1e-3) / 1e12 : 0.0; }

}  // namespace ablation::core
