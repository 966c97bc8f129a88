// The FP64 reference and Compare on synthetic data (host-only).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "kernels/common/buffers.h"
#include "kernels/common/element_values.h"
#include "kernels/reference.h"

namespace ablation::kernels {
namespace {

std::vector<double> Random(size_t n, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<double> v(n);
  for (double& x : v) x = u(gen);
  return v;
}

/// Rounds to bf16 (nearest even), as a kernel's output would be.
double RoundBf16(double x) {
  float f = float(x);
  uint32_t u;
  std::memcpy(&u, &f, 4);
  u += 0x7FFF + ((u >> 16) & 1);
  return Bf16BitsToDouble(uint16_t(u >> 16));
}

TEST(ReferenceGemm, SmallKnownProduct) {
  // [1 2; 3 4] * [5 6; 7 8] = [19 22; 43 50]
  auto c = ReferenceGemm({1, 2, 3, 4}, {5, 6, 7, 8}, 2, 2, 2);
  EXPECT_EQ(c, (std::vector<double>{19, 22, 43, 50}));
}

TEST(ReferenceGemm, MatchesNaiveOnRectangular) {
  const int64_t m = 37, n = 23, k = 19;
  auto a = Random(m * k, 1), b = Random(k * n, 2);
  auto c = ReferenceGemm(a, b, m, n, k);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double s = 0;
      for (int64_t kk = 0; kk < k; ++kk) s += a[i * k + kk] * b[kk * n + j];
      EXPECT_NEAR(c[i * n + j], s, 1e-12);
    }
}

TEST(ReferenceGemm, ThreadCountDoesNotChangeABit) {
  // Ragged on purpose: rows not a multiple of the row group or of the threads, columns not a
  // multiple of the column block.
  const int64_t m = 67, n = 531, k = 45;
  auto a = Random(m * k, 5), b = Random(k * n, 6);
  const std::vector<double> one = ReferenceGemm(a, b, m, n, k, 1);
  for (int threads : {0, 2, 3, 7, 64, 1000}) {
    SCOPED_TRACE(threads);
    const std::vector<double> many = ReferenceGemm(a, b, m, n, k, threads);
    ASSERT_EQ(many.size(), one.size());
    EXPECT_EQ(std::memcmp(many.data(), one.data(), one.size() * sizeof(double)), 0);
  }
  // And every element is the ascending-k sum.
  for (int64_t i = 0; i < m; i += 11)
    for (int64_t j = 0; j < n; j += 13) {
      double s = 0;
      for (int64_t kk = 0; kk < k; ++kk) s += a[i * k + kk] * b[kk * n + j];
      EXPECT_NEAR(one[i * n + j], s, 1e-12);
    }
}

TEST(ReferenceGemm, EmptyAndOneRow) {
  EXPECT_TRUE(ReferenceGemm({}, {}, 0, 5, 3).empty());
  // One row: one thread, however many are asked for.
  EXPECT_EQ(ReferenceGemm({1, 2}, {3, 4, 5, 6}, 1, 2, 2, 8), (std::vector<double>{13, 16}));
  // K = 0: the empty sums are zero.
  EXPECT_EQ(ReferenceGemm({}, {}, 2, 2, 0), (std::vector<double>{0, 0, 0, 0}));
}

class CompareTest : public ::testing::Test {
 protected:
  // A bf16-rounded output of a correct kernel at K = 8192, and the same with one K tile missing.
  static constexpr int64_t kM = 32, kN = 32, kK = 8192;
  void SetUp() override {
    a_ = Random(kM * kK, 3);
    b_ = Random(kK * kN, 4);
    ref_ = ReferenceGemm(a_, b_, kM, kN, kK);
    good_.resize(ref_.size());
    for (size_t i = 0; i < ref_.size(); ++i) good_[i] = RoundBf16(ref_[i]);
    // Drop k in [4096, 4128): one BK=32 tile.
    dropped_ = good_;
    for (int64_t i = 0; i < kM; ++i)
      for (int64_t j = 0; j < kN; ++j) {
        double s = 0;
        for (int64_t kk = 4096; kk < 4128; ++kk) s += a_[i * kK + kk] * b_[kk * kN + j];
        dropped_[i * kN + j] = RoundBf16(ref_[i * kN + j] - s);
      }
  }
  std::vector<double> a_, b_, ref_, good_, dropped_;
};

TEST_F(CompareTest, CorrectBf16OutputPassesAtK8192) {
  Comparison c = Compare(good_, ref_, DType::kBF16, DefaultTolerance(DType::kBF16));
  EXPECT_TRUE(c.passed) << "rel_frobenius " << c.rel_frobenius_error << " mismatches "
                        << c.mismatches;
  EXPECT_EQ(c.mismatches, 0);
  EXPECT_LT(c.rel_frobenius_error, 3e-3);
}

TEST_F(CompareTest, DroppedKTileFails) {
  Comparison c = Compare(dropped_, ref_, DType::kBF16, DefaultTolerance(DType::kBF16));
  EXPECT_FALSE(c.passed);
  EXPECT_GT(c.mismatches, 0);
  EXPECT_GT(c.rel_frobenius_error, 1e-2);
}

TEST_F(CompareTest, NanFails) {
  auto out = good_;
  out[5] = std::nan("");
  Comparison c = Compare(out, ref_, DType::kBF16, DefaultTolerance(DType::kBF16));
  EXPECT_FALSE(c.passed);
  EXPECT_EQ(c.nan_count, 1);
  EXPECT_EQ(c.unwritten_count, 0);
  out[5] = INFINITY;
  c = Compare(out, ref_, DType::kBF16, DefaultTolerance(DType::kBF16));
  EXPECT_EQ(c.nan_count, 1);
}

TEST_F(CompareTest, PoisonCountsAsUnwritten) {
  auto out = good_;
  out[0] = Bf16BitsToDouble(kPoisonBf16);
  out[7] = Bf16BitsToDouble(kPoisonBf16);
  Comparison c = Compare(out, ref_, DType::kBF16, DefaultTolerance(DType::kBF16));
  EXPECT_FALSE(c.passed);
  EXPECT_EQ(c.unwritten_count, 2);
  EXPECT_EQ(c.nan_count, 0);
}

TEST_F(CompareTest, ExactToleranceDemandsIdentity) {
  EXPECT_TRUE(Compare(good_, good_, DType::kBF16, ExactTolerance()).passed);
  auto out = good_;
  out[3] = std::nextafter(out[3], 1e9);
  EXPECT_FALSE(Compare(out, good_, DType::kBF16, ExactTolerance()).passed);
}

TEST(CompareInt8, AbsoluteBound) {
  std::vector<double> ref = {10, -3, 0, 100};
  EXPECT_TRUE(Compare(ref, ref, DType::kINT8, DefaultTolerance(DType::kINT8)).passed);
  auto out = ref;
  out[2] = 1;  // off by one where the reference is 0: beyond 0.5 abs
  EXPECT_FALSE(Compare(out, ref, DType::kINT8, DefaultTolerance(DType::kINT8)).passed);
  out = ref;
  out[3] = double(kPoisonInt32);
  Comparison c = Compare(out, ref, DType::kINT8, DefaultTolerance(DType::kINT8));
  EXPECT_EQ(c.unwritten_count, 1);
}

TEST(Tolerance, Defaults) {
  EXPECT_DOUBLE_EQ(DefaultTolerance(DType::kBF16).rel_frobenius, 1e-2);
  EXPECT_DOUBLE_EQ(DefaultTolerance(DType::kFP16).rel_frobenius, 1e-2);
  EXPECT_DOUBLE_EQ(DefaultTolerance(DType::kFP32).rel_frobenius, 1e-3);
  EXPECT_DOUBLE_EQ(DefaultTolerance(DType::kTF32).rel_frobenius, 5e-3);
  EXPECT_DOUBLE_EQ(DefaultTolerance(DType::kINT8).abs, 0.5);
  EXPECT_DOUBLE_EQ(DefaultTolerance(DType::kINT8).rel, 0.1);
  EXPECT_DOUBLE_EQ(DefaultTolerance(DType::kFP8).rel_frobenius, 1e-2);
  EXPECT_DOUBLE_EQ(DefaultTolerance(DType::kFP8).rel, 2e-2);
  Tolerance e = ExactTolerance();
  EXPECT_EQ(e.rel_frobenius, 0);
  EXPECT_EQ(e.abs, 0);
  EXPECT_EQ(e.rel, 0);
}

}  // namespace
}  // namespace ablation::kernels
