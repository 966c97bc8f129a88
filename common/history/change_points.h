// Change points over a benchmark series: E-divisive means (Matteson & James, "A Nonparametric
// Approach for Multiple Change Point Analysis of Multivariate Data", JASA 2014; the method of
// MongoDB's signal processing and Apache Otava), with a permutation test for significance and a
// minimum magnitude, so that a shift inside the series' noise is never called.
//
// No Debian package offers E-divisive (R's ecp is not packaged; Otava is Python): this is a small
// O(n^2)-per-split implementation, written for series of nightly medians (tens to hundreds of
// points). Pure functions, no I/O: tested against worked examples in
// tests/common/change_points_test.cc.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace ablation::history {

struct ChangePointOptions {
  /// A split is kept when its permutation p-value is at most this.
  double significance = 0.01;
  /// Permutations per test; the test stops early once the split can no longer be significant.
  int permutations = 199;
  /// Fewest points on either side of a split.
  int min_segment = 2;
  /// Smallest |after / before - 1| called a change, whatever the test says.
  double min_relative_change = 0.01;
  /// And at least this many times the median per-point noise (relative standard error).
  double noise_multiple = 3.0;
  /// The permutations' generator seed: the same series gives the same answer.
  uint64_t seed = 0x5EED;
};

struct ChangePoint {
  int index = 0;               ///< the first point of the new segment
  double before_mean = 0;      ///< mean of the segment before
  double after_mean = 0;       ///< mean of the segment from `index`
  double relative_change = 0;  ///< after_mean / before_mean - 1 (positive: larger values)
  double p_value = 1;
};

/// The E-divisive statistic (alpha = 1) of splitting `x` before `tau` (0 < tau < x.size()):
/// (tau (n - tau) / n) * (2 E|X - Y| - E|X - X'| - E|Y - Y'|), the within-term of a one-point side
/// being 0. Exposed for the worked-example tests.
double DivergenceAt(std::span<const double> x, int tau);

/// The change points of `values` (in order), found by recursive bisection: the best split of a
/// segment is kept when it is significant and large enough, then both sides are searched again.
/// `noise` (optional, one per value) is each point's relative standard error. Sorted by index.
std::vector<ChangePoint> FindChangePoints(std::span<const double> values,
                                          const ChangePointOptions& options = {},
                                          std::span<const double> noise = {});

/// How the newest point stands against the segment it would belong to (the points since the
/// last change point before it): a one-night shift cannot be significant by a permutation test
/// (its p-value is at least 1/n), so the nightly job calls it a *candidate* from its size against
/// the segment's spread and confirms it by a rerun.
struct NewestShift {
  bool candidate = false;      ///< |relative_change| >= threshold
  double baseline = 0;         ///< mean of the segment before the newest point
  double relative_change = 0;  ///< newest / baseline - 1
  double threshold = 0;        ///< max(min_relative_change, noise_multiple x noise, 3 x the
                               ///< segment's relative standard deviation)
  int baseline_points = 0;
};
NewestShift NewestPointShift(std::span<const double> values, std::span<const ChangePoint> changes,
                             const ChangePointOptions& options = {},
                             std::span<const double> noise = {});

}  // namespace ablation::history
