#include "server/protocol/clocks.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "server/protocol/sampling.h"

#include "common/stats.h"

namespace ablation::protocol {

double EffectiveSmMhz(const ClockProbe& before, const ClockProbe& after) {
  constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  if (before.smid != after.smid) return kNaN;
  if (after.timer_ns <= before.timer_ns || after.clock <= before.clock) return kNaN;
  // Cycles per nanosecond are GHz; a thousand times that is MHz.
  return 1e3 * double(after.clock - before.clock) / double(after.timer_ns - before.timer_ns);
}

double SampleCycles(double sample_ms, double sm_mhz) { return sm_mhz * 1e3 * sample_ms; }

ClockStats ComputeClockStats(const std::vector<double>& cycles, const std::vector<double>& sm_mhz,
                             double max_sm_mhz, double low_clock_fraction) {
  ClockStats s;
  std::vector<double> c, f;
  const size_t n = std::min(cycles.size(), sm_mhz.size());
  for (size_t i = 0; i < n; ++i) {
    if (!std::isfinite(cycles[i]) || !std::isfinite(sm_mhz[i])) continue;
    c.push_back(cycles[i]);
    f.push_back(sm_mhz[i]);
  }
  s.usable = int64_t(c.size());
  if (c.empty()) return s;
  if (max_sm_mhz > 0) {
    const double fraction = low_clock_fraction > 0 ? low_clock_fraction : kDefaultLowClockFraction;
    const double bound = fraction * max_sm_mhz;
    s.low_clock_samples = std::count_if(f.begin(), f.end(), [&](double x) { return x < bound; });
  }
  s.median_cycles = common::Median(std::move(c));
  s.median_sm_mhz = common::Median(std::move(f));
  return s;
}

}  // namespace ablation::protocol
