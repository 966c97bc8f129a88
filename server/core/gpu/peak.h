// Clock-normalised throughput: what a row's TFLOPS are per GHz of the clock it ran at, and its
// share of the dense peak of its dtype on its architecture at that clock. A GPU under its power
// cap runs 10-15% below its maximum clock, so a change of clock alone moves TFLOPS; per GHz and
// as a share of the clock-adjusted peak, the figure is about the kernel's work.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "kernels/common/problem.h"

namespace ablation::core {

/// Dense multiply-add throughput of one SM per clock, counted as two operations (FLOP or, for
/// int8, OPS): the tensor cores for bf16, fp16, tf32 and int8, the FP32 pipes (FFMA) for fp32.
/// From the vendor's datasheets, each checked as peak / (SMs x clock):
///   sm_80 (A100: 108 SMs, 1410 MHz): bf16/fp16 2048 (312 TFLOPS), tf32 1024 (156),
///         int8 4096 (624 TOPS), fp32 128 (19.5);
///   sm_90 (H100/H200 SXM: 132 SMs, 1830 MHz for the tensor figures): bf16/fp16 4096 (989.4),
///         tf32 2048 (494.7), int8 4096 x 2 = 8192 (1979 TOPS); fp32 256 (66.9 at 1980 MHz).
/// Unset for an architecture or dtype not in the table (consumer parts of one compute
/// capability differ in their fp32-accumulate rate, so sm_86 and sm_89 are left out rather than
/// guessed).
std::optional<double> DenseOpsPerClockPerSm(std::string_view compute_capability,
                                            kernels::DType dtype);

struct NormalisedThroughput {
  std::optional<double> tflops_per_ghz;
  std::optional<double> peak_tflops;  ///< at the measured clock
  std::optional<double> peak_share;   ///< tflops / peak_tflops
};

/// From a row's TFLOPS (at its median time) and its median effective SM clock in MHz (the
/// probes'; <= 0: unknown), on a device of `sm_count` SMs and `compute_capability` ("9.0").
NormalisedThroughput Normalise(double tflops, double sm_mhz, int sm_count,
                               std::string_view compute_capability, kernels::DType dtype);

/// How far above the clock-adjusted peak a figure may be before it is refused: the median time
/// and the median clock come from the same samples, but not from the same instant.
inline constexpr double kPeakTolerance = 0.02;

/// "" when `n` is at most the clock-adjusted peak (or there is none to compare with), else the
/// sentence that refuses the figure: no kernel computes faster than the hardware can, so a time
/// that says so measured something other than the product (work skipped, a result kept from an
/// earlier launch).
std::string RefuseAbovePeak(double tflops, double sm_mhz, const NormalisedThroughput& n);

}  // namespace ablation::core
