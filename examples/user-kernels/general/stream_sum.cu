// A pure stream of bf16 rows: s[r] = sum_c x[r][c] in fp32, every byte of x read once in 16-byte
// words. Its figure is the bandwidth a kernel that only reads these bytes reaches under the
// service's timing (events around one launch, the L2 cold): the ceiling any kernel streaming the
// same bytes meets, a GEMV's or a few-row GEMM's (a 4096x4096 bf16 B of 33.6 MB: rows = 4096,
// cols = 4096). One warp per row, each lane reading its row's 16-byte words in groups of
// UNROLL; how many of a group are in flight at once is ptxas's choice (it keeps about 30
// registers at every UNROLL, so full occupancy: 64 warps an SM). PREFETCH 1 asks the L2 to fetch
// 256 bytes for each load that misses (ld.global.nc.L2::256B) where a miss otherwise brings the
// sectors asked for: a warp's load of 512 contiguous bytes is two such requests to DRAM.
#include <cuda_bf16.h>

__device__ __forceinline__ uint4 LoadWord(const uint4* p) {
#if PREFETCH
  uint4 w;
  asm("ld.global.nc.L2::256B.v4.u32 {%0, %1, %2, %3}, [%4];"
      : "=r"(w.x), "=r"(w.y), "=r"(w.z), "=r"(w.w)
      : "l"(p));
  return w;
#else
  return __ldg(p);
#endif
}

__device__ __forceinline__ float SumOfWord(uint4 w) {
  const unsigned parts[4] = {w.x, w.y, w.z, w.w};
  float acc = 0.f;
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const __nv_bfloat162 pair = *reinterpret_cast<const __nv_bfloat162*>(&parts[i]);
    const float2 f = __bfloat1622float2(pair);
    acc += f.x + f.y;
  }
  return acc;
}

extern "C" __global__ void stream_sum(const __nv_bfloat16* x, float* s, long long rows,
                                      long long cols) {
  const long long row = (long long)blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  if (row >= rows) return;
  const uint4* words = reinterpret_cast<const uint4*>(x + row * cols);
  const long long count = cols / 8;  // 16-byte words of the row (the condition: cols % 8 == 0)
  float acc = 0.f;
  long long first = lane;
  // Whole groups of UNROLL words a lane, with no bound to check (no load is under a branch).
  for (; first + 32LL * (UNROLL - 1) < count; first += 32LL * UNROLL) {
    uint4 w[UNROLL];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) w[u] = LoadWord(words + first + 32LL * u);
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) acc += SumOfWord(w[u]);
  }
  for (; first < count; first += 32) acc += SumOfWord(LoadWord(words + first));  // the rest
  for (int offset = 16; offset > 0; offset /= 2) acc += __shfl_down_sync(0xffffffffu, acc, offset);
  if (lane == 0) s[row] = acc;
}
