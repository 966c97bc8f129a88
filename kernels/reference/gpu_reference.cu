#include "kernels/reference/gpu_reference.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

namespace ablation::kernels {
namespace {

// A 64 x 64 tile of C per block of 16 x 16 threads, each thread 4 x 4 elements strided by 16 (so
// that shared-memory reads are broadcasts or conflict-free and stores coalesce), K in steps of
// 16 through shared memory. Plain on purpose: a reference must be obviously right, and it only
// needs to be fast enough that checking a 16384^3 shape takes seconds, not minutes.
constexpr int kTile = 64;
constexpr int kStepK = 16;
constexpr int kThreads = 16;
constexpr int kPer = kTile / kThreads;

template <typename Acc>
__device__ __forceinline__ Acc ToAcc(__nv_bfloat16 x) {
  return Acc(__bfloat162float(x));
}
template <typename Acc>
__device__ __forceinline__ Acc ToAcc(__half x) {
  return Acc(__half2float(x));
}
template <typename Acc>
__device__ __forceinline__ Acc ToAcc(float x) {
  return Acc(x);
}
template <typename Acc>
__device__ __forceinline__ Acc ToAcc(__nv_fp8_e4m3 x) {
  return Acc(float(x));
}
template <typename Acc>
__device__ __forceinline__ Acc ToAcc(int8_t x) {
  return Acc(x);
}

template <typename In, typename Acc, typename Out>
__global__ void __launch_bounds__(kThreads* kThreads)
    ReferenceGemmKernel(const In* __restrict__ a, const In* __restrict__ b, Out* __restrict__ c,
                        int64_t m, int64_t n, int64_t k) {
  // A's tile transposed, as[kk][row]; a row longer by one, so that the stores (consecutive
  // threads along k) fall in different banks.
  __shared__ Acc as[kStepK][kTile + 1];
  __shared__ Acc bs[kStepK][kTile];  // bs[kk][col]
  const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * kThreads + tx;
  const int64_t col0 = int64_t(blockIdx.x) * kTile;
  const int64_t tiles_m = (m + kTile - 1) / kTile;
  // gridDim.y is capped at 65535: rows beyond it are taken by the same blocks in turn.
  for (int64_t tile_m = blockIdx.y; tile_m < tiles_m; tile_m += gridDim.y) {
    const int64_t row0 = tile_m * kTile;
    Acc acc[kPer][kPer];
    for (int i = 0; i < kPer; ++i)
      for (int j = 0; j < kPer; ++j) acc[i][j] = Acc(0);
    for (int64_t k0 = 0; k0 < k; k0 += kStepK) {
      for (int e = tid; e < kTile * kStepK; e += kThreads * kThreads) {
        const int r = e / kStepK, kk = e % kStepK;  // A: consecutive threads walk along k
        const int64_t gr = row0 + r, gk = k0 + kk;
        as[kk][r] = (gr < m && gk < k) ? ToAcc<Acc>(a[gr * k + gk]) : Acc(0);
      }
      for (int e = tid; e < kTile * kStepK; e += kThreads * kThreads) {
        const int kk = e / kTile, cc = e % kTile;  // B: consecutive threads walk along n
        const int64_t gk = k0 + kk, gc = col0 + cc;
        bs[kk][cc] = (gk < k && gc < n) ? ToAcc<Acc>(b[gk * n + gc]) : Acc(0);
      }
      __syncthreads();
      // Padding beyond K is zero in both tiles and adds exact zeros: the sum over the real k is
      // unchanged, in ascending k.
      for (int kk = 0; kk < kStepK; ++kk) {
        Acc x[kPer], y[kPer];
        for (int i = 0; i < kPer; ++i) x[i] = as[kk][ty + kThreads * i];
        for (int j = 0; j < kPer; ++j) y[j] = bs[kk][tx + kThreads * j];
        for (int i = 0; i < kPer; ++i)
          for (int j = 0; j < kPer; ++j) acc[i][j] += x[i] * y[j];
      }
      __syncthreads();
    }
    for (int i = 0; i < kPer; ++i) {
      const int64_t gr = row0 + ty + kThreads * i;
      if (gr >= m) continue;
      for (int j = 0; j < kPer; ++j) {
        const int64_t gc = col0 + tx + kThreads * j;
        if (gc < n) c[gr * n + gc] = Out(acc[i][j]);
      }
    }
  }
}

template <typename In, typename Acc, typename Out>
std::string Launch(const void* a, const void* b, void* c, const Problem& p, cudaStream_t stream) {
  const int64_t tiles_n = (p.n + kTile - 1) / kTile, tiles_m = (p.m + kTile - 1) / kTile;
  if (tiles_n > int64_t(INT32_MAX)) {
    return "N = " + std::to_string(p.n) + " is beyond the GPU reference's grid";
  }
  const dim3 grid(unsigned(tiles_n), unsigned(std::min<int64_t>(tiles_m, 65535)));
  ReferenceGemmKernel<In, Acc, Out><<<grid, dim3(kThreads, kThreads), 0, stream>>>(
      static_cast<const In*>(a), static_cast<const In*>(b), static_cast<Out*>(c), p.m, p.n, p.k);
  if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) {
    return std::string("GPU reference GEMM: ") + cudaGetErrorName(e) + ": " + cudaGetErrorString(e);
  }
  return "";
}

}  // namespace

DType GpuReferenceOutputType(DType input) {
  return input == DType::kINT8 ? DType::kINT8 : DType::kFP32;
}

std::string ReferenceGemmGpu(const void* a, const void* b, void* c, const Problem& p,
                             void* stream) {
  if (p.m <= 0 || p.n <= 0 || p.k <= 0) {
    return "the GPU reference needs M, N, K >= 1 (got " + std::to_string(p.m) + "x" +
           std::to_string(p.n) + "x" + std::to_string(p.k) + ")";
  }
  auto s = static_cast<cudaStream_t>(stream);
  switch (p.dtype) {
    case DType::kBF16:
      return Launch<__nv_bfloat16, float, float>(a, b, c, p, s);
    case DType::kFP16:
      return Launch<__half, float, float>(a, b, c, p, s);
    case DType::kTF32:
      return Launch<float, float, float>(a, b, c, p, s);
    case DType::kFP32:
      return Launch<float, double, float>(a, b, c, p, s);
    case DType::kINT8:
      return Launch<int8_t, int32_t, int32_t>(a, b, c, p, s);
    case DType::kFP8:  // the e4m3 values' product: the caller applies the scales
      return Launch<__nv_fp8_e4m3, float, float>(a, b, c, p, s);
  }
  return "the GPU reference does not know this dtype";
}

}  // namespace ablation::kernels
