#include "kernels/common/element_values.h"

#include <cmath>
#include <cstring>

#include "kernels/common/buffers.h"

namespace ablation::kernels {

double Fp32BitsToDouble(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

double Bf16BitsToDouble(uint16_t v) { return Fp32BitsToDouble(uint32_t(v) << 16); }

double Fp16BitsToDouble(uint16_t h) {
  const uint32_t sign = uint32_t(h & 0x8000) << 16;
  const uint32_t exp = (h >> 10) & 0x1F, man = h & 0x3FF;
  if (exp == 0x1F) return Fp32BitsToDouble(sign | 0x7F800000u | (man << 13));
  if (exp != 0) return Fp32BitsToDouble(sign | ((exp + 112) << 23) | (man << 13));
  const double v = std::ldexp(double(man), -24);  // subnormal or zero
  return sign ? -v : v;
}

double E4m3BitsToDouble(uint8_t v) {
  const bool negative = (v & 0x80) != 0;
  const int exp = (v >> 3) & 0xF, man = v & 0x7;
  if (exp == 0xF && man == 0x7) return std::nan("");
  // Subnormals (exp 0): man * 2^-9; normals: (8 + man) * 2^(exp - 10).
  const double x = exp == 0 ? std::ldexp(double(man), -9) : std::ldexp(double(8 + man), exp - 10);
  return negative ? -x : x;
}

// Declared in buffers.h, defined here (host-only) so that Compare works without CUDA.
bool IsPoison(double value, DType dtype) {
  double expected;
  switch (dtype) {
    case DType::kBF16:
    case DType::kFP8:  // bf16 C
      expected = Bf16BitsToDouble(kPoisonBf16);
      break;
    case DType::kFP16:
      expected = Fp16BitsToDouble(kPoisonFp16);
      break;
    case DType::kFP32:
    case DType::kTF32:
      expected = Fp32BitsToDouble(kPoisonFp32);
      break;
    case DType::kINT8:
      return value == double(kPoisonInt32);
    default:
      return false;
  }
  // NaN never equals itself: compare the bits of the widened patterns.
  uint64_t a, b;
  std::memcpy(&a, &value, 8);
  std::memcpy(&b, &expected, 8);
  return a == b;
}

}  // namespace ablation::kernels
