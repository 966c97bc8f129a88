// GPU tests (ctest label gpu) of the fp8 ladder (sm90 family, kFp8Rungs) and of cublas_fp8: e4m3
// inputs with per-tensor scales, bf16 C. Every rung and cuBLAS against the FP64 product of the
// dequantised inputs (poisoned output first: nothing unwritten, no NaN), at shapes on the tile,
// off it and padded, the errors measured against the tolerance's margin, the scales applied
// once each, and no local memory. Every test skips with the reason where there is no device.
#include <cublasLt.h>
#include <cublas_v2.h>
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "kernels/reference.h"
#include "kernels/sm90/sm90_config.h"
#include "kernels/sm90/sm90_launchers.h"
#include "kernels/testing/gpu_util.h"
#include "tests/kernels/gpu/gpu_test_util.h"

namespace ablation::kernels {
namespace {

using testing::GemmBuffers;
using testing::IsSm90;
using testing::LaunchLikeTheWorker;
using testing::NoDeviceReason;
using testing::Output;

class Sm90Fp8Gpu : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::string why = NoDeviceReason(); !why.empty()) GTEST_SKIP() << why;
    if (!IsSm90()) GTEST_SKIP() << "the sm90 fp8 rungs run on compute capability 9.0 only";
    RegisterCatalog(registry_);
    BindLaunchers(registry_);
    ASSERT_EQ(cublasCreate(&cublas_), CUBLAS_STATUS_SUCCESS);
    ASSERT_EQ(cublasLtCreate(&lt_), CUBLAS_STATUS_SUCCESS);
    ASSERT_EQ(workspace_.Allocate(size_t(32) << 20), "");
  }
  void TearDown() override {
    if (cublas_ != nullptr) cublasDestroy(cublas_);
    if (lt_ != nullptr) cublasLtDestroy(lt_);
  }

  const Variant& Get(const std::string& name) {
    const Variant* v = registry_.Find(name);
    if (v == nullptr) ADD_FAILURE() << "no variant " << name;
    return v != nullptr ? *v : registry_.All().front();
  }

  /// Poisons C, launches `name` (with cuBLASLt's handle and workspace), synchronises.
  std::string Launch(const std::string& name, const GemmBuffers& buf) {
    return LaunchLikeTheWorker(Get(name), buf, cublas_, lt_, &workspace_);
  }

  /// The FP64 product of the dequantised inputs of `buf`.
  std::vector<double> Reference(const GemmBuffers& buf) {
    const Problem& p = buf.problem;
    std::vector<double> a, b;
    EXPECT_EQ(CopyToHostAsDouble(buf.a.data(), size_t(p.m * p.k), p.dtype, false, &a), "");
    EXPECT_EQ(CopyToHostAsDouble(buf.b_kn.data(), size_t(p.k * p.n), p.dtype, false, &b), "");
    for (double& x : a) x *= double(kFp8ScaleA);
    for (double& x : b) x *= double(kFp8ScaleB);
    return ReferenceGemm(a, b, p.m, p.n, p.k);
  }

  /// Every fp8 rung and cublas_fp8 (where it takes the shape) at `p` against the reference.
  void ExpectMatches(Problem p, uint64_t seed) {
    p.dtype = DType::kFP8;
    GemmBuffers buf;
    ASSERT_EQ(buf.Init(p, seed), "");
    const std::vector<double> ref = Reference(buf);
    std::vector<std::string> names;
    for (const sm90::Rung& r : sm90::kFp8Rungs) names.emplace_back(r.name);
    names.emplace_back("cublas_fp8");
    for (const std::string& name : names) {
      SCOPED_TRACE(name + " " + std::to_string(p.m) + "x" + std::to_string(p.n) + "x" +
                   std::to_string(p.k));
      if (name == "cublas_fp8" && !Get(name).can_implement(p).empty()) continue;
      ran_.insert(name);
      ASSERT_EQ(Launch(name, buf), "");
      const Comparison c = Compare(Output(buf), ref, DType::kFP8, DefaultTolerance(DType::kFP8));
      EXPECT_TRUE(c.passed) << "rel_frobenius " << c.rel_frobenius_error << " max_abs "
                            << c.max_abs_error << " mismatches " << c.mismatches << " nan "
                            << c.nan_count << " unwritten " << c.unwritten_count;
      // The tolerance's margin: a correct fp8 GEMM is far inside it (bf16 rounding and the fp8
      // accumulation), so that a kernel drifting towards the bound is seen before it fails.
      EXPECT_LT(c.rel_frobenius_error, 4e-3);
      worst_ = std::max(worst_, c.rel_frobenius_error);
    }
  }

  Registry registry_;
  cublasHandle_t cublas_ = nullptr;
  cublasLtHandle_t lt_ = nullptr;
  DeviceBuffer workspace_;
  std::set<std::string> ran_;
  double worst_ = 0;
};

