#include "kernels/cublas/cublas_catalog.h"

#include <string>

namespace ablation::kernels {
namespace {

std::string CublasCanImplement(DType want, const Problem& p) {
  if (p.dtype != want) {
    return "dtype must be " + std::string(ToString(want)) + " for this entry, got " +
           std::string(ToString(p.dtype));
  }
  if (p.m <= 0) return "m must be positive, got " + std::to_string(p.m);
  if (p.n <= 0) return "n must be positive, got " + std::to_string(p.n);
  if (p.k <= 0) return "k must be positive, got " + std::to_string(p.k);
  // Leading dimensions (n for B and C, k for A) in 16-byte units keep cuBLAS on its
  // tensor-core paths; the ablation kernels have the same requirement, so the baseline is fair.
  if (p.n % 8 != 0)
    return "n must be a multiple of 8 (16-byte leading dimension), got " + std::to_string(p.n);
  if (p.k % 8 != 0)
    return "k must be a multiple of 8 (16-byte leading dimension), got " + std::to_string(p.k);
  constexpr int64_t kIntMax = (int64_t(1) << 31) - 1;
  if (p.m > kIntMax || p.n > kIntMax || p.k > kIntMax) return "m, n and k must fit in int";
  return "";
}

void Add(Registry& registry, const char* name, DType dtype) {
  Variant v;
  v.name = name;
  v.family = "cublas";
  v.description = "cuBLAS cublasGemmEx, " + std::string(ToString(dtype)) +
                  " inputs and output, FP32 accumulation (CUBLAS_COMPUTE_32F), default algorithm";
  v.params = {{"api", "cublasGemmEx"}, {"compute", "CUBLAS_COMPUTE_32F"}};
  v.dtypes = {dtype};
  v.b_layout = BLayout::kKN;
  v.can_implement = [dtype](const Problem& p) { return CublasCanImplement(dtype, p); };
  registry.Add(std::move(v));
}

}  // namespace

void RegisterCublas(Registry& registry) {
  Add(registry, "cublas_bf16", DType::kBF16);
  Add(registry, "cublas_fp16", DType::kFP16);
}

}  // namespace ablation::kernels
