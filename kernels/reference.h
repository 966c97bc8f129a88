// FP64 CPU reference GEMM and the comparison of an output against a reference. Host-only.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/common/problem.h"

namespace ablation::kernels {

/// C[m][n] = sum_k A[m][k] * B[k][n] in double, each sum in ascending k. A is M x K row-major,
/// B is K x N row-major. Inputs are the exact (already rounded) input values. Rows are shared
/// among `threads` std::threads (0: every hardware thread); a row's sums do not depend on which
/// thread computes it, so the result is the same bit for bit for any thread count.
std::vector<double> ReferenceGemm(const std::vector<double>& a, const std::vector<double>& b,
                                  int64_t m, int64_t n, int64_t k, int threads = 0);

struct Tolerance {
  double rel_frobenius = 0;  ///< bound on ||out - ref||_F / ||ref||_F
  /// An element mismatches if |out-ref| > abs_bound + rel * |ref|, where abs_bound is `abs` for
  /// int8 and `abs` times the RMS of the reference for float types (an absolute bound in units of
  /// the output's typical magnitude; elements near zero would fail any purely relative bound).
  double abs = 0;
  double rel = 0;
};

/// The dtype's tolerance: fp16/bf16 1e-2, fp8 1e-2 (norm) and 2e-2 (element), fp32 1e-3, tf32 5e-3, int8 0.5 abs / 0.1 rel.
Tolerance DefaultTolerance(DType dtype);
/// Bit-exact: every tolerance 0 (variants that promise identical outputs).
Tolerance ExactTolerance();

struct Comparison {
  double max_abs_error = 0;
  double max_rel_error = 0;  ///< max |out-ref| / max(|ref|, tiny) over elements
  double rel_frobenius_error = 0;
  int64_t mismatches = 0;       ///< elements outside abs + rel * |ref|
  int64_t nan_count = 0;        ///< NaN or Inf that are not the poison pattern
  int64_t unwritten_count = 0;  ///< elements still holding the poison pattern
  bool passed = false;  ///< no NaN, nothing unwritten, rel_frobenius within bound, no mismatches
};

/// Compares out against ref (both in output values as double).
Comparison Compare(const std::vector<double>& out, const std::vector<double>& ref, DType dtype,
                   const Tolerance& tol);

}  // namespace ablation::kernels
