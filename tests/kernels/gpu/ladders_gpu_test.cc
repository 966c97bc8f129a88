// GPU tests (ctest label gpu) of the SIMT FP32 ladder, the TF32 Tensor Core pair and the cuBLAS
// entries of fp32, tf32 and int8: every variant against the FP64 reference (poisoned output first:
// nothing unwritten, no NaN), bit identity within the simt and the tf32 families, cublas_int8
// exact, the simt rungs against cublas_fp32 at 2048^3. Every test skips with the reason where
// there is no device.
#include <cublasLt.h>
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "kernels/reference.h"
#include "kernels/testing/gpu_util.h"
#include "tests/kernels/gpu/gpu_test_util.h"

namespace ablation::kernels {
namespace {

using testing::GemmBuffers;
using testing::LaunchLikeTheWorker;
using testing::NoDeviceReason;
using testing::Output;
using testing::RawOutput;

const char* const kSimt[] = {"simt_tiling", "simt_at", "simt_at_swizzle", "simt_at_swizzle_rw",
                             "simt_at_swizzle_dbf_rw"};
const char* const kTf32[] = {"tf32_sync_swizzle_dbf", "tf32_cpasync_swizzle_dbf"};

std::string ShapeText(const Problem& p) {
  return std::to_string(p.m) + "x" + std::to_string(p.n) + "x" + std::to_string(p.k) + " " +
         std::string(ToString(p.dtype));
}

class LaddersGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::string why = NoDeviceReason(); !why.empty()) GTEST_SKIP() << why;
    RegisterCatalog(registry_);
    BindLaunchers(registry_);
    ASSERT_EQ(cublasCreate(&cublas_), CUBLAS_STATUS_SUCCESS);
    ASSERT_EQ(cublasLtCreate(&cublaslt_), CUBLAS_STATUS_SUCCESS);
    ASSERT_EQ(workspace_.Allocate(32u << 20), "");  // what the worker gives cuBLAS on Hopper
  }
  void TearDown() override {
    if (cublas_ != nullptr) cublasDestroy(cublas_);
    if (cublaslt_ != nullptr) cublasLtDestroy(cublaslt_);
  }

  const Variant& Get(const std::string& name) {
    const Variant* v = registry_.Find(name);
    if (v == nullptr) ADD_FAILURE() << "no variant " << name;
    return v != nullptr ? *v : registry_.All().front();
  }

  /// Poisons C, launches with the worker's arguments (cuBLAS and cuBLASLt handles, workspace),
  /// synchronizes. "" or the error.
  std::string Run(const Variant& v, const GemmBuffers& buf) {
    return LaunchLikeTheWorker(v, buf, cublas_, cublaslt_, &workspace_);
  }

  std::vector<double> Reference(const GemmBuffers& buf) {
    const Problem& p = buf.problem;
    std::vector<double> a, b;
    EXPECT_EQ(CopyToHostAsDouble(buf.a.data(), size_t(p.m * p.k), p.dtype, false, &a), "");
    EXPECT_EQ(CopyToHostAsDouble(buf.b_kn.data(), size_t(p.k * p.n), p.dtype, false, &b), "");
    return ReferenceGemm(a, b, p.m, p.n, p.k);
  }

  /// Runs each variant on `buf` and holds it to `ref` with the dtype's tolerance.
  void ExpectMatches(const std::vector<std::string>& names, const GemmBuffers& buf,
                     const std::vector<double>& ref) {
    const DType dtype = buf.problem.dtype;
    for (const std::string& name : names) {
      SCOPED_TRACE(name + " " + ShapeText(buf.problem));
      ASSERT_EQ(Run(Get(name), buf), "");
      const Comparison c = Compare(Output(buf), ref, dtype, DefaultTolerance(dtype));
      EXPECT_TRUE(c.passed) << "rel_frobenius " << c.rel_frobenius_error << " max_abs "
                            << c.max_abs_error << " mismatches " << c.mismatches << " nan "
                            << c.nan_count << " unwritten " << c.unwritten_count;
      EXPECT_EQ(c.nan_count, 0);
      EXPECT_EQ(c.unwritten_count, 0);
      if (dtype == DType::kINT8) EXPECT_EQ(c.max_abs_error, 0.0) << "int32 results are exact";
    }
  }

  /// Every variant of `names` gives the same bytes as the first, whose output is complete.
  void ExpectBitIdentical(const std::vector<std::string>& names, const Problem& p) {
    SCOPED_TRACE(ShapeText(p));
    GemmBuffers buf;
    ASSERT_EQ(buf.Init(p, 7), "");
    std::vector<uint8_t> first;
    for (const std::string& name : names) {
      ASSERT_EQ(Run(Get(name), buf), "");
      std::vector<uint8_t> raw = RawOutput(buf);
      if (first.empty()) {
        const Comparison c = Compare(Output(buf), Output(buf), p.dtype, ExactTolerance());
        ASSERT_EQ(c.unwritten_count, 0) << name;
        ASSERT_EQ(c.nan_count, 0) << name;
        first = std::move(raw);
      } else {
        EXPECT_TRUE(raw.size() == first.size() &&
                    std::memcmp(raw.data(), first.data(), raw.size()) == 0)
            << name << " differs from " << names.front();
      }
    }
  }

  Registry registry_;
  cublasHandle_t cublas_ = nullptr;
  cublasLtHandle_t cublaslt_ = nullptr;
  DeviceBuffer workspace_;
};

