#include "kernels/cublas/cublas_gemm.h"
#include "kernels/cublas/cublas_lt.h"
#include "kernels/cublas/lt_names.h"

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

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

// ---- cuBLASLt: every dtype's two baselines

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

/// The types of a dtype's cuBLASLt GEMM, and whether its operands are "TN" (int8 and fp8, whose
/// tensor-core kernels want the first operand transposed: B given N x K) or "NN" (the rest, as
/// cublasGemmEx took them).
struct LtTypes {
  cublasComputeType_t compute;
  cudaDataType_t scale, ab, c;
  bool tn;
};

LtTypes LtTypesOf(DType d) {
  switch (d) {
    case DType::kFP8:
      return {CUBLAS_COMPUTE_32F, CUDA_R_32F, CUDA_R_8F_E4M3, CUDA_R_16BF, true};
    case DType::kINT8:
      return {CUBLAS_COMPUTE_32I, CUDA_R_32I, CUDA_R_8I, CUDA_R_32I, true};
    case DType::kFP16:
      return {CUBLAS_COMPUTE_32F, CUDA_R_32F, CUDA_R_16F, CUDA_R_16F, false};
    case DType::kFP32:  // no TF32: CUBLAS_COMPUTE_32F is IEEE FP32 arithmetic in cuBLASLt
      return {CUBLAS_COMPUTE_32F, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, false};
    case DType::kTF32:
      return {CUBLAS_COMPUTE_32F_FAST_TF32, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, false};
    case DType::kBF16:
    default:
      return {CUBLAS_COMPUTE_32F, CUDA_R_32F, CUDA_R_16BF, CUDA_R_16BF, false};
  }
}

/// Descriptors and the heuristic's candidates for one (handle, dtype, shape, workspace,
/// alignments, scales). Made once and kept for the life of the process: building them costs far
/// more host time than a GEMM of a few thousand cubed takes on the device, and a timed launch
/// must not include it.
struct LtPlan {
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t op_a = nullptr;  // cuBLAS's A: our B (N x K col-major op T, or N x K ld n)
  cublasLtMatrixLayout_t op_b = nullptr;  // cuBLAS's B: our A, k x m column-major (ld k), op N
  cublasLtMatrixLayout_t c = nullptr;     // n x m column-major (ld n) = C row-major
  std::vector<cublasLtMatmulHeuristicResult_t> candidates;  // the heuristic's order; may be empty
  std::string none;                                         // why there are no candidates
};

using LtKey = std::tuple<void*, DType, int64_t, int64_t, int64_t, size_t, uint32_t, uint32_t,
                         uint32_t, const float*, const float*>;

