// Problem description shared by every kernel family. Host-only: no CUDA headers here, so the
// daemon can reason about problems without linking CUDA.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace ablation::kernels {

/// Input element type of a GEMM. Accumulation: fp32 for bf16/fp16/tf32/fp32, int32 for int8.
enum class DType { kBF16, kFP16, kFP32, kTF32, kINT8 };

std::string_view ToString(DType d);
std::optional<DType> ParseDType(std::string_view s);
/// Bytes of one input element (A and B).
int ElementBytes(DType d);
/// Bytes of one output element (C): the input type for bf16/fp16, fp32 for fp32/tf32, int32 for
/// int8.
int OutputBytes(DType d);

/// How B is given in global memory. A is always M x K row-major, C M x N row-major.
enum class BLayout {
  kKN,  ///< B is K x N, row-major (ld = N)
  kNK,  ///< B is N x K, row-major (ld = K), i.e. B^T stored row-major
};

struct Problem {
  int64_t m = 0;
  int64_t n = 0;
  int64_t k = 0;
  DType dtype = DType::kBF16;

  /// Multiply-adds counted as two operations.
  double Flops() const { return 2.0 * double(m) * double(n) * double(k); }
};

}  // namespace ablation::kernels
