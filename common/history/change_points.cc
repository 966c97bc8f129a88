#include "common/history/change_points.h"

#include <algorithm>
#include <cmath>
#include <random>

#include "common/stats.h"

namespace ablation::history {
namespace {

// Q(tau) for every tau of `y` in [lo, hi], from the row sums of the distance matrix: O(n^2) for
// all splits together, so that a permutation test over hundreds of shuffles stays cheap.
struct BestSplit {
  int tau = -1;
  double q = 0;
};

BestSplit Best(std::span<const double> y, int min_segment, std::vector<double>& row_left,
               std::vector<double>& row_right) {
  const int n = static_cast<int>(y.size());
  BestSplit best;
  if (n < 2 * min_segment) return best;
  row_left.assign(size_t(n), 0.0);
  row_right.assign(size_t(n), 0.0);
  double total = 0;
  for (int i = 0; i < n; ++i) {
    for (int j = i + 1; j < n; ++j) {
      const double d = std::fabs(y[size_t(i)] - y[size_t(j)]);
      row_right[size_t(i)] += d;
      row_left[size_t(j)] += d;
      total += d;
    }
  }
  // wl(tau): pairs both left of tau; wr(tau): pairs both at or right of tau.
  double wl = 0;
  double wr = total;
  for (int tau = 1; tau < n; ++tau) {
    wl += row_left[size_t(tau - 1)];
    wr -= row_right[size_t(tau - 1)];
    if (tau < min_segment || n - tau < min_segment) continue;
    const double a = tau, b = n - tau;
    const double cross = total - wl - wr;
    const double within_left = tau > 1 ? wl / (a * (a - 1) / 2) : 0.0;
    const double within_right = n - tau > 1 ? wr / (b * (b - 1) / 2) : 0.0;
    const double q = (a * b / n) * (2 * cross / (a * b) - within_left - within_right);
    if (best.tau < 0 || q > best.q) best = {tau, q};
  }
  return best;
}

double Mean(std::span<const double> y) {
  double s = 0;
  for (double v : y) s += v;
  return y.empty() ? 0 : s / double(y.size());
}

double Relative(double before, double after) { return before != 0 ? after / before - 1 : 0; }

class Search {
 public:
  Search(std::span<const double> values, const ChangePointOptions& options, double noise_floor)
      : values_(values), options_(options), floor_(noise_floor), rng_(options.seed) {}

  void Segment(int begin, int end, std::vector<ChangePoint>& out) {
    const auto y = values_.subspan(size_t(begin), size_t(end - begin));
    const BestSplit best = Best(y, std::max(1, options_.min_segment), left_, right_);
    if (best.tau < 0 || best.q <= 0) return;
    const double before = Mean(y.first(size_t(best.tau)));
    const double after = Mean(y.subspan(size_t(best.tau)));
    const double change = Relative(before, after);
    // The magnitude first: it is cheap, and a shift inside the noise is never called.
    if (std::fabs(change) < floor_) return;
    const double p = PValue(y, best.q);
    if (p > options_.significance) return;
    out.push_back({begin + best.tau, before, after, change, p});
    Segment(begin, begin + best.tau, out);
    Segment(begin + best.tau, end, out);
  }

 private:
  // (1 + shuffles whose best split is at least as strong) / (1 + shuffles). Stops as soon as
  // the count rules significance out: a series without a change costs a few shuffles, not all.
  double PValue(std::span<const double> y, double observed) {
    const int r = std::max(1, options_.permutations);
    const double limit = options_.significance * (r + 1);
    std::vector<double> shuffled(y.begin(), y.end());
    int at_least = 0;
    for (int i = 0; i < r; ++i) {
      std::shuffle(shuffled.begin(), shuffled.end(), rng_);
      if (Best(shuffled, std::max(1, options_.min_segment), left_, right_).q >= observed) {
        if (++at_least + 1 > limit) return double(at_least + 1) / double(i + 2);
      }
    }
    return double(at_least + 1) / double(r + 1);
  }

  std::span<const double> values_;
  const ChangePointOptions& options_;
  double floor_;
  std::mt19937_64 rng_;
  std::vector<double> left_, right_;
};

double NoiseFloor(const ChangePointOptions& options, std::span<const double> noise) {
  // No noise known: none (common::Median of nothing is NaN).
  const double median_noise =
      noise.empty() ? 0 : common::Median(std::vector<double>(noise.begin(), noise.end()));
  return std::max(options.min_relative_change, options.noise_multiple * median_noise);
}

}  // namespace

double DivergenceAt(std::span<const double> x, int tau) {
  const int n = static_cast<int>(x.size());
  if (tau <= 0 || tau >= n) return 0;
  double cross = 0, wl = 0, wr = 0;
  for (int i = 0; i < n; ++i) {
    for (int j = i + 1; j < n; ++j) {
      const double d = std::fabs(x[size_t(i)] - x[size_t(j)]);
      if (j < tau) {
        wl += d;
      } else if (i >= tau) {
        wr += d;
      } else {
        cross += d;
      }
    }
  }
  const double a = tau, b = n - tau;
  const double within_left = tau > 1 ? wl / (a * (a - 1) / 2) : 0.0;
  const double within_right = n - tau > 1 ? wr / (b * (b - 1) / 2) : 0.0;
  return (a * b / n) * (2 * cross / (a * b) - within_left - within_right);
}

std::vector<ChangePoint> FindChangePoints(std::span<const double> values,
                                          const ChangePointOptions& options,
                                          std::span<const double> noise) {
  std::vector<ChangePoint> out;
  Search search(values, options, NoiseFloor(options, noise));
  search.Segment(0, static_cast<int>(values.size()), out);
  std::sort(out.begin(), out.end(),
            [](const ChangePoint& a, const ChangePoint& b) { return a.index < b.index; });
  // Report each change against its neighbours in the final segmentation, not the larger
  // segment it was found in.
  for (size_t i = 0; i < out.size(); ++i) {
    const int begin = i == 0 ? 0 : out[i - 1].index;
    const int end = i + 1 == out.size() ? static_cast<int>(values.size()) : out[i + 1].index;
    out[i].before_mean = Mean(values.subspan(size_t(begin), size_t(out[i].index - begin)));
    out[i].after_mean = Mean(values.subspan(size_t(out[i].index), size_t(end - out[i].index)));
    out[i].relative_change = Relative(out[i].before_mean, out[i].after_mean);
  }
  return out;
}

NewestShift NewestPointShift(std::span<const double> values, std::span<const ChangePoint> changes,
                             const ChangePointOptions& options, std::span<const double> noise) {
  NewestShift shift;
  const int n = static_cast<int>(values.size());
  if (n < 2) return shift;
  int begin = 0;
  for (const ChangePoint& c : changes) {
    if (c.index < n - 1) begin = std::max(begin, c.index);
  }
  const auto segment = values.subspan(size_t(begin), size_t(n - 1 - begin));
  shift.baseline = Mean(segment);
  shift.baseline_points = static_cast<int>(segment.size());
  shift.relative_change = Relative(shift.baseline, values[size_t(n - 1)]);
  double spread = 0;
  if (segment.size() > 1 && shift.baseline != 0) {
    double ss = 0;
    for (double v : segment) ss += (v - shift.baseline) * (v - shift.baseline);
    spread = std::sqrt(ss / double(segment.size() - 1)) / std::fabs(shift.baseline);
  }
  shift.threshold = std::max(NoiseFloor(options, noise), 3 * spread);
  shift.candidate = std::fabs(shift.relative_change) >= shift.threshold;
  return shift;
}

}  // namespace ablation::history
