// A row softmax (memory-bound): y[r][c] = exp(x[r][c] - max_r) / sum_r exp(x[r][.] - max_r), bf16
// in and out, fp32 inside. One block of THREADS threads per row: a max, then a sum of
// exponentials, each reduced through shared memory, then the normalised row written.
#include <cuda_bf16.h>

// -inf (NVRTC has no <cmath>, so no INFINITY).
#define kNegInf (-__int_as_float(0x7f800000))

__device__ float BlockReduce(float v, float* scratch, bool is_max) {
  scratch[threadIdx.x] = v;
  __syncthreads();
  for (int stride = THREADS / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) {
      const float other = scratch[threadIdx.x + stride];
      scratch[threadIdx.x] =
          is_max ? fmaxf(scratch[threadIdx.x], other) : scratch[threadIdx.x] + other;
    }
    __syncthreads();
  }
  const float out = scratch[0];
  __syncthreads();
  return out;
}

extern "C" __global__ void row_softmax(const __nv_bfloat16* x, __nv_bfloat16* y, long long rows,
                                       long long cols) {
  __shared__ float scratch[THREADS];
  const long long r = blockIdx.x;
  if (r >= rows) return;
  const __nv_bfloat16* row = x + r * cols;
  float m = kNegInf;
  for (long long c = threadIdx.x; c < cols; c += THREADS) m = fmaxf(m, __bfloat162float(row[c]));
  m = BlockReduce(m, scratch, true);
  float s = 0.f;
  for (long long c = threadIdx.x; c < cols; c += THREADS) s += __expf(__bfloat162float(row[c]) - m);
  s = BlockReduce(s, scratch, false);
  for (long long c = threadIdx.x; c < cols; c += THREADS)
    y[r * cols + c] = __float2bfloat16(__expf(__bfloat162float(row[c]) - m) / s);
}

// The reference: one thread per row, three plain passes in fp32 with expf.
extern "C" __global__ void row_softmax_ref(const __nv_bfloat16* x, __nv_bfloat16* y, long long rows,
                                           long long cols) {
  const long long r = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  const __nv_bfloat16* row = x + r * cols;
  float m = kNegInf, s = 0.f;
  for (long long c = 0; c < cols; ++c) m = fmaxf(m, __bfloat162float(row[c]));
  for (long long c = 0; c < cols; ++c) s += expf(__bfloat162float(row[c]) - m);
  for (long long c = 0; c < cols; ++c)
    y[r * cols + c] = __float2bfloat16(expf(__bfloat162float(row[c]) - m) / s);
}
