// A planted timing cheat for the GPU end-to-end test: the first launch for a shape computes the
// GEMM correctly (16 x 16 shared-memory tiles, one C element per thread; bf16 in, fp32
// accumulate, bf16 out; A M x K, B K x N, C M x N, all row-major) and keeps a copy of C in a
// __device__ array; the last block to finish marks the copy valid for that shape. Every later
// launch of the same shape only copies the kept result into C: far faster than a GEMM, and right
// only while the inputs do not change. A check that times launches over fixed inputs and verifies
// one output is fooled; one that changes the inputs between launches (or verifies a timed launch
// against its own inputs) catches it. The kept copy holds up to 1024 x 1024 outputs (the
// manifest refuses larger M * N).
#include <cuda_bf16.h>

#define TILE 16
#define CACHE_ELEMS (1024 * 1024)

__device__ __nv_bfloat16 g_kept[CACHE_ELEMS];  // C of the first launch of the kept shape
__device__ int g_kept_valid;                   // 1 once a launch has filled g_kept whole
__device__ int g_kept_m, g_kept_n, g_kept_k;   // the shape it was computed for
__device__ unsigned int g_blocks_done;         // blocks of the computing launch that finished

extern "C" __global__ void keeps_result(const __nv_bfloat16* A, const __nv_bfloat16* B,
                                        __nv_bfloat16* C, int M, int N, int K) {
  __shared__ float As[TILE][TILE + 1];
  __shared__ float Bs[TILE][TILE + 1];
  __shared__ int replay;
  const int row = blockIdx.y * TILE + threadIdx.y;
  const int col = blockIdx.x * TILE + threadIdx.x;
  const bool inside = row < M && col < N;
  const long long idx = (long long)row * N + col;

  // One thread decides for the block (the computing path has barriers). A launch that computes
  // marks the copy valid only when all its blocks are done, so no block of it replays.
  if (threadIdx.x == 0 && threadIdx.y == 0) {
    const volatile int* valid = &g_kept_valid;
    const volatile int* m = &g_kept_m;
    const volatile int* n = &g_kept_n;
    const volatile int* k = &g_kept_k;
    replay = *valid && *m == M && *n == N && *k == K;
  }
  __syncthreads();
  if (replay) {
    if (inside) C[idx] = g_kept[idx];
    return;
  }

  // The honest GEMM.
  float acc = 0.f;
  for (int k0 = 0; k0 < K; k0 += TILE) {
    const int ak = k0 + threadIdx.x, bk = k0 + threadIdx.y;
    As[threadIdx.y][threadIdx.x] =
        row < M && ak < K ? __bfloat162float(A[(long long)row * K + ak]) : 0.f;
    Bs[threadIdx.y][threadIdx.x] =
        bk < K && col < N ? __bfloat162float(B[(long long)bk * N + col]) : 0.f;
    __syncthreads();
#pragma unroll
    for (int k = 0; k < TILE; ++k) acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
    __syncthreads();
  }
  const __nv_bfloat16 out = __float2bfloat16(acc);
  if (inside) {
    C[idx] = out;
    g_kept[idx] = out;
  }

  // The last block to finish publishes the copy for this shape.
  __threadfence();
  __syncthreads();
  if (threadIdx.x == 0 && threadIdx.y == 0) {
    const unsigned int blocks = gridDim.x * gridDim.y;
    if (atomicAdd(&g_blocks_done, 1u) == blocks - 1) {
      __threadfence();
      g_kept_m = M;
      g_kept_n = N;
      g_kept_k = K;
      __threadfence();
      *(volatile int*)&g_kept_valid = 1;
      g_blocks_done = 0;
    }
  }
}
