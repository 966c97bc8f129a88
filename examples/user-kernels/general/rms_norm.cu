// RMSNorm: y[r][c] = x[r][c] / sqrt(mean_c(x[r][.]^2) + eps) * w[c], bf16 in and out, fp32 inside.
// One block of THREADS threads per row; VEC elements per load (bf16x2 where VEC is 2).
#include <cuda_bf16.h>

extern "C" __global__ void rms_norm(const __nv_bfloat16* x, const __nv_bfloat16* w,
                                    __nv_bfloat16* y, long long rows, long long cols, float eps) {
  __shared__ float scratch[THREADS];
  const long long r = blockIdx.x;
  if (r >= rows) return;
  const __nv_bfloat16* row = x + r * cols;
  float s = 0.f;
#if VEC == 2
  // cols is even (the manifest's condition): bf16 pairs
  const __nv_bfloat162* row2 = reinterpret_cast<const __nv_bfloat162*>(row);
  for (long long c = threadIdx.x; c < cols / 2; c += THREADS) {
    const float2 v = __bfloat1622float2(row2[c]);
    s += v.x * v.x + v.y * v.y;
  }
#else
  for (long long c = threadIdx.x; c < cols; c += THREADS) {
    const float v = __bfloat162float(row[c]);
    s += v * v;
  }
#endif
  scratch[threadIdx.x] = s;
  __syncthreads();
  for (int stride = THREADS / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) scratch[threadIdx.x] += scratch[threadIdx.x + stride];
    __syncthreads();
  }
  const float scale = rsqrtf(scratch[0] / float(cols) + eps);
  for (long long c = threadIdx.x; c < cols; c += THREADS)
    y[r * cols + c] = __float2bfloat16(__bfloat162float(row[c]) * scale * __bfloat162float(w[c]));
}

// The reference: one thread per row, in fp32 with sqrtf.
extern "C" __global__ void rms_norm_ref(const __nv_bfloat16* x, const __nv_bfloat16* w,
                                        __nv_bfloat16* y, long long rows, long long cols,
                                        float eps) {
  const long long r = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  float s = 0.f;
  for (long long c = 0; c < cols; ++c) {
    const float v = __bfloat162float(x[r * cols + c]);
    s += v * v;
  }
  const float scale = 1.f / sqrtf(s / float(cols) + eps);
  for (long long c = 0; c < cols; ++c)
    y[r * cols + c] =
        __float2bfloat16(__bfloat162float(x[r * cols + c]) * scale * __bfloat162float(w[c]));
}