// On the tile (K/128 = 1, 4, 8 k-tiles: the ring wraps), several tiles per persistent CTA, a
// stream-K tail (72 units of 3 k-tiles), and K = 8192 for the accumulation's error.
TEST_F(Sm90Fp8Gpu, OnTheTileAgainstFp64Reference) {
  for (Problem p : {Problem{256, 256, 128}, Problem{512, 512, 512}, Problem{768, 1280, 1024},
                    Problem{2304, 2048, 384}, Problem{256, 512, 8192}}) {
    ExpectMatches(p, 42);
  }
  EXPECT_EQ(ran_.size(), sm90::kFp8Rungs.size() + 1);
  std::printf("worst fp8 relative Frobenius error: %.3g\n", worst_);
}

// Off the tile (the guarded builds) and padded (K not a multiple of 16, N not of 8).
TEST_F(Sm90Fp8Gpu, EveryShapeAgainstFp64Reference) {
  for (Problem p : {Problem{1, 1, 1}, Problem{7, 9, 13}, Problem{129, 257, 144},
                    Problem{255, 511, 200}, Problem{384, 520, 4104}, Problem{1, 512, 4096}}) {
    ExpectMatches(p, 21);
  }
  EXPECT_EQ(ran_.size(), sm90::kFp8Rungs.size() + 1);
}

// The rungs against cuBLAS's fp8 GEMM at 4096^3, where the ladder is timed: the same inputs,
// both within the tolerance of each other.
TEST_F(Sm90Fp8Gpu, AgainstCublasAt4096) {
  GemmBuffers buf;
  ASSERT_EQ(buf.Init({4096, 4096, 4096, DType::kFP8}, 11), "");
  ASSERT_EQ(Launch("cublas_fp8", buf), "");
  const std::vector<double> ref = Output(buf);
  for (const sm90::Rung& r : sm90::kFp8Rungs) {
    SCOPED_TRACE(r.name);
    ASSERT_EQ(Launch(std::string(r.name), buf), "");
    const Comparison c = Compare(Output(buf), ref, DType::kFP8, DefaultTolerance(DType::kFP8));
    EXPECT_TRUE(c.passed) << "rel_frobenius " << c.rel_frobenius_error;
  }
}

// Each scale is applied once: with A's scale doubled the output doubles (a kernel that ignored
// scale_a, or used scale_b twice, would not).
TEST_F(Sm90Fp8Gpu, EachScaleIsAppliedOnce) {
  GemmBuffers buf;
  ASSERT_EQ(buf.Init({256, 512, 256, DType::kFP8}, 3), "");
  const std::vector<double> ref = Reference(buf);
  DeviceBuffer scales;  // A's at 0, B's 256 bytes on (cuBLASLt wants each 16-byte aligned)
  ASSERT_EQ(scales.Allocate(128 * sizeof(float)), "");
  float host[128] = {};
  host[0] = 2 * kFp8ScaleA;
  host[64] = kFp8ScaleB;
  ASSERT_EQ(cudaMemcpy(scales.data(), host, sizeof host, cudaMemcpyHostToDevice), cudaSuccess);
  std::vector<double> doubled = ref;
  for (double& x : doubled) x *= 2;
  for (const char* name : {"sm90_fp8_f1_ws", "sm90_fp8_f7_epilogue_overlap", "cublas_fp8"}) {
    SCOPED_TRACE(name);
    const Variant& v = Get(name);
    GemmArgs args = buf.Args(v, cublas_);
    args.cublaslt = lt_;
    args.workspace = workspace_.data();
    args.workspace_bytes = workspace_.bytes();
    args.scale_a = static_cast<const float*>(scales.data());
    args.scale_b = static_cast<const float*>(scales.data()) + 64;
    ASSERT_EQ(v.launch(args), "");
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    EXPECT_TRUE(Compare(Output(buf), doubled, DType::kFP8, DefaultTolerance(DType::kFP8)).passed);
  }
}

TEST_F(Sm90Fp8Gpu, RefusesWhatItCannotRunAndDoesNotSpill) {
  for (size_t i = 0; i < sm90::kFp8Rungs.size(); ++i) {
    const std::string name(sm90::kFp8Rungs[i].name);
    const Variant& v = Get(name);
    GemmArgs args;
    args.problem = {128, 256, 128, DType::kBF16};
    EXPECT_NE(v.launch(args).find("runs fp8 only"), std::string::npos) << name;
    args.problem.dtype = DType::kFP8;  // no scales
    EXPECT_NE(v.launch(args).find("scales"), std::string::npos) << name;
    ASSERT_NE(v.kernel(DType::kFP8), nullptr) << name;
    EXPECT_EQ(v.kernel(DType::kBF16), nullptr) << name;
    for (const void* f : {v.kernel(DType::kFP8), sm90::Sm90Fp8GuardedKernel(i)}) {
      ASSERT_NE(f, nullptr) << name;
      cudaFuncAttributes attr{};
      ASSERT_EQ(cudaFuncGetAttributes(&attr, f), cudaSuccess) << name;
      EXPECT_EQ(attr.localSizeBytes, 0u) << name << " uses local memory";
    }
  }
}

}  // namespace
}  // namespace ablation::kernels
