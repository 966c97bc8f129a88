#include "server/core/gpu/peak.h"

namespace ablation::core {

std::optional<double> DenseOpsPerClockPerSm(std::string_view cc, kernels::DType dtype) {
  using kernels::DType;
  if (cc == "8.0") {
    switch (dtype) {
      case DType::kBF16:
      case DType::kFP16:
        return 2048;
      case DType::kTF32:
        return 1024;
      case DType::kINT8:
        return 4096;
      case DType::kFP32:
        return 128;
    }
  }
  if (cc == "9.0") {
    switch (dtype) {
      case DType::kBF16:
      case DType::kFP16:
        return 4096;
      case DType::kTF32:
        return 2048;
      case DType::kINT8:
        return 8192;
      case DType::kFP32:
        return 256;
    }
  }
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

}  // namespace ablation::core
