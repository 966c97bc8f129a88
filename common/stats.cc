#include "common/stats.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace ablation::common {

double Quantile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return std::numeric_limits<double>::quiet_NaN();
  q = std::clamp(q, 0.0, 1.0);
  const double pos = q * double(sorted.size() - 1);
  const size_t lo = size_t(std::floor(pos));
  const size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - double(lo));
}

double Median(std::vector<double> values) {
  if (values.empty()) return std::numeric_limits<double>::quiet_NaN();
  const size_t n = values.size();
  std::nth_element(values.begin(), values.begin() + long(n / 2), values.end());
  const double hi = values[n / 2];
  if (n % 2 == 1) return hi;
  const double lo = *std::max_element(values.begin(), values.begin() + long(n / 2));
  return (lo + hi) / 2;
}

}  // namespace ablation::common
