// Clock-independent time: what the GPU's own counters say about a sample. Around each sample a
// one-thread probe kernel reads the SM cycle counter (%clock64), the global nanosecond timer
// (%globaltimer) and the SM it ran on (%smid); the pair's ratio is the SM clock the sample ran
// at, and that clock times the sample's event time is the SM cycles it took, a number that a
// power cap or a thermal slowdown does not move. Pure functions (no CUDA), so that the worker,
// its test double and the CPU tests compute them alike.
#pragma once

#include <cstdint>
#include <vector>

namespace ablation::protocol {

/// Below this fraction of the device's maximum SM clock a sample counts as low-clock, where the
/// task leaves TimingOptions.low_clock_fraction unset (0). nvbench flags throttling at the same.
inline constexpr double kDefaultLowClockFraction = 0.75;

/// What one probe kernel wrote. The layout is shared with the kernel (timing_kernels.cu).
struct ClockProbe {
  uint64_t clock = 0;     ///< %clock64 of the SM the probe ran on
  uint64_t timer_ns = 0;  ///< %globaltimer, read just before `clock`, on a tick of the timer
  uint32_t smid = 0;      ///< %smid
  uint32_t unused = 0;
};

/// The effective SM clock in MHz between two probes: clock delta / timer delta. NaN when the pair
/// is unusable: taken on different SMs (each SM's %clock64 counts on its own, from its own
/// origin) or with a timer or clock that did not advance.
double EffectiveSmMhz(const ClockProbe& before, const ClockProbe& after);

/// Elapsed SM cycles of a sample of `sample_ms` at `sm_mhz`: sm_mhz * 1e6 * sample_ms * 1e-3.
double SampleCycles(double sample_ms, double sm_mhz);

/// Statistics of the samples' clocks; only finite entries count (NaN marks an unusable sample).
struct ClockStats {
  int64_t usable = 0;  ///< samples with a clock; the rest are unset
  double median_cycles = 0;
  double median_sm_mhz = 0;
  /// Usable samples whose clock is below fraction * max_sm_mhz; -1 when the maximum is unknown.
  int64_t low_clock_samples = -1;
};

/// `cycles` and `sm_mhz` are per sample (same length). `low_clock_fraction` <= 0 means
/// kDefaultLowClockFraction; `max_sm_mhz` <= 0 means unknown.
ClockStats ComputeClockStats(const std::vector<double>& cycles, const std::vector<double>& sm_mhz,
                             double max_sm_mhz, double low_clock_fraction);

}  // namespace ablation::protocol
