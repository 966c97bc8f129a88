// The statistics the daemon, the worker and the client all take of timing samples: one median and
// one quantile definition, so that a row's median, a window's clock and a report's figure are the
// same function of the same numbers wherever they are computed.
#pragma once

#include <vector>

namespace ablation::common {

/// The type-7 quantile (linear interpolation between order statistics; R's default and NumPy's)
/// of `sorted` (ascending) at q, q clamped to [0, 1]. NaN when `sorted` is empty.
double Quantile(const std::vector<double>& sorted, double q);

/// The median of `values` in any order (the mean of the two middle ones for an even count). NaN
/// when empty. Linear time: it partially orders its own copy.
double Median(std::vector<double> values);

}  // namespace ablation::common
