// What a window's reply carries beside its samples, computed from the reply's own samples: each
// variant's statistics (MemberResult.stats, ComputeStats of sampling.h), each sample's SM cycles
// and clock (clocks.h), the window's clock and the L2 mode. The real worker and its test double
// both fill them here, and the daemon pools the short windows of a burst with the same functions,
// so nothing else computes them (server/protocol/README.md).
#pragma once

#include <vector>

#include "ablation/v1/worker.pb.h"

namespace ablation::protocol {

/// The mode the task's options ask for: hot_l2 L2_MODE_HOT, flush_l2 L2_MODE_COLD, else
/// L2_MODE_COLD_ROTATED (the worker's RequestedL2Method, sample_plan.h, says the same); the real
/// worker reports L2_MODE_COLD instead of L2_MODE_COLD_ROTATED where the copies do not fit.
::ablation::v1::L2Mode RequestedL2Mode(const ::ablation::v1::TimingOptions& timing);

/// Sets result->sample_sm_mhz to `sm_mhz` (one per sample, NaN where that sample's probes were
/// unusable) and result->sample_cycles to SampleCycles(sample_ms[i], sm_mhz[i]) (NaN likewise).
/// Both are left empty when no sample has a clock, or when the counts differ from sample_ms.
void SetSampleClocks(::ablation::worker::v1::MemberResult* result,
                     const std::vector<double>& sm_mhz);

/// What low-clock samples are measured against: the device's maximum SM clock (cudaDevAttr-
/// ClockRate; <= 0: unknown) and TimingOptions.low_clock_fraction (<= 0: 0.75).
struct ClockBounds {
  double max_sm_mhz = 0;
  double low_clock_fraction = 0;
};

/// Sets result->stats from result->sample_ms: median, mean, stddev, min, max, q1, q3 (ms), the
/// sample count, the noise (0 where it is not finite: fewer than two samples, or a mean that is
/// not positive) and total_seconds (the sum of the samples, in seconds). From sample_cycles and
/// sample_sm_mhz (their finite entries): median_cycles and median_sm_mhz, and low_clock_samples
/// (samples below clocks.low_clock_fraction * clocks.max_sm_mhz), each unset where no sample has
/// a clock, low_clock_samples also where the maximum is unknown.
void SetStatsFromSamples(::ablation::worker::v1::MemberResult* result,
                         const ClockBounds& clocks = {});

/// Appends `more`'s samples (times, cycles, clocks) to `into`'s and recomputes its statistics:
/// the short windows of one burst round pooled into one row. Cycles and clocks stay aligned with
/// the times (NaN where a part had none).
void AppendSamples(const ::ablation::worker::v1::MemberResult& more,
                   ::ablation::worker::v1::MemberResult* into, const ClockBounds& clocks = {});

/// Sets the window's totals from its members' samples: cycles (the fewest samples of a member
/// with samples), gpu_seconds (their sum) and sm_mhz (the GPU-time-weighted mean of the finite
/// clocks; 0 where none).
void SetWindowTotals(::ablation::worker::v1::MeasureResult* result);

}  // namespace ablation::protocol
