// A reduction: s[r] = sum_c x[r][c], fp32. WARPS warps per row, each summing a strided slice with
// shuffles, then the warps' sums added through shared memory.
extern "C" __global__ void row_sum(const float* x, float* s, long long rows, long long cols) {
  __shared__ float partial[WARPS];
  const long long r = blockIdx.x;
  if (r >= rows) return;
  float v = 0.f;
  for (long long c = threadIdx.x; c < cols; c += WARPS * 32) v += x[r * cols + c];
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
  if (threadIdx.x % 32 == 0) partial[threadIdx.x / 32] = v;
  __syncthreads();
  if (threadIdx.x == 0) {
    float total = 0.f;
    for (int w = 0; w < WARPS; ++w) total += partial[w];
    s[r] = total;
  }
}

// The reference: one thread per row, in fp64, rounded once.
extern "C" __global__ void row_sum_ref(const float* x, float* s, long long rows, long long cols) {
  const long long r = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  double total = 0.0;
  for (long long c = 0; c < cols; ++c) total += x[r * cols + c];
  s[r] = float(total);
}
