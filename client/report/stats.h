// The statistics behind `report` and `compare`, on raw sample times (ms). Pure and deterministic.
//
// report: the change of one rung against another is the ratio of the medians of their sample
// times (speed change = median_prev / median_this - 1, positive = faster), with a 95% percentile
// bootstrap confidence interval: both sample sets are resampled independently with replacement,
// kBootstrapResamples times, from a generator seeded by the row (same data, same interval).
// "Within noise" means the interval contains 0. Medians, because GPU timings have a long right
// tail (clock dips, preemption) that moves a mean but not a median.
//
// compare: Welch's unequal-variance t-test on the logarithms of the sample times of the two runs
// (so the tested quantity is the ratio of geometric means, and the test does not assume equal
// variances). Two-sided p-value from Student's t with the Welch-Satterthwaite degrees of freedom;
// 95% interval of the time change exp(diff +- t_0.975 * se) - 1.
//
// Both treat samples as independent draws. Consecutive GPU timings are mildly autocorrelated, so
// the intervals are somewhat narrow; the --threshold of compare exists for that reason too.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace ablation::client::report {

inline constexpr int kBootstrapResamples = 2000;

double Median(std::vector<double> values);

/// Speed change of `b` against `a` (a: the previous rung).
struct Change {
  double estimate = 0;        ///< median(a) / median(b) - 1: +0.10 means b is 10% faster
  bool has_interval = false;  ///< false with fewer than 2 samples on either side
  double low = 0;             ///< 95% interval
  double high = 0;
  bool within_noise() const { return has_interval && low <= 0 && high >= 0; }
};

/// From raw samples; with fewer than 2 on a side only the estimate (from the medians) is set.
Change SpeedChange(const std::vector<double>& a_ms, const std::vector<double>& b_ms,
                   std::uint64_t seed, int resamples = kBootstrapResamples);
/// From stored medians alone (no samples): estimate only.
Change SpeedChangeFromMedians(double a_median_ms, double b_median_ms);

/// A seed from a text key (FNV-1a), so each row's interval is reproducible on its own.
std::uint64_t SeedFor(std::string_view key);

/// Welch's t-test on log times: b against a.
struct WelchResult {
  bool valid = false;      ///< false with fewer than 2 samples on a side
  double time_change = 0;  ///< exp(mean log b - mean log a) - 1: +0.05 means b takes 5% longer
  double low = 0;          ///< 95% interval of time_change
  double high = 0;
  double t = 0;
  double df = 0;
  double p = 1;  ///< two-sided
};
WelchResult WelchLogT(const std::vector<double>& a_ms, const std::vector<double>& b_ms);

/// Student's t distribution: P(T <= t) with `df` degrees of freedom (df > 0), and its inverse.
double StudentTCdf(double t, double df);
double StudentTQuantile(double p, double df);

}  // namespace ablation::client::report
