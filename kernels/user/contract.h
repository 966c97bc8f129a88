// A user kernel's own contract, for kernels that are not GEMMs (a softmax, a normalisation, a
// reduction, a GEMM with a fused epilogue): `[contract] kind = "general"` in the manifest names the
// problem's sizes (rows, cols, ...: not only M, N, K), the kernel's tensors (dtype, shape as
// expressions of the sizes, input or output, how inputs are filled), its scalar arguments, the
// order of the entry's parameters, a reference kernel to check it against with a stated
// tolerance, and its work model (operations and bytes as expressions of the sizes) for a
// roofline. The GEMM contract stays what a manifest without `kind` declares (manifest.h).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "kernels/common/problem.h"
#include "kernels/user/expression.h"

namespace ablation::kernels::user {

/// How an input is filled before every batch (fresh values, seeded per batch by the worker).
struct Fill {
  enum class Kind { kNormal, kUniform, kIntegers };
  Kind kind = Kind::kNormal;
  double a = 0, b = 1;  ///< normal: mean and standard deviation; uniform, integers: low and high
};

enum class TensorRole { kInput, kOutput, kInOut };

struct TensorSpec {
  std::string name;  ///< [a-z][a-z0-9_]*: a parameter of the entry
  DType dtype = DType::kBF16;
  /// Its dimensions, outermost first, row-major: expressions of the sizes alone (a tensor is the
  /// problem's, the same for every knob set).
  std::vector<std::unique_ptr<Expression>> shape;
  TensorRole role = TensorRole::kInput;
  Fill fill;  ///< inputs and inouts
};

/// A scalar argument of the entry, passed by value.
struct ScalarSpec {
  enum class Type { kF32, kI32, kI64 };
  std::string name;
  Type type = Type::kF32;
  double value = 0;
};

/// How far the kernel's outputs may be from the reference's: |out - ref| <= abs + rel * |ref|
/// element by element, or bit for bit.
struct Tolerance {
  double abs = 0, rel = 0;
  bool bit_identical = false;
};

/// A reference the service owns (server/worker/own_reference.cu), for kernels whose source has
/// none of its own (PTX from another compiler): each reads one input whose last dimension is a
/// row (the others counted as rows) and writes one output, accumulating in fp64.
///   row_softmax  out[r][c] = exp(in[r][c] - max_r) / sum_c exp(in[r][c] - max_r)
///   rms_norm     out[r][c] = in[r][c] / sqrt(mean_c in[r][c]^2 + eps) * weight[c]
///   row_sum      out[r]    = sum_c in[r][c]
enum class BuiltinReference { kNone, kRowSoftmax, kRmsNorm, kRowSum };

/// The reference a kernel is checked against: a kernel of the same source (a simple one its
/// author trusts) taking the same parameters, with its own launch; or one of the service's,
/// bound to the contract's tensors by name.
struct ReferenceSpec {
  std::string entry;                                        ///< "" for a built-in one
  std::unique_ptr<Expression> block, grid_x, grid_y, smem;  ///< of the sizes; y and smem optional
  BuiltinReference builtin = BuiltinReference::kNone;
  std::string input, output, weight;  ///< a built-in's tensors (weight: rms_norm's alone)
  double eps = 0;                     ///< rms_norm's: a number, or the value of `eps_scalar`
  std::string eps_scalar;
  Tolerance tolerance;
};

/// The word a manifest names a built-in reference by ("row_softmax"), or "" for kNone.
std::string BuiltinName(BuiltinReference b);

/// Which compute peak a kernel's operations are held against: CUDA cores' fp32 FMA rate, or the
/// tensor cores' dense rate for the contract's dtype.
enum class OpsPeak { kFp32, kTensor };

/// The kernel's work at a problem, for its roofline: operations and bytes moved to and from
/// device memory (its tensors read and written once, as the author counts them).
struct WorkSpec {
  std::unique_ptr<Expression> ops, bytes;
  OpsPeak peak = OpsPeak::kFp32;
};

struct GeneralContract {
  std::vector<std::string> sizes;                ///< the problem's named sizes, in order
  std::map<std::string, int64_t> default_sizes;  ///< a run's sizes where it names none
  std::vector<TensorSpec> tensors;
  std::vector<ScalarSpec> scalars;
  /// The entry's parameters in order: every tensor once (a pointer), sizes and scalars as they
  /// are named.
  std::vector<std::string> params;
  /// How sizes are passed: int64 (`long long`) unless `size_type = "int32"` (Triton's PTX takes
  /// i32); a size past 2^31 - 1 is then refused rather than cut.
  bool sizes_int32 = false;
  ReferenceSpec reference;
  WorkSpec work;
};

/// Most tensors, scalars, sizes and dimensions one contract may have. Three sizes: a run's
/// problem keeps them as its M, N and K (contract_plan.h: ProblemOfSizes), so that every row,
/// history and comparison stores them where a GEMM's are.
inline constexpr int kMaxTensors = 8, kMaxScalars = 8, kMaxSizes = 3, kMaxDims = 4;

}  // namespace ablation::kernels::user
