// Host helpers of buffers.h: poison recognition and exact widening of the element types.
#include <gtest/gtest.h>

#include <cmath>

#include "kernels/common/buffers.h"
#include "kernels/common/element_values.h"

namespace ablation::kernels {
namespace {

TEST(ElementValues, WidensExactly) {
  EXPECT_EQ(Bf16BitsToDouble(0x3F80), 1.0);
  EXPECT_EQ(Bf16BitsToDouble(0xC000), -2.0);
  EXPECT_EQ(Fp16BitsToDouble(0x3C00), 1.0);
  EXPECT_EQ(Fp16BitsToDouble(0xC000), -2.0);
  EXPECT_EQ(Fp16BitsToDouble(0x0001), std::ldexp(1.0, -24));  // smallest subnormal
  EXPECT_EQ(Fp16BitsToDouble(0x7BFF), 65504.0);
  EXPECT_TRUE(std::isinf(Fp16BitsToDouble(0x7C00)));
  EXPECT_TRUE(std::isnan(Fp16BitsToDouble(0x7E00)));
  EXPECT_EQ(Fp32BitsToDouble(0x3F800000u), 1.0);
  // e4m3: bias 7, 3 mantissa bits, no infinities, S.1111.111 NaN.
  EXPECT_EQ(E4m3BitsToDouble(0x38), 1.0);
  EXPECT_EQ(E4m3BitsToDouble(0xC0), -2.0);
  EXPECT_EQ(E4m3BitsToDouble(0x7E), 448.0);                // the largest finite
  EXPECT_EQ(E4m3BitsToDouble(0x01), std::ldexp(1.0, -9));  // the smallest subnormal
  EXPECT_EQ(E4m3BitsToDouble(0x08), std::ldexp(1.0, -6));  // the smallest normal
  EXPECT_EQ(E4m3BitsToDouble(0x3D), 1.625);
  EXPECT_TRUE(std::isnan(E4m3BitsToDouble(0x7F)));
  EXPECT_TRUE(std::isnan(E4m3BitsToDouble(0xFF)));
  EXPECT_TRUE(std::signbit(E4m3BitsToDouble(0x80)));
}

TEST(ElementValues, PoisonIsRecognisedAndDistinctFromComputedNan) {
  EXPECT_TRUE(IsPoison(Bf16BitsToDouble(kPoisonBf16), DType::kBF16));
  EXPECT_TRUE(IsPoison(Fp16BitsToDouble(kPoisonFp16), DType::kFP16));
  EXPECT_TRUE(IsPoison(Fp32BitsToDouble(kPoisonFp32), DType::kFP32));
  EXPECT_TRUE(IsPoison(Fp32BitsToDouble(kPoisonFp32), DType::kTF32));
  EXPECT_TRUE(IsPoison(double(INT32_MIN), DType::kINT8));
  EXPECT_TRUE(IsPoison(Bf16BitsToDouble(kPoisonBf16), DType::kFP8));  // fp8's C is bf16
  EXPECT_TRUE(std::isnan(Bf16BitsToDouble(kPoisonBf16)));
  // The canonical NaNs a kernel produces are not poison.
  EXPECT_FALSE(IsPoison(Bf16BitsToDouble(0x7FFF), DType::kBF16));
  EXPECT_FALSE(IsPoison(Fp16BitsToDouble(0x7FFF), DType::kFP16));
  EXPECT_FALSE(IsPoison(std::nan(""), DType::kFP32));
  EXPECT_FALSE(IsPoison(0.0, DType::kBF16));
  EXPECT_FALSE(IsPoison(-5.0, DType::kINT8));
  // A bf16 poison is not an fp16 poison.
  EXPECT_FALSE(IsPoison(Bf16BitsToDouble(kPoisonBf16), DType::kFP16));
}

}  // namespace
}  // namespace ablation::kernels
