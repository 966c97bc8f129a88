#include "server/protocol/sampling.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace ablation::protocol {

SamplingOptions ResolveOptions(int min_samples, double min_seconds, double max_seconds,
                               double target_noise, int warmup_count, double warmup_seconds,
                               bool hot_l2, int max_samples, bool flush_l2,
                               double low_clock_fraction) {
  SamplingOptions o;
  if (min_samples > 0) o.min_samples = min_samples;
  if (min_seconds > 0) o.min_seconds = min_seconds;
  if (max_seconds > 0) o.max_seconds = max_seconds;
  if (target_noise > 0) o.target_noise = target_noise;
  if (warmup_count > 0) o.warmup_count = warmup_count;
  if (warmup_seconds > 0) o.warmup_seconds = warmup_seconds;
  o.hot_l2 = hot_l2;
  if (max_samples > 0) o.max_samples = max_samples;
  o.flush_l2 = flush_l2;
  if (low_clock_fraction > 0) o.low_clock_fraction = low_clock_fraction;
  return o;
}

void RunningStats::Add(double x) {
  ++n_;
  sum_ += x;
  double d = x - mean_;
  mean_ += d / double(n_);
  m2_ += d * (x - mean_);
}

double RunningStats::noise() const {
  if (n_ < 2 || mean() <= 0) return std::numeric_limits<double>::infinity();
  return std::sqrt(variance()) / std::sqrt(double(n_)) / mean();
}

SampleStats ComputeStats(const std::vector<double>& samples_ms) {
  SampleStats s;
  s.noise = std::numeric_limits<double>::infinity();
  if (samples_ms.empty()) return s;
  RunningStats r;
  for (double x : samples_ms) r.Add(x);
  std::vector<double> sorted = samples_ms;
  std::sort(sorted.begin(), sorted.end());
  s.count = r.count();
  s.sum_ms = r.sum();
  s.mean_ms = r.mean();
  s.stddev_ms = std::sqrt(r.variance());
  s.min_ms = sorted.front();
  s.max_ms = sorted.back();
  s.median_ms = Quantile(sorted, 0.5);
  s.q1_ms = Quantile(sorted, 0.25);
  s.q3_ms = Quantile(sorted, 0.75);
  s.noise = r.noise();
  return s;
}

double RelativeNoise(const std::vector<double>& samples_ms) {
  RunningStats r;
  for (double x : samples_ms) r.Add(x);
  return r.noise();
}

}  // namespace ablation::protocol
