#include "kernels/common/problem.h"

namespace ablation::kernels {

// Words of an enum by a switch rather than a table: the compiler names any value left out
// (-Wswitch). Such switches look alike across the tree; what they map differs.
std::string_view ToString(DType d) {
  switch (d) {
    case DType::kBF16:
      return "bf16";
    case DType::kFP16:
      return "fp16";
    case DType::kFP32:
      return "fp32";
    case DType::kTF32:
      return "tf32";
    case DType::kINT8:
      return "int8";
    case DType::kFP8:
      return "fp8";
  }
  return "unknown";
}

std::optional<DType> ParseDType(std::string_view s) {
  for (DType d : kAllDTypes) {
    if (s == ToString(d)) return d;
  }
  return std::nullopt;
}

int ElementBytes(DType d) {
  switch (d) {
    case DType::kBF16:
    case DType::kFP16:
      return 2;
    case DType::kFP32:
    case DType::kTF32:
      return 4;
    case DType::kINT8:
    case DType::kFP8:
      return 1;
  }
  return 0;
}

int OutputBytes(DType d) {
  switch (d) {
    case DType::kBF16:
    case DType::kFP16:
    case DType::kFP8:  // bf16 C
      return 2;
    case DType::kFP32:
    case DType::kTF32:
    case DType::kINT8:  // int32 accumulators are written as they are
      return 4;
  }
  return 0;
}

}  // namespace ablation::kernels
