// A GEMM of few rows as a stream of B (kernels/user/README.md): the decode shape, M of 1 to ROWS,
// where a tiled tensor-core GEMM computes mostly zeros and the figure of merit is B's bytes per
// second against the device's bandwidth. bf16 in, fp32 accumulate, bf16 out; A is M x K, B is
// N x K (b_layout "nk": each output column's K values contiguous), C is M x N, all row-major.
// One warp per output column: its lanes read B's row 16 bytes at a time (8 bf16), each against
// the same 8 values of every row of A (A is small and stays in L1 and L2), then the warp sums
// its lanes' partial products with shuffles. Knobs (-D macros, from the manifest): ROWS, the most
// rows of A one launch takes (its accumulators per lane), and WARPS, the columns of a block.
#include <cuda_bf16.h>

extern "C" __global__ void gemv_rows(const __nv_bfloat16* A, const __nv_bfloat16* B,
                                     __nv_bfloat16* C, int M, int N, int K) {
  const int lane = threadIdx.x % 32;
  const int n = blockIdx.x * WARPS + threadIdx.x / 32;
  if (n >= N) return;
  float acc[ROWS];
#pragma unroll
  for (int m = 0; m < ROWS; ++m) acc[m] = 0.f;
  const uint4* b = reinterpret_cast<const uint4*>(B + (long long)n * K);
  for (int c = lane; c < K / 8; c += 32) {
    const uint4 bv = b[c];
    const __nv_bfloat162* b2 = reinterpret_cast<const __nv_bfloat162*>(&bv);
#pragma unroll
    for (int m = 0; m < ROWS; ++m) {
      if (m >= M) break;
      const uint4 av = reinterpret_cast<const uint4*>(A + (long long)m * K)[c];
      const __nv_bfloat162* a2 = reinterpret_cast<const __nv_bfloat162*>(&av);
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        const float2 x = __bfloat1622float2(a2[j]), y = __bfloat1622float2(b2[j]);
        acc[m] = fmaf(x.x, y.x, fmaf(x.y, y.y, acc[m]));
      }
    }
  }
#pragma unroll
  for (int m = 0; m < ROWS; ++m) {
    float v = acc[m];
    for (int offset = 16; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
    if (lane == 0 && m < M) C[(long long)m * N + n] = __float2bfloat16(v);
  }
}
