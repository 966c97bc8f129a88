#include "server/core/gpu/peak.h"

#include <cstdio>

namespace ablation::core {

namespace {

// The table of peak.h, one row per architecture and dtype.
struct PeakRow {
  std::string_view compute_capability;
  kernels::DType dtype;
  double ops_per_clock_per_sm;
};
constexpr PeakRow kPeaks[] = {
    {"8.0", kernels::DType::kBF16, 2048}, {"8.0", kernels::DType::kFP16, 2048},
    {"8.0", kernels::DType::kTF32, 1024}, {"8.0", kernels::DType::kINT8, 4096},
    {"8.0", kernels::DType::kFP32, 128},  {"9.0", kernels::DType::kBF16, 4096},
    {"9.0", kernels::DType::kFP16, 4096}, {"9.0", kernels::DType::kTF32, 2048},
    {"9.0", kernels::DType::kINT8, 8192}, {"9.0", kernels::DType::kFP32, 256},
    {"9.0", kernels::DType::kFP8, 8192},
};

}  // namespace

std::optional<double> DenseOpsPerClockPerSm(std::string_view cc, kernels::DType dtype) {
  for (const PeakRow& row : kPeaks)
    if (row.compute_capability == cc && row.dtype == dtype) return row.ops_per_clock_per_sm;
  return std::nullopt;
}

NormalisedThroughput Normalise(double tflops, double sm_mhz, int sm_count,
                               std::string_view compute_capability, kernels::DType dtype) {
  NormalisedThroughput out;
  if (!(sm_mhz > 0) || !(tflops > 0)) return out;
  out.tflops_per_ghz = tflops / (sm_mhz / 1e3);
  const std::optional<double> per_clock = DenseOpsPerClockPerSm(compute_capability, dtype);
  if (!per_clock || sm_count <= 0) return out;
  out.peak_tflops = *per_clock * double(sm_count) * sm_mhz * 1e6 / 1e12;
  out.peak_share = tflops / *out.peak_tflops;
  return out;
}

std::string RefuseAbovePeak(double tflops, double sm_mhz, const NormalisedThroughput& n) {
  if (!n.peak_share || !n.peak_tflops || *n.peak_share <= 1 + kPeakTolerance) return "";
  char buf[320];
  std::snprintf(buf, sizeof buf,
                "refused: %.1f TFLOPS is %.0f%% of the dense peak at the measured clock (%.1f "
                "TFLOPS at %.0f MHz); no kernel computes faster than the hardware, so the timed "
                "launches did not all compute the product",
                tflops, 100 * *n.peak_share, *n.peak_tflops, sm_mhz);
  return buf;
}

}  // namespace ablation::core