std::string SetDescAttributes(const GemmArgs& args, const LtTypes& types, LtPlan* plan) {
  cublasStatus_t s;
  if (args.problem.dtype == DType::kFP8) {
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
  const cublasOperation_t op_a = types.tn ? CUBLAS_OP_T : CUBLAS_OP_N, op_n = CUBLAS_OP_N;
  if ((s = cublasLtMatmulDescSetAttribute(plan->desc, CUBLASLT_MATMUL_DESC_TRANSA, &op_a,
                                          sizeof(op_a))) != CUBLAS_STATUS_SUCCESS ||
      (s = cublasLtMatmulDescSetAttribute(plan->desc, CUBLASLT_MATMUL_DESC_TRANSB, &op_n,
                                          sizeof(op_n))) != CUBLAS_STATUS_SUCCESS) {
    return LtText("cublasLtMatmulDescSetAttribute(TRANSA/TRANSB)", s);
  }
  return "";
}

/// Row-major C = A * B as column-major C^T = op(B) * A^T: our A (M x K, ld k) is A^T column-major
/// (k x m); our B is, column-major, N x K with ld n (K x N row-major: "NN") or K x N with ld k
/// taken transposed (N x K row-major: "TN"); C^T is n x m with ld n, i.e. C row-major.
std::string MakeLayouts(const Problem& p, const LtTypes& types, LtPlan* plan) {
  const uint64_t m = uint64_t(p.m), n = uint64_t(p.n), k = uint64_t(p.k);
  cublasStatus_t s;
  if ((s = types.tn ? cublasLtMatrixLayoutCreate(&plan->op_a, types.ab, k, n, int64_t(k))
                    : cublasLtMatrixLayoutCreate(&plan->op_a, types.ab, n, k, int64_t(n))) !=
          CUBLAS_STATUS_SUCCESS ||
      (s = cublasLtMatrixLayoutCreate(&plan->op_b, types.ab, k, m, int64_t(k))) !=
          CUBLAS_STATUS_SUCCESS ||
      (s = cublasLtMatrixLayoutCreate(&plan->c, types.c, n, m, int64_t(n))) !=
          CUBLAS_STATUS_SUCCESS) {
    return LtText("cublasLtMatrixLayoutCreate", s);
  }
  return "";
}

/// The heuristic's candidates under the workspace and alignment preferences; an empty list with
/// `plan->none` saying so where it has none.
std::string FindCandidates(cublasLtHandle_t handle, const GemmArgs& args,
                           const uint32_t (&align)[3], LtPlan* plan) {
  cublasLtMatmulPreference_t pref = nullptr;
  cublasStatus_t s;
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
  set(CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, uint64_t(args.workspace_bytes));
  set(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, align[0]);  // our B
  set(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, align[1]);  // our A
  set(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, align[2]);
  set(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, align[2]);
  std::vector<cublasLtMatmulHeuristicResult_t> results(static_cast<size_t>(kLtCandidates),
                                                       cublasLtMatmulHeuristicResult_t{});
  int found = 0;
  if (err.empty() &&
      (s = cublasLtMatmulAlgoGetHeuristic(handle, plan->desc, plan->op_a, plan->op_b, plan->c,
                                          plan->c, pref, kLtCandidates, results.data(), &found)) !=
          CUBLAS_STATUS_SUCCESS &&
      s != CUBLAS_STATUS_NOT_SUPPORTED) {
    err = LtText("cublasLtMatmulAlgoGetHeuristic", s);
  }
  cublasLtMatmulPreferenceDestroy(pref);
  if (!err.empty()) return err;
  for (int i = 0; i < found; ++i)
    if (results[size_t(i)].state == CUBLAS_STATUS_SUCCESS)
      plan->candidates.push_back(results[size_t(i)]);
  if (plan->candidates.empty()) {
    const Problem& p = args.problem;
    plan->none = "cuBLASLt has no " + std::string(ToString(p.dtype)) + " algorithm for " +
                 std::to_string(p.m) + "x" + std::to_string(p.n) + "x" + std::to_string(p.k) +
                 " with " + std::to_string(args.workspace_bytes) + " bytes of workspace";
  }
  return "";
}

std::string MakeLtPlan(cublasLtHandle_t handle, const GemmArgs& args, const uint32_t (&align)[3],
                       LtPlan* plan) {
  const LtTypes types = LtTypesOf(args.problem.dtype);
  cublasStatus_t s;
  if ((s = cublasLtMatmulDescCreate(&plan->desc, types.compute, types.scale)) !=
      CUBLAS_STATUS_SUCCESS) {
    return LtText("cublasLtMatmulDescCreate", s);
  }
  if (std::string e = SetDescAttributes(args, types, plan); !e.empty()) return e;
  if (std::string e = MakeLayouts(args.problem, types, plan); !e.empty()) return e;
  return FindCandidates(handle, args, align, plan);
}

void DestroyLtPlan(LtPlan* plan) {
  if (plan->desc) cublasLtMatmulDescDestroy(plan->desc);
  if (plan->op_a) cublasLtMatrixLayoutDestroy(plan->op_a);
  if (plan->op_b) cublasLtMatrixLayoutDestroy(plan->op_b);
  if (plan->c) cublasLtMatrixLayoutDestroy(plan->c);
}

/// What a cuBLASLt launch needs checked first; "" when it may go on.
std::string CheckLtArgs(const GemmArgs& args, const std::string& name) {
  const Problem& p = args.problem;
  if (args.cublaslt == nullptr) return name + ": no cublasLtHandle_t in GemmArgs::cublaslt";
  if (args.workspace_bytes != 0 && args.workspace == nullptr) {
    return name + ": GemmArgs::workspace_bytes without a workspace";
  }
  const bool fp8 = p.dtype == DType::kFP8;
  if (fp8 && (args.scale_a == nullptr || args.scale_b == nullptr)) {
    return name + ": fp8 needs the scales of A and B (GemmArgs::scale_a, scale_b)";
  }
  if (fp8 && (Alignment(args.scale_a) < 16 || Alignment(args.scale_b) < 16)) {
    return name +
           ": the scales of A and B must each be 16-byte aligned (cuBLASLt refuses scale "
           "pointers a float apart)";
  }
  // IMMA in the regular data order wants 4-byte aligned pointers (16 for its fast paths); fp8
  // wants 16 bytes. The others take what the element size gives.
  if (LtTypesOf(p.dtype).tn) {
    const uint32_t need = fp8 ? 16 : 4;
    if (Alignment(args.b) < need || Alignment(args.a) < need || Alignment(args.c) < need) {
      return name + ": A, B and C must be at least " + std::to_string(need) +
             "-byte aligned (cuBLASLt " + (fp8 ? "fp8" : "IMMA") + ")";
    }
  }
  return "";
}

/// The plan of args' problem, made on first use and kept (std::map nodes are stable); "" and
/// *plan, or why it could not be made.
std::string PlanFor(const GemmArgs& args, const std::string& name, const LtPlan** plan) {
  const Problem& p = args.problem;
  const uint32_t align[3] = {Alignment(args.b), Alignment(args.a), Alignment(args.c)};
  static std::mutex mu;
  static std::map<LtKey, LtPlan> plans;
  std::lock_guard<std::mutex> lock(mu);
  const LtKey key{args.cublaslt,        p.dtype,  p.m,      p.n,      p.k,
                  args.workspace_bytes, align[0], align[1], align[2], args.scale_a,
                  args.scale_b};
  auto it = plans.find(key);
  if (it == plans.end()) {
    LtPlan made;
    if (std::string e =
            MakeLtPlan(static_cast<cublasLtHandle_t>(args.cublaslt), args, align, &made);
        !e.empty()) {
      DestroyLtPlan(&made);
      return name + ": " + e;
    }
    it = plans.emplace(key, std::move(made)).first;
  }
  *plan = &it->second;
  return "";
}

std::string LaunchAlgo(const GemmArgs& args, const LtPlan& plan, const cublasLtMatmulAlgo_t* algo) {
  const int32_t alpha_i = 1, beta_i = 0;
  const float alpha_f = 1.0f, beta_f = 0.0f;
  const bool integer = args.problem.dtype == DType::kINT8;
  const cublasStatus_t s = cublasLtMatmul(
      static_cast<cublasLtHandle_t>(args.cublaslt), plan.desc,
      integer ? static_cast<const void*>(&alpha_i) : &alpha_f, args.b, plan.op_a, args.a, plan.op_b,
      integer ? static_cast<const void*>(&beta_i) : &beta_f, args.c, plan.c, args.c, plan.c, algo,
      args.workspace, args.workspace_bytes, static_cast<cudaStream_t>(args.stream));
  if (s != CUBLAS_STATUS_SUCCESS) return LtText("cublasLtMatmul", s);
  return "";
}

std::string EntryName(DType d, bool best) {
  return "cublas_" + std::string(ToString(d)) + (best ? "_best" : "");
}

/// cublas_<dtype>: the heuristic's first candidate. Where cuBLASLt has none for the problem (rows
/// that are not whole 16-byte chunks, for some dtypes), the NN dtypes launch cublasGemmEx, which
/// has kernels of its own for such rows: the reference must run every shape a family under test
/// may take. The worker names which ran (LtCandidates says why there was no candidate).
std::string LaunchHeuristic(const GemmArgs& args, DType want) {
  const std::string name = EntryName(want, false);
  if (args.problem.dtype != want) return "cuBLAS entry: dtype mismatch";
  if (std::string e = CheckLtArgs(args, name); !e.empty()) return e;
  const LtPlan* plan = nullptr;
  if (std::string e = PlanFor(args, name, &plan); !e.empty()) return e;
  if (plan->candidates.empty()) {
    const LtTypes types = LtTypesOf(want);
    if (types.tn) return name + ": " + plan->none;
    return want == DType::kFP32 ? LaunchFp32(args)
                                : CublasGemm(args, want, types.ab, types.compute);
  }
  return LaunchAlgo(args, *plan, &plan->candidates.front().algo);
}

/// cublas_<dtype>_best: the algorithm chosen for this problem (GemmArgs::library_algo).
std::string LaunchChosen(const GemmArgs& args, DType want) {
  const std::string name = EntryName(want, true);
  if (args.problem.dtype != want) return "cuBLAS entry: dtype mismatch";
  if (args.library_algo == nullptr) {
    return name +
           ": no algorithm chosen for this problem (the worker times the heuristic's candidates "
           "first, or takes the daemon's stored choice)";
  }
  if (std::string e = CheckLtArgs(args, name); !e.empty()) return e;
  const LtPlan* plan = nullptr;
  if (std::string e = PlanFor(args, name, &plan); !e.empty()) return e;
  return LaunchAlgo(args, *plan, static_cast<const cublasLtMatmulAlgo_t*>(args.library_algo));
}

const void* NoKernel(DType) { return nullptr; }

}  // namespace

