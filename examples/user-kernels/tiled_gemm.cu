// A small tiled GEMM as a user kernel (kernels/user/README.md): bf16 in, fp32 accumulate, bf16
// out; A is M x K, B is K x N, C is M x N, all row-major. Each 16 x 16 block computes a 16 x 16
// tile of C through shared-memory tiles of A and B.
// Knobs (-D macros, from the manifest): PAD (0 or 1) pads the tiles' rows by one element, which
// moves the column reads of B off one shared-memory bank; UNROLL unrolls the inner product.
#include <cuda_bf16.h>

#define TILE 16

extern "C" __global__ void tiled_gemm(const __nv_bfloat16* A, const __nv_bfloat16* B,
                                      __nv_bfloat16* C, int M, int N, int K) {
  __shared__ float As[TILE][TILE + PAD];
  __shared__ float Bs[TILE][TILE + PAD];
  const int row = blockIdx.y * TILE + threadIdx.y;
  const int col = blockIdx.x * TILE + threadIdx.x;
  float acc = 0.f;
  for (int k0 = 0; k0 < K; k0 += TILE) {
    const int ak = k0 + threadIdx.x, bk = k0 + threadIdx.y;
    As[threadIdx.y][threadIdx.x] = row < M && ak < K ? __bfloat162float(A[row * K + ak]) : 0.f;
    Bs[threadIdx.y][threadIdx.x] = bk < K && col < N ? __bfloat162float(B[bk * N + col]) : 0.f;
    __syncthreads();
#pragma unroll UNROLL
    for (int k = 0; k < TILE; ++k) acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
    __syncthreads();
  }
  if (row < M && col < N) C[row * N + col] = __float2bfloat16(acc);
}
