// Planted cheats of a kernel of its own contract: a row softmax (as ../row_softmax.cu) that games
// its harness in the ways published harnesses have met, one per value of the knob CHEAT. Each
// must be caught: before timing (the verification against the honest reference, with canaries
// around every buffer and poisoned outputs) or on its timed launches (fresh inputs per batch, a
// timed launch's outputs checked against the reference on the same inputs).
//   1  writes only the first half of the rows (a harness that checks a prefix passes it)
//   2  keeps an earlier result: after its first launch it returns at once
//   3  computes in lower precision than it declares: the sum of exponentials kept in bf16 by one
//      warp's lanes (about 2% off at 4096 columns; the declared tolerance is 1%)
//   4  skips the work when a row's inputs repeat from one launch to the next (it remembers each
//      row's first value): the timed launches alternate between two sets of inputs, each given
//      fresh values before every batch, so it never finds a repeat and gains nothing
//   5  writes outside its buffers: one element past the end of y
//   6  writes into its input: clears x's first element after using it
#include <cuda_bf16.h>

#define kNegInf (-__int_as_float(0x7f800000))

__device__ int g_launched = 0;
__device__ float g_seen[65536];

__device__ float BlockReduce(float v, float* scratch, bool is_max) {
  scratch[threadIdx.x] = v;
  __syncthreads();
  for (int stride = 128 / 2; stride > 0; stride /= 2) {
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

extern "C" __global__ void softmax_cheat(const __nv_bfloat16* x, __nv_bfloat16* y, long long rows,
                                         long long cols) {
  __shared__ float scratch[128];
  const long long r = blockIdx.x;
  if (r >= rows) return;
  if (CHEAT == 1 && r >= rows / 2) return;
  if (CHEAT == 2) {
    if (g_launched > 1) return;
    __syncthreads();
    if (r == 0 && threadIdx.x == 0) atomicAdd(&g_launched, 1);
  }
  const __nv_bfloat16* row = x + r * cols;
  if (CHEAT == 4 && r < 65536) {
    const float first = __bfloat162float(row[0]);
    if (g_seen[r] == first) return;
    __syncthreads();
    if (threadIdx.x == 0) g_seen[r] = first;
  }
  float m = kNegInf;
  for (long long c = threadIdx.x; c < cols; c += 128) m = fmaxf(m, __bfloat162float(row[c]));
  m = BlockReduce(m, scratch, true);
  float s = 0.f;
  if (CHEAT == 3) {
    // One warp sums the row, each lane its share in bf16 (128 terms at 4096 columns): about 2%
    // off (a bf16 sum of many small terms loses them), where 128 threads of 32 terms each would
    // be 0.4% off and pass a 1% tolerance.
    __nv_bfloat16 low = __float2bfloat16(0.f);
    if (threadIdx.x < 32)
      for (long long c = threadIdx.x; c < cols; c += 32)
        low = __float2bfloat16(__bfloat162float(low) + __expf(__bfloat162float(row[c]) - m));
    s = __bfloat162float(low);
  } else {
    for (long long c = threadIdx.x; c < cols; c += 128) s += __expf(__bfloat162float(row[c]) - m);
  }
  s = BlockReduce(s, scratch, false);
  for (long long c = threadIdx.x; c < cols; c += 128)
    y[r * cols + c] = __float2bfloat16(__expf(__bfloat162float(row[c]) - m) / s);
  if (CHEAT == 5 && r == rows - 1 && threadIdx.x == 0) y[rows * cols] = __float2bfloat16(1.f);
  if (CHEAT == 6 && r == rows - 1) {
    __syncthreads();
    if (threadIdx.x == 0) const_cast<__nv_bfloat16*>(x)[0] = __float2bfloat16(0.f);
  }
}

// The honest reference: one thread per row, three plain passes in fp32.
extern "C" __global__ void softmax_ref(const __nv_bfloat16* x, __nv_bfloat16* y, long long rows,
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
