// TEST ONLY: GEMM variants with classic pipelining bugs planted on purpose, compiled
// into the tests and never into the worker binary. Verify must catch every one of them, and must
// pass the control (the same kernel without the bug), so the check is neither blind nor paranoid.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <string>

#include "kernels/registry.h"

namespace ablation::testing {
namespace {

constexpr int kBM = 64, kBN = 64, kBK = 32, kThreads = 256;

enum Bug {
  kNone = 0,             ///< load, sync, compute, sync: correct
  kForgotEpilogue = 1,   ///< double buffer whose epilogue never computes the last K tile
  kMissingBarrier = 2,   ///< single buffer without the barrier between compute and next load
};

template <int kBug>
__global__ void __launch_bounds__(kThreads)
    PlantedBugGemm(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int M, int N,
                   int K) {
  __shared__ float As[2][kBM][kBK + 1];
  __shared__ float Bs[2][kBK][kBN + 1];
  const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
  const int row0 = blockIdx.y * kBM, col0 = blockIdx.x * kBN;
  float acc[4][4] = {};
  auto load = [&](int buf, int k0) {
    for (int i = threadIdx.x; i < kBM * kBK; i += kThreads) {
      int r = i / kBK, c = i % kBK;
      As[buf][r][c] = __bfloat162float(A[size_t(row0 + r) * K + k0 + c]);
    }
    for (int i = threadIdx.x; i < kBK * kBN; i += kThreads) {
      int r = i / kBN, c = i % kBN;
      Bs[buf][r][c] = __bfloat162float(B[size_t(k0 + r) * N + col0 + c]);
    }
  };
  auto compute = [&](int buf) {
    for (int k = 0; k < kBK; ++k)
      for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 4; ++j) acc[i][j] += As[buf][ty * 4 + i][k] * Bs[buf][k][tx * 4 + j];
  };
  const int tiles = K / kBK;
  if constexpr (kBug == kForgotEpilogue) {
    load(0, 0);
    __syncthreads();
    for (int t = 0; t < tiles - 1; ++t) {
      load((t + 1) & 1, (t + 1) * kBK);
      compute(t & 1);
      __syncthreads();
    }
    // The bug: compute((tiles - 1) & 1) belongs here.
  } else {
    for (int t = 0; t < tiles; ++t) {
      load(0, t * kBK);
      __syncthreads();
      compute(0);
      if constexpr (kBug == kNone) __syncthreads();  // the bug drops this one
    }
  }
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j)
      C[size_t(row0 + ty * 4 + i) * N + col0 + tx * 4 + j] = __float2bfloat16(acc[i][j]);
}

template <int kBug>
std::string Launch(const kernels::GemmArgs& args) {
  const auto& p = args.problem;
  dim3 grid(unsigned(p.n / kBN), unsigned(p.m / kBM));
  PlantedBugGemm<kBug><<<grid, kThreads, 0, static_cast<cudaStream_t>(args.stream)>>>(
      static_cast<const __nv_bfloat16*>(args.a), static_cast<const __nv_bfloat16*>(args.b),
      static_cast<__nv_bfloat16*>(args.c), int(p.m), int(p.n), int(p.k));
  cudaError_t e = cudaGetLastError();
  return e == cudaSuccess ? "" : cudaGetErrorString(e);
}

template <int kBug>
const void* Kernel(kernels::DType) {
  return reinterpret_cast<const void*>(&PlantedBugGemm<kBug>);
}

template <int kBug>
void Add(kernels::Registry& r, const char* name, const char* what) {
  kernels::Variant v;
  v.name = name;
  v.family = "testbug";
  v.description = what;
  v.dtypes = {kernels::DType::kBF16};
  v.tile = {kBM, kBN, kBK};
  v.threads = kThreads;
  v.can_implement = [](const kernels::Problem& p) -> std::string {
    if (p.m % kBM || p.n % kBN) return "M and N must be multiples of 64";
    if (p.k % kBK || p.k < 2 * kBK) return "K must be a multiple of 32, at least 64";
    return "";
  };
  v.launch = &Launch<kBug>;
  v.kernel = &Kernel<kBug>;
  r.Add(std::move(v));
}

}  // namespace

void RegisterPlantedBugs(kernels::Registry& r) {
  Add<kNone>(r, "testbug_control", "the planted-bug kernel without a bug");
  Add<kForgotEpilogue>(r, "testbug_forgot_epilogue",
                       "double buffer that never computes the last K tile (forgotten epilogue)");
  Add<kMissingBarrier>(r, "testbug_missing_barrier",
                       "single buffer missing the barrier between compute and the next store");
}

}  // namespace ablation::testing
