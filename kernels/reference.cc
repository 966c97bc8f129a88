#include "kernels/reference.h"

#include <algorithm>
#include <cmath>
#include <thread>

#include "kernels/common/buffers.h"

namespace ablation::kernels {

namespace {

/// Rows computed together: each B element loaded serves this many rows. Columns in blocks of
/// kColumnBlock, so that the rows' partial sums stay in L1 while k runs through B's panel. Only
/// the traversal changes; every element is still summed in ascending k.
constexpr int64_t kRowGroup = 4;
constexpr int64_t kColumnBlock = 512;

void ReferenceRows(const double* a, const double* b, double* c, int64_t begin, int64_t end,
                   int64_t n, int64_t k) {
  for (int64_t i0 = begin; i0 < end; i0 += kRowGroup) {
    const int64_t rows = std::min(kRowGroup, end - i0);
    for (int64_t j0 = 0; j0 < n; j0 += kColumnBlock) {
      const int64_t j1 = std::min(n, j0 + kColumnBlock);
      for (int64_t kk = 0; kk < k; ++kk) {
        const double* bk = b + kk * n;
        for (int64_t r = 0; r < rows; ++r) {
          const double x = a[(i0 + r) * k + kk];
          double* ci = c + (i0 + r) * n;
          for (int64_t j = j0; j < j1; ++j) ci[j] += x * bk[j];
        }
      }
    }
  }
}

}  // namespace

std::vector<double> ReferenceGemm(const std::vector<double>& a, const std::vector<double>& b,
                                  int64_t m, int64_t n, int64_t k, int threads) {
  std::vector<double> c(size_t(m * n), 0.0);
  if (m <= 0 || n <= 0) return c;
  const int64_t hw = threads > 0 ? threads : int64_t(std::thread::hardware_concurrency());
  const int64_t workers = std::clamp<int64_t>(hw, 1, m);
  // Rows are dealt out in contiguous blocks, one per thread; the inner loop streams a row of B
  // and a row of C (vectorizes, no stride-n access).
  const int64_t per = (m + workers - 1) / workers;
  if (workers == 1) {
    ReferenceRows(a.data(), b.data(), c.data(), 0, m, n, k);
    return c;
  }
  std::vector<std::thread> pool;
  for (int64_t begin = 0; begin < m; begin += per) {
    pool.emplace_back(ReferenceRows, a.data(), b.data(), c.data(), begin, std::min(m, begin + per),
                      n, k);
  }
  for (std::thread& t : pool) t.join();
  return c;
}

Tolerance DefaultTolerance(DType dtype) {
  // Float types: a correct kernel's error is the output rounding (bf16: 2^-9 relative) plus fp32
  // accumulation noise, far below 1e-2 even at K = 8192; one K tile of 32 missing at K = 8192
  // shifts the output by sqrt(32/8192) = 6% of its RMS, far above.
  switch (dtype) {
    case DType::kBF16:
    case DType::kFP16:
      return {.rel_frobenius = 1e-2, .abs = 1e-2, .rel = 1e-2};
    case DType::kFP32:
      return {.rel_frobenius = 1e-3, .abs = 1e-3, .rel = 1e-3};
    case DType::kTF32:
      return {.rel_frobenius = 5e-3, .abs = 5e-3, .rel = 5e-3};
    case DType::kINT8:
      return {.rel_frobenius = 0.1, .abs = 0.5, .rel = 0.1};
    case DType::kFP8:
      // The tensor cores sum fp8 products in fewer bits than fp32 (no promotion: fast
      // accumulation), so two correct fp8 GEMMs differ by more than two bf16 GEMMs: on the H200
      // (2026-12-02) the rungs and cublas_fp8 were 1.7e-3 to 2.5e-3 from the FP64 product of the
      // dequantised inputs (relative Frobenius), and at 8192^3 the stream-K rungs and
      // cublas_fp8 differed by 2 (two bf16 steps) at 1 element of 67M. Element-wise 2e-2 (of the
      // output's RMS, and relative); the norm 1e-2: missing one k-tile of 128 at K = 8192 moves
      // the output by 12% of its RMS.
      return {.rel_frobenius = 1e-2, .abs = 2e-2, .rel = 2e-2};
  }
  return {};
}

Tolerance ExactTolerance() { return {}; }

Comparison Compare(const std::vector<double>& out, const std::vector<double>& ref, DType dtype,
                   const Tolerance& tol) {
  Comparison r;
  const size_t count = std::min(out.size(), ref.size());
  double ref_sq = 0;
  for (size_t i = 0; i < count; ++i) ref_sq += ref[i] * ref[i];
  const double ref_rms = count ? std::sqrt(ref_sq / double(count)) : 0.0;
  const bool is_int = dtype == DType::kINT8;
  const double abs_bound = is_int ? tol.abs : tol.abs * ref_rms;
  constexpr double kTiny = 1e-300;

  double err_sq = 0;
  for (size_t i = 0; i < count; ++i) {
    const double o = out[i], x = ref[i];
    if (IsPoison(o, dtype)) {
      ++r.unwritten_count;
      continue;
    }
    if (!std::isfinite(o)) {
      ++r.nan_count;
      continue;
    }
    const double d = std::fabs(o - x);
    err_sq += d * d;
    r.max_abs_error = std::max(r.max_abs_error, d);
    r.max_rel_error = std::max(r.max_rel_error, d / std::max(std::fabs(x), kTiny));
    if (d > abs_bound + tol.rel * std::fabs(x)) ++r.mismatches;
  }
  if (out.size() != ref.size()) {
    r.mismatches += int64_t(std::max(out.size(), ref.size()) - count);
  }
  r.rel_frobenius_error = ref_sq > 0 ? std::sqrt(err_sq / ref_sq) : (err_sq > 0 ? INFINITY : 0.0);
  r.passed = r.nan_count == 0 && r.unwritten_count == 0 && r.mismatches == 0 &&
             r.rel_frobenius_error <= tol.rel_frobenius;
  return r;
}

}  // namespace ablation::kernels
