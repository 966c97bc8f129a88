// A GEMM with a fused epilogue: C = relu(A B + bias), A m x k, B k x n, C m x n row-major, bf16 in
// and out, fp32 accumulate, bias fp32 per column. 16 x 16 tiles through shared memory (PAD pads
// their rows), the bias and the ReLU applied before the one store.
#include <cuda_bf16.h>

#define TILE 16

extern "C" __global__ void gemm_bias_relu(const __nv_bfloat16* A, const __nv_bfloat16* B,
                                          const float* bias, __nv_bfloat16* C, long long m,
                                          long long n, long long k) {
  __shared__ float As[TILE][TILE + PAD];
  __shared__ float Bs[TILE][TILE + PAD];
  const long long row = (long long)blockIdx.y * TILE + threadIdx.y;
  const long long col = (long long)blockIdx.x * TILE + threadIdx.x;
  float acc = 0.f;
  for (long long k0 = 0; k0 < k; k0 += TILE) {
    const long long ak = k0 + threadIdx.x, bk = k0 + threadIdx.y;
    As[threadIdx.y][threadIdx.x] = row < m && ak < k ? __bfloat162float(A[row * k + ak]) : 0.f;
    Bs[threadIdx.y][threadIdx.x] = bk < k && col < n ? __bfloat162float(B[bk * n + col]) : 0.f;
    __syncthreads();
    for (int i = 0; i < TILE; ++i) acc += As[threadIdx.y][i] * Bs[i][threadIdx.x];
    __syncthreads();
  }
  if (row < m && col < n) C[row * n + col] = __float2bfloat16(fmaxf(acc + bias[col], 0.f));
}

// The reference: one thread per element, the plain triple loop in fp32, then the epilogue.
extern "C" __global__ void gemm_bias_relu_ref(const __nv_bfloat16* A, const __nv_bfloat16* B,
                                              const float* bias, __nv_bfloat16* C, long long m,
                                              long long n, long long k) {
  const long long row = (long long)blockIdx.y * blockDim.y + threadIdx.y;
  const long long col = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= m || col >= n) return;
  float acc = 0.f;
  for (long long i = 0; i < k; ++i)
    acc += __bfloat162float(A[row * k + i]) * __bfloat162float(B[i * n + col]);
  C[row * n + col] = __float2bfloat16(fmaxf(acc + bias[col], 0.f));
}
