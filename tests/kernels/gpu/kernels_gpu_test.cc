// GPU tests of the kernels (ctest label gpu): correctness against the FP64 reference, bit
// identity across the whole ablation family, the best variants against cuBLAS. Every test skips
// with the reason where there is no device.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>

#include "kernels/reference.h"
#include "kernels/testing/gpu_util.h"
#include "tests/kernels/gpu/gpu_test_util.h"

namespace ablation::kernels {
namespace {

using testing::CheckedLaunch;
using testing::GemmBuffers;
using testing::NoDeviceReason;
using testing::Output;
using testing::RawOutput;

class KernelsGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::string why = NoDeviceReason(); !why.empty()) GTEST_SKIP() << why;
    RegisterCatalog(registry_);
    BindLaunchers(registry_);
    ASSERT_EQ(cublasCreate(&cublas_), CUBLAS_STATUS_SUCCESS);
  }
  void TearDown() override {
    if (cublas_ != nullptr) cublasDestroy(cublas_);
  }

  const Variant& Get(const std::string& name) {
    const Variant* v = registry_.Find(name);
    EXPECT_NE(v, nullptr) << name;
    return *v;
  }

  Registry registry_;
  cublasHandle_t cublas_ = nullptr;
};

TEST_F(KernelsGpu, AgainstFp64Reference) {
  for (int64_t size : {256, 512}) {
    for (DType dtype : {DType::kBF16, DType::kFP16}) {
      const Problem p{size, size, size, dtype};
      GemmBuffers buf;
      ASSERT_EQ(buf.Init(p, 42), "");
      std::vector<double> a, b;
      ASSERT_EQ(CopyToHostAsDouble(buf.a.data(), size_t(p.m * p.k), dtype, false, &a), "");
      ASSERT_EQ(CopyToHostAsDouble(buf.b_kn.data(), size_t(p.k * p.n), dtype, false, &b), "");
      const std::vector<double> ref = ReferenceGemm(a, b, p.m, p.n, p.k);
      const std::string cublas_name = dtype == DType::kBF16 ? "cublas_bf16" : "cublas_fp16";
      for (const std::string& name :
           {cublas_name, std::string("abl_L0_R1_bl0_s1_sw1"),
            std::string("abl_L1_R1_bl1_s4_sw1_rb1"), std::string("abl_L1_R0_bl0_s3_sw0")}) {
        SCOPED_TRACE(name + " " + std::string(ToString(dtype)) + " " + std::to_string(size));
        ASSERT_EQ(CheckedLaunch(Get(name), buf, cublas_), "");
        const Comparison c = Compare(Output(buf), ref, dtype, DefaultTolerance(dtype));
        EXPECT_TRUE(c.passed) << "rel_frobenius " << c.rel_frobenius_error << " max_abs "
                              << c.max_abs_error << " mismatches " << c.mismatches << " nan "
                              << c.nan_count << " unwritten " << c.unwritten_count;
        EXPECT_EQ(c.nan_count, 0);
        EXPECT_EQ(c.unwritten_count, 0);
      }
    }
  }
}

TEST_F(KernelsGpu, AblationFamilyIsBitIdentical) {
  const Problem shapes[] = {{512, 512, 512}, {4096, 4096, 4096}, {1024, 2048, 768}};
  for (DType dtype : {DType::kBF16, DType::kFP16}) {
    for (Problem p : shapes) {
      p.dtype = dtype;
      SCOPED_TRACE(std::string(ToString(dtype)) + " " + std::to_string(p.m) + "x" +
                   std::to_string(p.n) + "x" + std::to_string(p.k));
      GemmBuffers buf;
      ASSERT_EQ(buf.Init(p, 7), "");
      std::vector<uint8_t> first;
      std::string first_name;
      int compared = 0;
      for (const Variant& v : registry_.All()) {
        if (v.family != "ablation") continue;
        ASSERT_EQ(CheckedLaunch(v, buf, cublas_), "");
        std::vector<uint8_t> raw = RawOutput(buf);
        if (first.empty()) {
          // The first output must itself be complete and finite: the others are held to it.
          const Comparison c = Compare(Output(buf), Output(buf), dtype, ExactTolerance());
          ASSERT_EQ(c.unwritten_count, 0) << v.name;
          ASSERT_EQ(c.nan_count, 0) << v.name;
          first = std::move(raw);
          first_name = v.name;
        } else {
          EXPECT_TRUE(raw.size() == first.size() &&
                      std::memcmp(raw.data(), first.data(), raw.size()) == 0)
              << v.name << " differs from " << first_name;
        }
        ++compared;
      }
      EXPECT_EQ(compared, 128);
    }
  }
}

TEST_F(KernelsGpu, BestVariantsAgainstCublasAt4096) {
  for (DType dtype : {DType::kBF16, DType::kFP16}) {
    const Problem p{4096, 4096, 4096, dtype};
    GemmBuffers buf;
    ASSERT_EQ(buf.Init(p, 11), "");
    ASSERT_EQ(
        CheckedLaunch(Get(dtype == DType::kBF16 ? "cublas_bf16" : "cublas_fp16"), buf, cublas_),
        "");
    const std::vector<double> ref = Output(buf);
    for (const char* name : {"abl_L1_R1_bl1_s4_sw1_rb1", "abl_L1_R1_bl0_s4_sw1_rb1",
                             "abl_L1_R1_bl1_s3_sw1_rb1", "abl_L1_R1_bl0_s3_sw1"}) {
      SCOPED_TRACE(std::string(name) + " " + std::string(ToString(dtype)));
      ASSERT_EQ(CheckedLaunch(Get(name), buf, cublas_), "");
      const Comparison c = Compare(Output(buf), ref, dtype, DefaultTolerance(dtype));
      EXPECT_TRUE(c.passed) << "rel_frobenius " << c.rel_frobenius_error << " mismatches "
                            << c.mismatches << " nan " << c.nan_count << " unwritten "
                            << c.unwritten_count;
    }
  }
}

TEST_F(KernelsGpu, RefusesWhatItCannotRun) {
  const Variant& v = Get("abl_L1_R1_bl0_s3_sw1");
  GemmArgs args;
  args.problem = {100, 128, 32, DType::kBF16};
  EXPECT_NE(v.launch(args), "");
  EXPECT_NE(v.kernel(DType::kBF16), nullptr);
  EXPECT_EQ(v.kernel(DType::kFP32), nullptr);
  cudaFuncAttributes attr{};
  ASSERT_EQ(cudaFuncGetAttributes(&attr, Get("abl_L1_R1_bl1_s4_sw1_rb1").kernel(DType::kBF16)),
            cudaSuccess);
  EXPECT_EQ(attr.localSizeBytes, 0u) << "spills";
}

}  // namespace
}  // namespace ablation::kernels
