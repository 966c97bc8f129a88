// The GPU reference GEMM (kernels/reference/gpu_reference.h) against the FP64 CPU reference on
// ragged shapes, every dtype, the same seeded inputs. Skips without a device.
#include "kernels/reference/gpu_reference.h"

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "kernels/common/buffers.h"
#include "kernels/reference.h"
#include "kernels/testing/gpu_util.h"

namespace ablation::kernels {
namespace {

class GpuReference : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::string why = testing::NoDeviceReason(); !why.empty()) GTEST_SKIP() << why;
  }

  /// Inputs from FillRandom (as the worker makes them), both references, compared.
  static Comparison Check(const Problem& p, const Tolerance& tol, double* gpu_ms = nullptr) {
    const size_t eb = size_t(ElementBytes(p.dtype));
    const DType out_type = GpuReferenceOutputType(p.dtype);
    DeviceBuffer a, b, c;
    EXPECT_EQ(a.Allocate(size_t(p.m * p.k) * eb), "");
    EXPECT_EQ(b.Allocate(size_t(p.k * p.n) * eb), "");
    EXPECT_EQ(c.Allocate(size_t(p.m * p.n) * size_t(OutputBytes(out_type))), "");
    EXPECT_EQ(FillRandom(a.data(), size_t(p.m * p.k), p.dtype, 11), "");
    EXPECT_EQ(FillRandom(b.data(), size_t(p.k * p.n), p.dtype, 12), "");
    EXPECT_EQ(Poison(c.data(), size_t(p.m * p.n), out_type), "");
    EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    const auto t0 = std::chrono::steady_clock::now();
    EXPECT_EQ(ReferenceGemmGpu(a.data(), b.data(), c.data(), p), "");
    EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    if (gpu_ms) {
      *gpu_ms =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    }
    std::vector<double> ha, hb, out;
    EXPECT_EQ(CopyToHostAsDouble(a.data(), size_t(p.m * p.k), p.dtype, false, &ha), "");
    EXPECT_EQ(CopyToHostAsDouble(b.data(), size_t(p.k * p.n), p.dtype, false, &hb), "");
    EXPECT_EQ(CopyToHostAsDouble(c.data(), size_t(p.m * p.n), out_type, true, &out), "");
    return Compare(out, ReferenceGemm(ha, hb, p.m, p.n, p.k), out_type, tol);
  }
};

/// FP32 accumulation of exact products: a few units of FP32 rounding, far inside every dtype's
/// tolerance (1e-2 .. 1e-3), and far outside any missing product.
constexpr Tolerance kFp32Sum = {.rel_frobenius = 1e-5, .abs = 1e-5, .rel = 1e-5};
/// FP64 accumulation, output rounded to FP32 once.
constexpr Tolerance kFp64Sum = {.rel_frobenius = 1e-6, .abs = 1e-7, .rel = 1e-6};

TEST_F(GpuReference, RaggedShapesEveryDtype) {
  struct Shape {
    int64_t m, n, k;
  };
  // K not a multiple of 8 or 16, M and N not multiples of the 64 x 64 tile, and degenerate ones.
  const Shape shapes[] = {{65, 37, 29}, {1, 1, 1},    {3, 130, 7},   {129, 67, 300},
                          {64, 64, 64}, {200, 1, 77}, {1, 300, 1000}};
  for (DType d : {DType::kBF16, DType::kFP16, DType::kFP32, DType::kTF32, DType::kINT8}) {
    for (const Shape& s : shapes) {
      SCOPED_TRACE(std::string(ToString(d)) + " " + std::to_string(s.m) + "x" +
                   std::to_string(s.n) + "x" + std::to_string(s.k));
      const Tolerance tol = d == DType::kINT8   ? ExactTolerance()
                            : d == DType::kFP32 ? kFp64Sum
                                                : kFp32Sum;
      const Comparison c = Check({.m = s.m, .n = s.n, .k = s.k, .dtype = d}, tol);
      EXPECT_TRUE(c.passed) << "rel frobenius " << c.rel_frobenius_error << ", max abs "
                            << c.max_abs_error << ", mismatches " << c.mismatches << ", unwritten "
                            << c.unwritten_count << ", NaN " << c.nan_count;
      EXPECT_EQ(c.unwritten_count, 0);
    }
  }
}

TEST_F(GpuReference, RowsBeyondOneGridColumn) {
  // More 64-row tiles than gridDim.y (65535) holds: the last rows come from the same blocks'
  // second turn.
  const Comparison c =
      Check({.m = 65535 * 64 + 100, .n = 3, .k = 5, .dtype = DType::kBF16}, kFp32Sum);
  EXPECT_TRUE(c.passed) << "mismatches " << c.mismatches << ", unwritten " << c.unwritten_count;
}

TEST_F(GpuReference, FastEnoughForLargeShapes) {
  // The point of a GPU reference: a 4096^3 check (2^36 multiply-adds, beyond the CPU's 2^33) in
  // well under a second. Its correctness is the ragged shapes' test; here time and completeness.
  const Problem p = {.m = 4096, .n = 4096, .k = 4096, .dtype = DType::kBF16};
  DeviceBuffer a, b, c;
  ASSERT_EQ(a.Allocate(size_t(p.m * p.k) * 2), "");
  ASSERT_EQ(b.Allocate(size_t(p.k * p.n) * 2), "");
  ASSERT_EQ(c.Allocate(size_t(p.m * p.n) * 4), "");
  ASSERT_EQ(FillRandom(a.data(), size_t(p.m * p.k), p.dtype, 1), "");
  ASSERT_EQ(FillRandom(b.data(), size_t(p.k * p.n), p.dtype, 2), "");
  ASSERT_EQ(Poison(c.data(), size_t(p.m * p.n), DType::kFP32), "");
  ASSERT_EQ(ReferenceGemmGpu(a.data(), b.data(), c.data(), p), "");  // first launch: module load
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const auto t0 = std::chrono::steady_clock::now();
  ASSERT_EQ(ReferenceGemmGpu(a.data(), b.data(), c.data(), p), "");
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  std::printf("GPU reference bf16 4096^3: %.1f ms (%.1f TFLOPS)\n", ms, p.Flops() / ms / 1e9);
  EXPECT_LT(ms, 1000);
  std::vector<double> out;
  ASSERT_EQ(CopyToHostAsDouble(c.data(), size_t(p.m * p.n), DType::kFP32, true, &out), "");
  int64_t unwritten = 0;
  for (double x : out) unwritten += IsPoison(x, DType::kFP32) ? 1 : 0;
  EXPECT_EQ(unwritten, 0);
}

TEST_F(GpuReference, RefusesAnEmptyShape) {
  EXPECT_NE(ReferenceGemmGpu(nullptr, nullptr, nullptr, {.m = 0, .n = 4, .k = 4}), "");
}

}  // namespace
}  // namespace ablation::kernels