void BindCublasLaunchers(Registry& registry) {
  for (DType d :
       {DType::kBF16, DType::kFP16, DType::kFP32, DType::kTF32, DType::kINT8, DType::kFP8}) {
    if (Variant* v = registry.FindMutable(EntryName(d, false))) {
      v->launch = [d](const GemmArgs& args) { return LaunchHeuristic(args, d); };
      v->kernel = &NoKernel;
    }
    if (Variant* v = registry.FindMutable(EntryName(d, true))) {
      v->launch = [d](const GemmArgs& args) { return LaunchChosen(args, d); };
      v->kernel = &NoKernel;
    }
  }
}

std::string LtCandidates(const GemmArgs& args, std::vector<LtCandidate>* out) {
  out->clear();
  const std::string name = EntryName(args.problem.dtype, false);
  if (std::string e = CheckLtArgs(args, name); !e.empty()) return e;
  const LtPlan* plan = nullptr;
  if (std::string e = PlanFor(args, name, &plan); !e.empty()) return e;
  if (plan->candidates.empty()) return plan->none;
  for (const cublasLtMatmulHeuristicResult_t& r : plan->candidates) {
    LtCandidate c;
    c.algo.assign(reinterpret_cast<const char*>(&r.algo), sizeof(r.algo));
    c.config = LtConfigOf(c.algo);
    c.workspace_bytes = r.workspaceSize;
    c.waves = r.wavesCount;
    out->push_back(std::move(c));
  }
  return "";
}

