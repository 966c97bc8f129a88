#include "kernels/cublas/cublas_catalog.h"
#include "kernels/cublas/cublas_lt.h"

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace ablation::kernels {
namespace {

std::string Positive(const Problem& p) {
  if (p.m <= 0) return "m must be positive, got " + std::to_string(p.m);
  if (p.n <= 0) return "n must be positive, got " + std::to_string(p.n);
  if (p.k <= 0) return "k must be positive, got " + std::to_string(p.k);
  constexpr int64_t kIntMax = (int64_t(1) << 31) - 1;
  if (p.m > kIntMax || p.n > kIntMax || p.k > kIntMax) return "m, n and k must fit in int";
  return "";
}

std::string DTypeIs(DType want, const Problem& p) {
  if (p.dtype == want) return "";
  return "dtype must be " + std::string(ToString(want)) + " for this entry, got " +
         std::string(ToString(p.dtype));
}

/// cublasGemmEx takes any leading dimension: rows that are not whole 16-byte chunks (n or k not a
/// multiple of 16 bytes' elements) run cuBLAS's own kernels for them, as they would for a user.
/// No refusal for the shape: the reference runs every shape a family under test may take (the
/// sm90 rungs take all of them), and both sides of a comparison run the same problem.
std::string CublasCanImplement(DType want, const Problem& p) {
  if (std::string e = DTypeIs(want, p); !e.empty()) return e;
  return Positive(p);
}

/// What cuBLASLt's "TN" kernels ask of leading dimensions: k (of A and B) a multiple of
/// `k_multiple`, n (of C) of `n_multiple`; a refusal says why (k_why, n_why).
std::string LeadingDimensions(const Problem& p, DType dtype, int k_multiple, int n_multiple,
                              const std::string& k_why, const std::string& n_why) {
  if (std::string e = DTypeIs(dtype, p); !e.empty()) return e;
  if (std::string e = Positive(p); !e.empty()) return e;
  if (p.k % k_multiple != 0) {
    return "k must be a multiple of " + std::to_string(k_multiple) + " (" + k_why + "), got " +
           std::to_string(p.k);
  }
  if (p.n % n_multiple != 0) {
    return "n must be a multiple of " + std::to_string(n_multiple) + " (" + n_why + "), got " +
           std::to_string(p.n);
  }
  return "";
}

/// cuBLASLt's IMMA kernels in the regular (column-major) data order: "TN" operands, leading
/// dimensions and cuBLAS's m and k multiples of 4 (here: k is the leading dimension of A and B,
/// n that of C and cuBLAS's m).
std::string CublasInt8CanImplement(const Problem& p) {
  return LeadingDimensions(p, DType::kINT8, 4, 4,
                           "cuBLASLt IMMA: k is the leading dimension of int8 A and B",
                           "cuBLASLt IMMA: n is the leading dimension of the int32 C");
}

/// cuBLASLt's fp8 GEMM: "TN" operands (as int8), leading dimensions of 16 bytes: k (A and B,
/// e4m3) a multiple of 16 and n (the bf16 C) a multiple of 8.
std::string CublasFp8CanImplement(const Problem& p) {
  return LeadingDimensions(
      p, DType::kFP8, 16, 8,
      "cuBLASLt fp8: k is the leading dimension of the e4m3 A and B, in rows of 16 bytes",
      "cuBLASLt fp8: n is the leading dimension of the bf16 C, in rows of 16 bytes");
}

/// One cuBLAS entry: every field but these is the family's.
void AddEntry(Registry& registry, const char* name, DType dtype, std::string description,
              std::vector<std::pair<std::string, ParamValue>> params,
              std::function<std::string(const Problem&)> can_implement,
              BLayout b_layout = BLayout::kKN) {
  Variant v;
  v.name = name;
  v.family = "cublas";
  v.description = std::move(description);
  v.params = std::move(params);
  v.dtypes = {dtype};
  v.b_layout = b_layout;
  v.can_implement = std::move(can_implement);
  registry.Add(std::move(v));
}

/// The two baselines of one dtype: cublas_<dtype>, the heuristic's first algorithm, and
/// cublas_<dtype>_best, the fastest of the heuristic's candidates (kernels/cublas/cublas_lt.h).
/// `what` says what is computed and how; `params` are the entries' shared parameters.
void AddPair(Registry& registry, DType dtype, const std::string& what,
             std::vector<std::pair<std::string, ParamValue>> params,
             std::function<std::string(const Problem&)> can_implement, BLayout b_layout) {
  const std::string name = "cublas_" + std::string(ToString(dtype));
  auto heuristic = params, best = params;
  heuristic.emplace_back("pick", "heuristic");
  best.emplace_back("pick", "best");
  AddEntry(registry, name.c_str(), dtype,
           "cuBLASLt cublasLtMatmul, " + what +
               ", the heuristic's first algorithm for the worker's 32 MiB workspace (cublasGemmEx "
               "where cuBLASLt offers none for the problem)",
           std::move(heuristic), can_implement, b_layout);
  AddEntry(registry, (name + "_best").c_str(), dtype,
           "cuBLASLt cublasLtMatmul, " + what + ", the fastest of the heuristic's (up to " +
               std::to_string(kLtCandidates) +
               ") candidates, each timed once per device, shape and library version; the choice "
               "is stored and every later run launches it",
           std::move(best), std::move(can_implement), b_layout);
}

/// bf16 or fp16 in and out, FP32 accumulation.
void AddHalf(Registry& registry, DType dtype) {
  AddPair(
      registry, dtype,
      std::string(ToString(dtype)) + " inputs and output, FP32 accumulation (CUBLAS_COMPUTE_32F)",
      {{"api", "cublasLtMatmul"}, {"compute", "CUBLAS_COMPUTE_32F"}},
      [dtype](const Problem& p) { return CublasCanImplement(dtype, p); }, BLayout::kKN);
}

/// fp32 inputs, output and arithmetic: CUBLAS_COMPUTE_32F, which in cuBLASLt is IEEE FP32 (TF32
/// only with CUBLAS_COMPUTE_32F_FAST_TF32); the cublasGemmEx fallback runs on a handle in
/// CUBLAS_DEFAULT_MATH (the launcher refuses a handle switched to TF32 tensor-op math).
void AddFp32(Registry& registry) {
  AddPair(
      registry, DType::kFP32,
      "fp32 inputs and output, FP32 FFMA arithmetic without TF32 (CUBLAS_COMPUTE_32F)",
      {{"api", "cublasLtMatmul"},
       {"compute", "CUBLAS_COMPUTE_32F"},
       {"math_mode", "CUBLAS_DEFAULT_MATH"}},
      [](const Problem& p) { return CublasCanImplement(DType::kFP32, p); }, BLayout::kKN);
}

/// fp32 words holding tf32 values in, fp32 out, TF32 Tensor Cores with FP32 accumulation.
void AddTf32(Registry& registry) {
  AddPair(
      registry, DType::kTF32,
      "fp32 storage, TF32 Tensor Cores with FP32 accumulation (CUBLAS_COMPUTE_32F_FAST_TF32)",
      {{"api", "cublasLtMatmul"}, {"compute", "CUBLAS_COMPUTE_32F_FAST_TF32"}},
      [](const Problem& p) { return CublasCanImplement(DType::kTF32, p); }, BLayout::kKN);
}

/// int8 inputs, int32 accumulation and output, through cuBLASLt. Row-major C = A * B is computed
/// as column-major C^T = B^T * A^T, and IMMA wants the first operand transposed ("TN"): so B is
/// given N x K (b_layout kNK), which column-major is the K x N matrix that op T turns into B^T.
void AddInt8(Registry& registry) {
  AddPair(registry, DType::kINT8,
          "int8 inputs, int32 accumulation and int32 output (CUBLAS_COMPUTE_32I, IMMA Tensor "
          "Cores), TN operands (B given N x K)",
          {{"api", "cublasLtMatmul"},
           {"compute", "CUBLAS_COMPUTE_32I"},
           {"scale", "CUDA_R_32I"},
           {"operands", "TN (C^T = op_T(B_nk) * A^T)"}},
          &CublasInt8CanImplement, BLayout::kNK);
}

/// e4m3 inputs with per-tensor scales, FP32 accumulation, bf16 output, through cuBLASLt: "TN"
/// as int8 (B given N x K). Fast accumulation, as the sm90 fp8 rungs' wgmma accumulate.
void AddFp8(Registry& registry) {
  AddPair(registry, DType::kFP8,
          "fp8 e4m3 inputs with per-tensor scales (A and B scale pointers), FP32 accumulation in "
          "the tensor cores (CUBLASLT_MATMUL_DESC_FAST_ACCUM), bf16 output, TN operands (B given "
          "N x K)",
          {{"api", "cublasLtMatmul"},
           {"compute", "CUBLAS_COMPUTE_32F"},
           {"inputs", "CUDA_R_8F_E4M3"},
           {"output", "CUDA_R_16BF"},
           {"fast_accum", 1},
           {"operands", "TN (C^T = op_T(B_nk) * A^T)"}},
          &CublasFp8CanImplement, BLayout::kNK);
}

}  // namespace

bool LaunchesChosenAlgo(const Variant& v) {
  return v.family == "cublas" && v.Param("pick") == "best";
}

void RegisterCublas(Registry& registry) {
  AddHalf(registry, DType::kBF16);
  AddHalf(registry, DType::kFP16);
  AddFp32(registry);
  AddTf32(registry);
  AddInt8(registry);
  AddFp8(registry);
}

}  // namespace ablation::kernels
