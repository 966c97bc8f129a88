// Host-side bit patterns and exact widening of the element types, shared by the CUDA buffer code
// (buffers.cu) and the host-only comparison (reference.cc, IsPoison), so the daemon can judge
// outputs without linking CUDA.
#pragma once

#include <cstdint>

namespace ablation::kernels {

// Poison patterns: NaNs with a payload no arithmetic produces (sign set, payload 0x5), so an
// unwritten element is told apart from a NaN a kernel computed (CUDA's canonical NaN is 0x7FFF..).
inline constexpr uint16_t kPoisonBf16 = 0xFFC5;
inline constexpr uint16_t kPoisonFp16 = 0xFE05;
inline constexpr uint32_t kPoisonFp32 = 0xFFC00005u;
inline constexpr int32_t kPoisonInt32 = INT32_MIN;

/// Exact widening; NaN payloads are kept (the poison check depends on it).
double Bf16BitsToDouble(uint16_t v);
double Fp16BitsToDouble(uint16_t v);
double Fp32BitsToDouble(uint32_t v);
/// e4m3 (fp8: 1 sign, 4 exponent bits of bias 7, 3 mantissa bits; no infinities; S.1111.111 is
/// NaN): exact.
double E4m3BitsToDouble(uint8_t v);

}  // namespace ablation::kernels