LtAlgoConfig LtConfigOf(const std::string& algo_bytes) {
  LtAlgoConfig config;
  if (algo_bytes.size() != sizeof(cublasLtMatmulAlgo_t)) return config;
  cublasLtMatmulAlgo_t algo;
  std::memcpy(&algo, algo_bytes.data(), sizeof(algo));
  const auto get = [&](cublasLtMatmulAlgoConfigAttributes_t attr, auto* value) {
    size_t written = 0;
    if (cublasLtMatmulAlgoConfigGetAttribute(&algo, attr, value, sizeof(*value), &written) !=
        CUBLAS_STATUS_SUCCESS) {
      *value = {};
    }
  };
  get(CUBLASLT_ALGO_CONFIG_ID, &config.algo_id);
  get(CUBLASLT_ALGO_CONFIG_TILE_ID, &config.tile);
  get(CUBLASLT_ALGO_CONFIG_STAGES_ID, &config.stages);
  get(CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &config.split_k);
  get(CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, &config.reduction);
  get(CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, &config.swizzle);
  get(CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION, &config.custom);
  get(CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID, &config.cluster);
  return config;
}

std::string LtAlgoConfig::Describe() const {
  std::string text = "algo " + std::to_string(algo_id);
  if (const char* t = LtTileName(tile); *t) text += std::string(", tile ") + t;
  if (const char* s = LtStagesName(stages); *s) text += std::string(", stages ") + s;
  text += ", split-K " + std::to_string(split_k) + ", reduction " + std::to_string(reduction) +
          ", swizzle " + std::to_string(swizzle) + ", custom " + std::to_string(custom);
  if (const char* c = LtClusterName(cluster); *c) text += std::string(", cluster ") + c;
  return text;
}

static_assert(sizeof(cublasLtMatmulAlgo_t) == kLtAlgoBytes, "cublasLtMatmulAlgo_t changed size");

}  // namespace ablation::kernels
