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

// Declared in buffers.h, defined here (host-only) so that Compare works without CUDA.
bool IsPoison(double value, DType dtype) {
  double expected;
  switch (dtype) {
    case DType::kBF16:
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
