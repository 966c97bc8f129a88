#include "server/core/plan/verification_policy.h"

#include <gtest/gtest.h>

#include "common/enum_words.h"

namespace ablation::core {
namespace {

class VerificationPolicyTest : public ::testing::Test {
 protected:
  void SetUp() override { kernels::RegisterCatalog(registry_); }
  const kernels::Variant& V(const char* name) { return *registry_.Find(name); }
  static kernels::Problem P(int64_t m, int64_t n, int64_t k) {
    return {m, n, k, kernels::DType::kBF16};
  }
  kernels::Registry registry_;
};

TEST_F(VerificationPolicyTest, DefaultIsTheCpuUpTo1024CubedThenCublas) {
  const auto& abl = V("abl_L1_R1_bl0_s3_sw1");
  EXPECT_EQ(ChooseReference(abl, P(1024, 1024, 1024), v1::REFERENCE_UNSPECIFIED, "").reference,
            v1::REFERENCE_CPU);
  EXPECT_EQ(ChooseReference(abl, P(1024, 1024, 1025), v1::REFERENCE_UNSPECIFIED, "").reference,
            v1::REFERENCE_CUBLAS);
}

TEST_F(VerificationPolicyTest, AboveTheCpuBoundCublasWhereItTakesTheShapeElseTheGpu) {
  const auto& abl = V("abl_L1_R1_bl0_s3_sw1");
  EXPECT_EQ(ChooseReference(abl, P(4096, 4096, 4096), v1::REFERENCE_UNSPECIFIED, "", &registry_)
                .reference,
            v1::REFERENCE_CUBLAS);
  // cuBLAS is never checked against itself: above the CPU bound it gets the GPU reference.
  const auto& cublas = V("cublas_bf16");
  EXPECT_EQ(ChooseReference(cublas, P(1024, 1024, 1024), v1::REFERENCE_UNSPECIFIED, "", &registry_)
                .reference,
            v1::REFERENCE_CPU);
  EXPECT_EQ(ChooseReference(cublas, P(4096, 4096, 4096), v1::REFERENCE_UNSPECIFIED, "", &registry_)
                .reference,
            v1::REFERENCE_GPU);
}

TEST_F(VerificationPolicyTest, TheCpuWhenAskedUpTo2To33) {
  const auto& abl = V("abl_L1_R1_bl0_s3_sw1");
  EXPECT_EQ(ChooseReference(abl, P(2048, 2048, 2048), v1::REFERENCE_CPU, "").reference,
            v1::REFERENCE_CPU);  // 2^33 exactly
  const ReferenceChoice big = ChooseReference(abl, P(2048, 2048, 2049), v1::REFERENCE_CPU, "");
  EXPECT_EQ(big.reference, v1::REFERENCE_UNSPECIFIED);
  EXPECT_EQ(big.not_checked,
            "the CPU reference is limited to M*N*K <= 2^33; ask for the GPU reference (--against "
            "gpu) at this size");
}

TEST_F(VerificationPolicyTest, AnExplicitReferenceIsKept) {
  const auto& abl = V("abl_L1_R1_bl0_s3_sw1");
  EXPECT_EQ(ChooseReference(abl, P(64, 64, 64), v1::REFERENCE_CUBLAS, "").reference,
            v1::REFERENCE_CUBLAS);
  ReferenceChoice v = ChooseReference(abl, P(64, 64, 64), v1::REFERENCE_VARIANT, "abl_x");
  EXPECT_EQ(v.reference, v1::REFERENCE_VARIANT);
  EXPECT_EQ(v.variant, "abl_x");
  EXPECT_EQ(common::ReferenceWord(v.reference, v.variant), "abl_x");
  EXPECT_EQ(common::ReferenceWord(v1::REFERENCE_CUBLAS, ""), "cublas");
}

TEST_F(VerificationPolicyTest, InputSeedIsOnePerProblemOfARun) {
  const kernels::Problem p = P(4096, 4096, 4096);
  EXPECT_EQ(InputSeed(3, p), InputSeed(3, P(4096, 4096, 4096)));  // every item of the problem
  EXPECT_NE(InputSeed(3, p), InputSeed(4, p));                    // another run
  EXPECT_NE(InputSeed(3, p), InputSeed(3, P(4096, 4096, 2048)));  // another problem
  EXPECT_NE(InputSeed(3, P(512, 256, 128)), InputSeed(3, P(256, 512, 128)));
  kernels::Problem fp16 = p;
  fp16.dtype = kernels::DType::kFP16;
  EXPECT_NE(InputSeed(3, p), InputSeed(3, fp16));
}

}  // namespace
}  // namespace ablation::core
