// Device helpers shared by both kernels of the Hopper ladder, the mma.sync one (sm90_mma.cuh) and
// the wgmma one (sm90_wgmma.cuh): the 1024-byte alignment and the 128-byte swizzle of the stages,
// a stage's TMA loads, bf16 packing, and the lane-quad transpose of the 16-byte epilogue stores.
#pragma once

#include <cuda_bf16.h>

#include <cstdint>

#include "kernels/common/ptx.cuh"
#include "kernels/sm90/sm90_config.h"
#include "kernels/sm90/sm90_ptx.cuh"

namespace ablation::kernels::sm90 {

/// The stages start 1024-byte aligned in shared memory (the swizzle repeats every 1024 bytes).
__device__ __forceinline__ uint8_t* AlignSmem1024(uint8_t* p) {
  const uint32_t a = ptx::SmemAddr(p);
  return p + ((1024 - (a & 1023)) & 1023);
}

/// Byte offset of 16-byte chunk `chunk` (0..7) of row `row` in a tile of 128-byte swizzled rows.
__device__ __forceinline__ uint32_t Swizzled(int row, int chunk) {
  return uint32_t(row * 128 + ((chunk ^ (row & 7)) << 4));
}

/// Packs two fp32 accumulators into one bf16x2 word.
__device__ __forceinline__ uint32_t PackBf16x2(float x, float y) {
  const __nv_bfloat162 v = __floats2bfloat162_rn(x, y);
  return *reinterpret_cast<const uint32_t*>(&v);
}

/// A thread's accumulators packed two by two: w[i] = bf16x2(d[2i], d[2i+1]). Read all at once, so
/// that nothing reads them later while the next tile's wgmma run.
template <int kAcc>
__device__ __forceinline__ void PackAccumulators(const float (&d)[kAcc], uint32_t (&w)[kAcc / 2]) {
#pragma unroll
  for (int i = 0; i < kAcc / 2; ++i) w[i] = PackBf16x2(d[2 * i], d[2 * i + 1]);
}

/// One thread: fills the stage at `stage` (A tile, then B tile `a_bytes` further on) with k-tile
/// `kt` of A rows m0.. and B rows n0.. by TMA, both completing on `full`. `block_k`: elements of
/// K in a k-tile.
__device__ __forceinline__ void TmaStage(uint8_t* stage, const CUtensorMap* map_a,
                                         const CUtensorMap* map_b, uint64_t* full, int kt, int m0,
                                         int n0, int stage_bytes = kStageBytes,
                                         int block_k = kBlockK, int a_bytes = kATileBytes) {
  MbarArriveExpectTx(full, stage_bytes);
  TmaLoad2d(stage, map_a, full, kt * block_k, m0);
  TmaLoad2d(stage + a_bytes, map_b, full, kt * block_k, n0);
}

/// The 4x4 transpose by shuffles in each lane quad of the 16-byte epilogue stores: lane q holds
/// `mine[b]`, its two columns (one bf16x2 word) of each of four consecutive 8-column blocks b, and
/// gets the four words of block q, its lanes' columns in order (word i from lane i), so a warp's
/// store writes 8 rows x 64 contiguous bytes instead of 8 rows x 16 scattered ones. Selects
/// rather than a run-time register index (which would put the words in local memory). Every
/// word of `out` is overwritten; its initial value is only what the compiler sees through the
/// selects (the mma.sync kernel passes zeros, the wgmma one mine[0] and undefined words, and each
/// keeps the code it was measured with).
__device__ __forceinline__ void QuadTranspose(const uint32_t (&mine)[4], int q,
                                              uint32_t (&out)[4]) {
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    // Lane q ^ i sends its word of block q.
    const int want = q ^ i;
    const uint32_t send = want == 0 ? mine[0] : want == 1 ? mine[1] : want == 2 ? mine[2] : mine[3];
    const uint32_t got = i == 0 ? send : __shfl_xor_sync(0xffffffffu, send, i);
    // `got` is lane (q ^ i)'s two columns of block q: word q ^ i of the 16 bytes.
    out[0] = want == 0 ? got : out[0];
    out[1] = want == 1 ? got : out[1];
    out[2] = want == 2 ? got : out[2];
    out[3] = want == 3 ? got : out[3];
  }
}

}  // namespace ablation::kernels::sm90