std::vector<std::string> Names(std::initializer_list<const char*> base,
                               const char* const* more = nullptr, size_t count = 0) {
  std::vector<std::string> out(base.begin(), base.end());
  for (size_t i = 0; i < count; ++i) out.emplace_back(more[i]);
  return out;
}

// 256^3, 512^3 and a non-square shape (M, N, K all different: an M/N mix-up shows).
const Problem kShapes[] = {{256, 256, 256}, {512, 512, 512}, {256, 384, 208}};

TEST_F(LaddersGpu, SimtAgainstFp64Reference) {
  for (Problem p : kShapes) {
    p.dtype = DType::kFP32;
    GemmBuffers buf;
    ASSERT_EQ(buf.Init(p, 42), "");
    ExpectMatches(Names({"cublas_fp32"}, kSimt, std::size(kSimt)), buf, Reference(buf));
  }
}

TEST_F(LaddersGpu, Tf32AgainstFp64Reference) {
  for (Problem p : kShapes) {
    p.dtype = DType::kTF32;
    GemmBuffers buf;
    ASSERT_EQ(buf.Init(p, 42), "");
    ExpectMatches(Names({"cublas_tf32"}, kTf32, std::size(kTf32)), buf, Reference(buf));
  }
}

TEST_F(LaddersGpu, CublasInt8IsExact) {
  for (Problem p : kShapes) {
    p.dtype = DType::kINT8;
    GemmBuffers buf;
    ASSERT_EQ(buf.Init(p, 42), "");
    ExpectMatches({"cublas_int8"}, buf, Reference(buf));
  }
}

TEST_F(LaddersGpu, Tf32PairIsBitIdentical) {
  for (Problem p : {Problem{512, 512, 512}, Problem{1024, 2048, 768}, Problem{4096, 4096, 4096}}) {
    p.dtype = DType::kTF32;
    ExpectBitIdentical(Names({}, kTf32, std::size(kTf32)), p);
  }
}

TEST_F(LaddersGpu, SimtRungsAreBitIdentical) {
  for (Problem p : {Problem{512, 512, 512}, Problem{1024, 2048, 768}}) {
    p.dtype = DType::kFP32;
    ExpectBitIdentical(Names({}, kSimt, std::size(kSimt)), p);
  }
}

TEST_F(LaddersGpu, SimtAgainstCublasFp32At2048) {
  const Problem p{2048, 2048, 2048, DType::kFP32};
  GemmBuffers buf;
  ASSERT_EQ(buf.Init(p, 11), "");
  ASSERT_EQ(Run(Get("cublas_fp32"), buf), "");
  const std::vector<double> ref = Output(buf);
  ExpectMatches(Names({}, kSimt, std::size(kSimt)), buf, ref);
}

TEST_F(LaddersGpu, RefusesWhatItCannotRunAndDoesNotSpill) {
  for (const char* name : {"simt_at_swizzle_dbf_rw", "tf32_cpasync_swizzle_dbf"}) {
    GemmArgs args;
    args.problem = {100, 128, 32, Get(name).dtypes.front()};
    EXPECT_NE(Get(name).launch(args), "") << name;
  }
  GemmArgs args;
  args.problem = {128, 128, 32, DType::kINT8};
  EXPECT_NE(Get("cublas_int8").launch(args), "") << "no cuBLASLt handle";
  for (const Variant& v : registry_.All()) {
    if (v.family != "simt" && v.family != "tf32") continue;
    const void* fn = v.kernel(v.dtypes.front());
    ASSERT_NE(fn, nullptr) << v.name;
    EXPECT_EQ(v.kernel(DType::kBF16), nullptr) << v.name;
    cudaFuncAttributes attr{};
    ASSERT_EQ(cudaFuncGetAttributes(&attr, fn), cudaSuccess) << v.name;
    EXPECT_EQ(attr.localSizeBytes, 0u) << v.name << " spills";
    EXPECT_LE(attr.numRegs, 128) << v.name << ": two blocks of 256 threads per SM";
  }
}

}  // namespace
}  // namespace ablation::kernels
