#include "kernels/cublas/cublas_gemm.h"

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <tuple>

namespace ablation::kernels {
namespace {

/// Row-major C = A * B through column-major cuBLAS: C^T = B^T * A^T, where the row-major
/// buffers of B (ld n) and A (ld k) already are B^T and A^T column-major. So B goes first and
/// the result is C^T column-major, i.e. C row-major (ld n).
std::string CublasGemm(const GemmArgs& args, DType want, cudaDataType_t type,
                       cublasComputeType_t compute = CUBLAS_COMPUTE_32F) {
  const Problem& p = args.problem;
  if (p.dtype != want) return "cuBLAS entry: dtype mismatch";
  if (args.cublas == nullptr) return "cuBLAS entry: no cublasHandle_t in GemmArgs::cublas";
  auto handle = static_cast<cublasHandle_t>(args.cublas);
  if (cublasStatus_t s = cublasSetStream(handle, static_cast<cudaStream_t>(args.stream));
      s != CUBLAS_STATUS_SUCCESS) {
    return std::string("cublasSetStream: ") + cublasGetStatusString(s);
  }
  const float alpha = 1.0f, beta = 0.0f;
  const int m = int(p.m), n = int(p.n), k = int(p.k);
  cublasStatus_t s =
      cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &alpha, args.b, type, n, args.a, type,
                   k, &beta, args.c, type, n, compute, CUBLAS_GEMM_DEFAULT);
  if (s != CUBLAS_STATUS_SUCCESS) return std::string("cublasGemmEx: ") + cublasGetStatusString(s);
  return "";
}

std::string LaunchBf16(const GemmArgs& args) { return CublasGemm(args, DType::kBF16, CUDA_R_16BF); }
std::string LaunchFp16(const GemmArgs& args) { return CublasGemm(args, DType::kFP16, CUDA_R_16F); }
std::string LaunchTf32(const GemmArgs& args) {
  return CublasGemm(args, DType::kTF32, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32);
}

/// FP32 without TF32: CUBLAS_COMPUTE_32F lets cuBLAS use TF32 only when the handle's math mode
/// allows it (CUBLAS_TF32_TENSOR_OP_MATH); the worker's handle is in CUBLAS_DEFAULT_MATH, and a
/// handle changed by someone else is refused rather than changed back under its owner.
std::string LaunchFp32(const GemmArgs& args) {
  if (args.cublas == nullptr) return "cuBLAS entry: no cublasHandle_t in GemmArgs::cublas";
  cublasMath_t mode;
  if (cublasStatus_t s = cublasGetMathMode(static_cast<cublasHandle_t>(args.cublas), &mode);
      s != CUBLAS_STATUS_SUCCESS) {
    return std::string("cublasGetMathMode: ") + cublasGetStatusString(s);
  }
  if ((int(mode) & ~int(CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION)) !=
          int(CUBLAS_DEFAULT_MATH) &&
      (int(mode) & ~int(CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION)) !=
          int(CUBLAS_PEDANTIC_MATH)) {
    return "cublas_fp32: the cuBLAS handle's math mode (" + std::to_string(int(mode)) +
           ") may use TF32; it must be CUBLAS_DEFAULT_MATH";
  }
  return CublasGemm(args, DType::kFP32, CUDA_R_32F, CUBLAS_COMPUTE_32F);
}

// ---- cuBLASLt: int8 (IMMA) and fp8 (e4m3, QMMA)

std::string LtText(const char* what, cublasStatus_t s) {
  return std::string(what) + ": " + cublasGetStatusString(s);
}

/// Largest power of two (at most 256) that divides the address: what the heuristic may assume.
uint32_t Alignment(const void* p) {
  const auto a = reinterpret_cast<uintptr_t>(p);
  uint32_t align = 256;
  while (align > 1 && (a & (align - 1)) != 0) align >>= 1;
  return align;
}

/// Descriptors and the heuristic's algorithm for one (handle, dtype, shape, workspace, alignments,
/// scales). Made once and kept for the life of the process: building them costs far more host
/// time than an int8 or fp8 GEMM of a few thousand cubed takes on the device, and a timed launch
/// must not include it.
struct LtPlan {
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t b_nk = nullptr;  // cuBLAS's A: k x n column-major (ld k), op T
  cublasLtMatrixLayout_t a = nullptr;     // cuBLAS's B: k x m column-major (ld k), op N
  cublasLtMatrixLayout_t c = nullptr;     // n x m column-major (ld n) = C row-major
  cublasLtMatmulAlgo_t algo{};
};

using LtKey = std::tuple<void*, DType, int64_t, int64_t, int64_t, size_t, uint32_t, uint32_t,
                         uint32_t, const float*, const float*>;

/// The types of a cuBLASLt entry: int8 (int32 arithmetic and C), or fp8 (e4m3 A and B with their
/// scales, FP32 arithmetic, bf16 C).
struct LtTypes {
  cublasComputeType_t compute;
  cudaDataType_t scale, ab, c;
};

LtTypes LtTypesOf(DType d) {
  if (d == DType::kFP8) return {CUBLAS_COMPUTE_32F, CUDA_R_32F, CUDA_R_8F_E4M3, CUDA_R_16BF};
  return {CUBLAS_COMPUTE_32I, CUDA_R_32I, CUDA_R_8I, CUDA_R_32I};
}

std::string MakeLtPlan(cublasLtHandle_t handle, const GemmArgs& args, const uint32_t (&align)[3],
                       LtPlan* plan) {
  const Problem& p = args.problem;
  const size_t workspace_bytes = args.workspace_bytes;
  const LtTypes types = LtTypesOf(p.dtype);
  cublasStatus_t s;
  if ((s = cublasLtMatmulDescCreate(&plan->desc, types.compute, types.scale)) !=
      CUBLAS_STATUS_SUCCESS) {
    return LtText("cublasLtMatmulDescCreate", s);
  }
  if (p.dtype == DType::kFP8) {
    // cuBLAS's A is our B: its scale is scale_b. Fast accumulation: the products are summed in
    // the tensor cores' fp8 accumulation as wgmma does for the sm90 fp8 rungs, not promoted to
    // FP32 every few k-steps, so both sides of a comparison sum the same way.
    const int8_t fast_accum = 1;
    if ((s = cublasLtMatmulDescSetAttribute(plan->desc, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER,
                                            &args.scale_b, sizeof(args.scale_b))) !=
            CUBLAS_STATUS_SUCCESS ||
        (s = cublasLtMatmulDescSetAttribute(plan->desc, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER,
                                            &args.scale_a, sizeof(args.scale_a))) !=
            CUBLAS_STATUS_SUCCESS ||
        (s = cublasLtMatmulDescSetAttribute(plan->desc, CUBLASLT_MATMUL_DESC_FAST_ACCUM,
                                            &fast_accum, sizeof(fast_accum))) !=
            CUBLAS_STATUS_SUCCESS) {
      return LtText("cublasLtMatmulDescSetAttribute(scales, fast accumulation)", s);
    }
  }
  const cublasOperation_t op_t = CUBLAS_OP_T, op_n = CUBLAS_OP_N;
  if ((s = cublasLtMatmulDescSetAttribute(plan->desc, CUBLASLT_MATMUL_DESC_TRANSA, &op_t,
                                          sizeof(op_t))) != CUBLAS_STATUS_SUCCESS ||
      (s = cublasLtMatmulDescSetAttribute(plan->desc, CUBLASLT_MATMUL_DESC_TRANSB, &op_n,
                                          sizeof(op_n))) != CUBLAS_STATUS_SUCCESS) {
    return LtText("cublasLtMatmulDescSetAttribute(TRANSA/TRANSB)", s);
  }
  const uint64_t m = uint64_t(p.m), n = uint64_t(p.n), k = uint64_t(p.k);
  if ((s = cublasLtMatrixLayoutCreate(&plan->b_nk, types.ab, k, n, int64_t(k))) !=
          CUBLAS_STATUS_SUCCESS ||
      (s = cublasLtMatrixLayoutCreate(&plan->a, types.ab, k, m, int64_t(k))) !=
          CUBLAS_STATUS_SUCCESS ||
      (s = cublasLtMatrixLayoutCreate(&plan->c, types.c, n, m, int64_t(n))) !=
          CUBLAS_STATUS_SUCCESS) {
    return LtText("cublasLtMatrixLayoutCreate", s);
  }
  cublasLtMatmulPreference_t pref = nullptr;
  if ((s = cublasLtMatmulPreferenceCreate(&pref)) != CUBLAS_STATUS_SUCCESS) {
    return LtText("cublasLtMatmulPreferenceCreate", s);
  }
  std::string err;
  const auto set = [&](cublasLtMatmulPreferenceAttributes_t attr, const auto& value) {
    if (err.empty() && (s = cublasLtMatmulPreferenceSetAttribute(
                            pref, attr, &value, sizeof(value))) != CUBLAS_STATUS_SUCCESS) {
      err = LtText("cublasLtMatmulPreferenceSetAttribute", s);
    }
  };
  set(CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, uint64_t(workspace_bytes));
  set(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, align[0]);  // B (N x K)
  set(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, align[1]);  // A
  set(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, align[2]);
  set(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, align[2]);
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  if (err.empty() &&
      (s = cublasLtMatmulAlgoGetHeuristic(handle, plan->desc, plan->b_nk, plan->a, plan->c, plan->c,
                                          pref, 1, &result, &found)) != CUBLAS_STATUS_SUCCESS) {
    err = LtText("cublasLtMatmulAlgoGetHeuristic", s);
  }
  cublasLtMatmulPreferenceDestroy(pref);
  if (!err.empty()) return err;
  if (found == 0) {
    return "cuBLASLt has no " + std::string(ToString(p.dtype)) + " algorithm for " +
           std::to_string(p.m) + "x" + std::to_string(p.n) + "x" + std::to_string(p.k) + " with " +
           std::to_string(workspace_bytes) + " bytes of workspace";
  }
  plan->algo = result.algo;
  return "";
}

/// int8 or fp8 through cuBLASLt, "TN" (B given N x K).
std::string LaunchLt(const GemmArgs& args, DType want) {
  const Problem& p = args.problem;
  const std::string name = "cublas_" + std::string(ToString(want));
  if (p.dtype != want) return "cuBLAS entry: dtype mismatch";
  if (args.cublaslt == nullptr) return name + ": no cublasLtHandle_t in GemmArgs::cublaslt";
  if (args.workspace_bytes != 0 && args.workspace == nullptr) {
    return name + ": GemmArgs::workspace_bytes without a workspace";
  }
  if (want == DType::kFP8 && (args.scale_a == nullptr || args.scale_b == nullptr)) {
    return name + ": fp8 needs the scales of A and B (GemmArgs::scale_a, scale_b)";
  }
  if (want == DType::kFP8 && (Alignment(args.scale_a) < 16 || Alignment(args.scale_b) < 16)) {
    return name +
           ": the scales of A and B must each be 16-byte aligned (cuBLASLt refuses scale "
           "pointers a float apart)";
  }
  // IMMA in the regular data order wants 4-byte aligned pointers (16 for its fast paths); fp8
  // wants 16 bytes.
  const uint32_t align[3] = {Alignment(args.b), Alignment(args.a), Alignment(args.c)};
  const uint32_t need = want == DType::kFP8 ? 16 : 4;
  if (align[0] < need || align[1] < need || align[2] < need) {
    return name + ": A, B and C must be at least " + std::to_string(need) +
           "-byte aligned (cuBLASLt " + (want == DType::kFP8 ? "fp8" : "IMMA") + ")";
  }
  auto handle = static_cast<cublasLtHandle_t>(args.cublaslt);
  static std::mutex mu;
  static std::map<LtKey, LtPlan> plans;
  const LtPlan* plan = nullptr;
  {
    std::lock_guard<std::mutex> lock(mu);
    const LtKey key{args.cublaslt,        p.dtype,  p.m,      p.n,      p.k,
                    args.workspace_bytes, align[0], align[1], align[2], args.scale_a,
                    args.scale_b};
    auto it = plans.find(key);
    if (it == plans.end()) {
      LtPlan made;
      if (std::string e = MakeLtPlan(handle, args, align, &made); !e.empty()) {
        if (made.desc) cublasLtMatmulDescDestroy(made.desc);
        if (made.b_nk) cublasLtMatrixLayoutDestroy(made.b_nk);
        if (made.a) cublasLtMatrixLayoutDestroy(made.a);
        if (made.c) cublasLtMatrixLayoutDestroy(made.c);
        return name + ": " + e;
      }
      it = plans.emplace(key, made).first;
    }
    plan = &it->second;  // std::map nodes are stable
  }
  const int32_t alpha_i = 1, beta_i = 0;
  const float alpha_f = 1.0f, beta_f = 0.0f;
  const bool fp8 = want == DType::kFP8;
  const cublasStatus_t s = cublasLtMatmul(
      handle, plan->desc, fp8 ? static_cast<const void*>(&alpha_f) : &alpha_i, args.b, plan->b_nk,
      args.a, plan->a, fp8 ? static_cast<const void*>(&beta_f) : &beta_i, args.c, plan->c, args.c,
      plan->c, &plan->algo, args.workspace, args.workspace_bytes,
      static_cast<cudaStream_t>(args.stream));
  if (s != CUBLAS_STATUS_SUCCESS) return LtText("cublasLtMatmul", s);
  return "";
}

std::string LaunchInt8(const GemmArgs& args) { return LaunchLt(args, DType::kINT8); }
std::string LaunchFp8(const GemmArgs& args) { return LaunchLt(args, DType::kFP8); }

const void* NoKernel(DType) { return nullptr; }

}  // namespace

void BindCublasLaunchers(Registry& registry) {
  if (Variant* v = registry.FindMutable("cublas_bf16")) {
    v->launch = &LaunchBf16;
    v->kernel = &NoKernel;
  }
  if (Variant* v = registry.FindMutable("cublas_fp16")) {
    v->launch = &LaunchFp16;
    v->kernel = &NoKernel;
  }
  if (Variant* v = registry.FindMutable("cublas_fp32")) {
    v->launch = &LaunchFp32;
    v->kernel = &NoKernel;
  }
  if (Variant* v = registry.FindMutable("cublas_tf32")) {
    v->launch = &LaunchTf32;
    v->kernel = &NoKernel;
  }
  if (Variant* v = registry.FindMutable("cublas_int8")) {
    v->launch = &LaunchInt8;
    v->kernel = &NoKernel;
  }
  if (Variant* v = registry.FindMutable("cublas_fp8")) {
    v->launch = &LaunchFp8;
    v->kernel = &NoKernel;
  }
}

}  // namespace ablation::kernels
