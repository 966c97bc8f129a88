// Problem description shared by every kernel family. Host-only: no CUDA headers here, so the
// daemon can reason about problems without linking CUDA.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace ablation::kernels {

/// Input element type of a GEMM. Accumulation: fp32 for bf16/fp16/tf32/fp32/fp8, int32 for int8.
/// fp8 (the word "fp8"): A and B in e4m3 with a per-tensor scale each (GemmArgs::scale_a and
/// scale_b, device floats: the dequantised A is scale_a times its e4m3 values), fp32
/// accumulation, C in bf16: C = scale_a * scale_b * (A_e4m3 * B_e4m3), as cuBLASLt's FP8 GEMM.
enum class DType { kBF16, kFP16, kFP32, kTF32, kINT8, kFP8 };

/// Every dtype, in the order of the API's words.
inline constexpr DType kAllDTypes[] = {DType::kBF16, DType::kFP16, DType::kFP32,
                                       DType::kTF32, DType::kINT8, DType::kFP8};

/// The per-tensor scales the service gives fp8 problems (kernels/common/buffers.h:
/// Fp8ScalePointers): the inputs are uniform in [-1, 1) (A) and [-2, 2) (B) quantised to e4m3
/// so that their largest magnitude maps to e4m3's largest finite value, 448, as a per-tensor
/// amax scaling does. Two different scales, so that a kernel that applies one twice is caught.
inline constexpr float kFp8ScaleA = 1.0f / 448.0f;
inline constexpr float kFp8ScaleB = 2.0f / 448.0f;

std::string_view ToString(DType d);
std::optional<DType> ParseDType(std::string_view s);
/// Bytes of one input element (A and B).
int ElementBytes(DType d);
/// Bytes of one output element (C): the input type for bf16/fp16, fp32 for fp32/tf32, int32 for
/// int8, bf16 for fp8.
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
