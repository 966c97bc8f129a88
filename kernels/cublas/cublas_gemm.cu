#include "kernels/cublas/cublas_gemm.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <string>

namespace ablation::kernels {
namespace {

/// Row-major C = A * B through column-major cuBLAS: C^T = B^T * A^T, where the row-major
/// buffers of B (ld n) and A (ld k) already are B^T and A^T column-major. So B goes first and
/// the result is C^T column-major, i.e. C row-major (ld n).
std::string CublasGemm(const GemmArgs& args, DType want, cudaDataType_t type) {
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
                   k, &beta, args.c, type, n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
  if (s != CUBLAS_STATUS_SUCCESS) return std::string("cublasGemmEx: ") + cublasGetStatusString(s);
  return "";
}

std::string LaunchBf16(const GemmArgs& args) { return CublasGemm(args, DType::kBF16, CUDA_R_16BF); }
std::string LaunchFp16(const GemmArgs& args) { return CublasGemm(args, DType::kFP16, CUDA_R_16F); }
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
}

}  // namespace ablation::kernels
