// The TF32 Tensor Core GEMM, the Tensor Core side of the SIMT vs Tensor Core comparison (the
// counterpart of the SIMT ladder's last rung):
// mma.sync.aligned.m16n8k8 .tf32 with fp32 accumulation, XOR-swizzled shared memory, two stages.
// Two variants that differ only in how a tile travels gmem -> smem: LOAD_MODE 0 synchronous
// (ld.global.v4 into registers, st.shared.v4 after the tile's mma), LOAD_MODE 1 cp.async.cg.
//
// C = A * B, A M x K row-major, B K x N row-major, C M x N row-major fp32. Inputs are fp32 words
// holding tf32 values (the caller rounds them; the mma reads the top 19 bits). Both variants apply
// the same mma to each accumulator in the same order, so they give bit-identical C.
#pragma once

#include <cstdint>

#include "kernels/common/ptx.cuh"
#include "kernels/common/raster.cuh"
#include "kernels/tf32/tf32_shape.h"

namespace ablation::kernels::tf32_gemm {

template <int LOAD_MODE_>  /// gmem->smem: 0 ld.global.v4 + st.shared.v4, 1 cp.async.cg 16 B
struct Config {
  static constexpr int kLoadMode = LOAD_MODE_;
  static_assert(kLoadMode == 0 || kLoadMode == 1, "LOAD_MODE is 0 or 1");
};

inline constexpr int kMmaM = kWarpM / 16;            // 4 m16 tiles per warp
inline constexpr int kMmaN = kWarpN / 8;             // 4 n8 tiles per warp
inline constexpr int kKSteps = kBlockK / 8;          // 2 k8 steps per tile
inline constexpr uint32_t kTileBytes = 8192;         // A tile = B tile = 128 x 16 x 4 bytes
inline constexpr uint32_t kRowABytes = kBlockK * 4;  // 64: As[m][k] row, 4 chunks of 16 bytes
inline constexpr uint32_t kRowBBytes = kBlockN * 4;  // 512: Bs[k][n] row, 32 chunks
inline constexpr int kRasterGroupM = 8;
static_assert(kTileBytes == kBlockM * kRowABytes && kTileBytes == kBlockK * kRowBBytes);

/// mma.sync m16n8k8, A row-major tf32, B column-major tf32, fp32 accumulate in place (HMMA.1688).
__device__ __forceinline__ void MmaM16N8K8Tf32(float (&d)[4], const uint32_t (&a)[4],
                                               const uint32_t (&b)[2]) {
  asm volatile(
      "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 "
      "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

__device__ __forceinline__ void StShared16(uint32_t addr, const uint4& v) {
  asm volatile("st.shared.v4.b32 [%0], {%1, %2, %3, %4};\n" ::"r"(addr), "r"(v.x), "r"(v.y),
               "r"(v.z), "r"(v.w)
               : "memory");
}

// ---- Shared-memory layouts (byte offsets within a tile; a chunk is 16 bytes = 4 fp32).
//
// As[m][k]: 64-byte rows. An ldmatrix phase reads 8 consecutive rows at one chunk; plain rows put
// them in 2 of the 8 16-byte bank groups (4-way conflict). XOR-ing the chunk with (m >> 1) & 3
// spreads them over all 8.
__device__ __forceinline__ uint32_t AOffset(int m, int chunk) {
  return uint32_t(m) * kRowABytes + (uint32_t(chunk ^ ((m >> 1) & 3)) << 4);
}
// Bs[k][n]: 512-byte rows. The B fragment (k = t or t+4, n = g) is read with one ld.shared.b32 per
// register (ldmatrix.trans moves 16-bit halves, no use for 32-bit tf32): 4 k rows x 8 n, and every
// row starts in bank 0 (4-way conflict). XOR-ing the chunk with 2 * (k & 3) moves the four rows'
// two chunks to eight different bank groups.
__device__ __forceinline__ uint32_t BOffset(int k, int chunk) {
  return uint32_t(k) * kRowBBytes + (uint32_t(chunk ^ ((k & 3) << 1)) << 4);
}

/// The C tile of this block (row, column of its first element), grouped rasterization.
__device__ __forceinline__ int2 BlockOrigin(int M, int N) {
  const int2 t = GroupedTile(int(blockIdx.x), M / kBlockM, N / kBlockN, kRasterGroupM);
  return make_int2(t.x * kBlockM, t.y * kBlockN);
}

// The kernel's steps (Tf32GemmKernel below), each inlined into it.

// The mma of one k tile in `stage`: per k-step the warp's A fragments (ldmatrix) and B fragments
// (32-bit shared loads) at a_frag, b_frag (the offsets of mma tile 0 and k-step 0).
__device__ __forceinline__ void ComputeTile(float (&acc)[kMmaM][kMmaN][4], uint32_t stage,
                                            uint32_t a_frag, uint32_t b_frag) {
#pragma unroll
  for (int ks = 0; ks < kKSteps; ++ks) {
    uint32_t fa[kMmaM][4], fb[kMmaN][2];
#pragma unroll
    for (int mi = 0; mi < kMmaM; ++mi) {
      ptx::LdmatrixX4(
          fa[mi], stage + ((a_frag + uint32_t(mi) * 16 * kRowABytes) ^ (uint32_t(2 * ks) << 4)));
    }
#pragma unroll
    for (int ni = 0; ni < kMmaN; ++ni) {
      const uint32_t at =
          stage + ((b_frag + uint32_t(ks) * 8 * kRowBBytes) ^ (uint32_t(2 * ni) << 4));
      fb[ni][0] = ptx::LdShared32(at);
      fb[ni][1] = ptx::LdShared32(at + 4 * kRowBBytes);
    }
    // Every variant issues the 16 mma of a k-step in this order.
#pragma unroll
    for (int mi = 0; mi < kMmaM; ++mi)
#pragma unroll
      for (int ni = 0; ni < kMmaN; ++ni) MmaM16N8K8Tf32(acc[mi][ni], fa[mi], fb[ni]);
  }
}

// The warp's tile of C from (row0, col0), lane (g, t).
__device__ __forceinline__ void StoreTile(const float (&acc)[kMmaM][kMmaN][4],
                                          float* __restrict__ C, int N, int row0, int col0, int g,
                                          int t) {
  // c0, c1: (row g, columns 2t, 2t+1), c2, c3: row g + 8. A quad writes 32 contiguous bytes.
#pragma unroll
  for (int mi = 0; mi < kMmaM; ++mi) {
#pragma unroll
    for (int ni = 0; ni < kMmaN; ++ni) {
      const int row = row0 + mi * 16 + g;
      const int col = col0 + ni * 8 + 2 * t;
      float* dst = C + int64_t(row) * N + col;
      *reinterpret_cast<float2*>(dst) = make_float2(acc[mi][ni][0], acc[mi][ni][1]);
      *reinterpret_cast<float2*>(dst + int64_t(8) * N) =
          make_float2(acc[mi][ni][2], acc[mi][ni][3]);
    }
  }
}

/// One block computes a 128x128 tile of C; warp (wm, wn) of the 2 x 4 grid a 64x32 tile, 4 x 4 mma
/// tiles. Preconditions (can_implement, launcher): M, N multiples of 128, K of 16, pointers 16-byte
/// aligned.
template <class Cfg>
__global__ void __launch_bounds__(kThreads, 2)
    Tf32GemmKernel(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C,
                   int M, int N, int K) {
  extern __shared__ __align__(1024) uint8_t smem[];
  // Stage s: A tile at s * 16 KiB, B tile 8 KiB after it.
  const uint32_t smem_base = ptx::SmemAddr(smem);
  const int tid = int(threadIdx.x), lane = tid & 31, warp = tid >> 5;
  const int2 origin = BlockOrigin(M, N);

  // gmem -> smem: two 16-byte chunks of A (rows r, r+64) and two of B (k rows kr, kr+8) per
  // thread and tile; the second chunk of each is 4 KiB further in smem, same swizzle phase.
  const int r = tid >> 2, rc = tid & 3;
  const int kr = tid >> 5, kc = tid & 31;
  const float* a_src = A + int64_t(origin.x + r) * K + rc * 4;
  const float* b_src = B + int64_t(kr) * N + origin.y + kc * 4;
  const int64_t a_second = int64_t(64) * K, b_second = int64_t(8) * N;
  const int64_t b_step = int64_t(kBlockK) * N;
  const uint32_t a_dst = AOffset(r, rc), b_dst = kTileBytes + BOffset(kr, kc);
  uint4 staged[4];

  const auto stage_addr = [&](int s) { return smem_base + uint32_t(s) * uint32_t(kStageBytes); };
  const auto issue_async = [&](uint32_t stage) {  // LOAD_MODE 1
    ptx::CpAsyncCg16(stage + a_dst, a_src);
    ptx::CpAsyncCg16(stage + a_dst + 4096, a_src + a_second);
    ptx::CpAsyncCg16(stage + b_dst, b_src);
    ptx::CpAsyncCg16(stage + b_dst + 4096, b_src + b_second);
    ptx::CpAsyncCommitGroup();
    a_src += kBlockK;
    b_src += b_step;
  };
  const auto load_registers = [&] {  // LOAD_MODE 0, first half
    staged[0] = *reinterpret_cast<const uint4*>(a_src);
    staged[1] = *reinterpret_cast<const uint4*>(a_src + a_second);
    staged[2] = *reinterpret_cast<const uint4*>(b_src);
    staged[3] = *reinterpret_cast<const uint4*>(b_src + b_second);
    a_src += kBlockK;
    b_src += b_step;
  };
  const auto store_registers = [&](uint32_t stage) {  // LOAD_MODE 0, second half
    StShared16(stage + a_dst, staged[0]);
    StShared16(stage + a_dst + 4096, staged[1]);
    StShared16(stage + b_dst, staged[2]);
    StShared16(stage + b_dst + 4096, staged[3]);
  };

  // Fragment read addresses within a stage, for mma tile 0 and k-step 0. A: ldmatrix.x4, lane l
  // gives row l % 16 of chunk l / 16: matrices (rows 0-7, k 0-3), (8-15, 0-3), (0-7, 4-7),
  // (8-15, 4-7) = a0..a3 of m16n8k8. The k-step is an XOR on the chunk bits (chunk 2*ks + l/16);
  // m16 tile mi adds 16 rows (same swizzle phase). B: b0 = (k t, n g), b1 = (k t+4, n g); n8 tile
  // ni is an XOR of 2*ni on the chunk (wn/4 is a multiple of 8); k rows add 512 bytes each.
  const int g = lane >> 2, t = lane & 3;
  const int wm = (warp >> 2) * kWarpM, wn = (warp & 3) * kWarpN;
  const uint32_t a_frag = AOffset(wm + (lane & 15), lane >> 4);
  const uint32_t b_frag = kTileBytes + BOffset(t, (wn >> 2) + (g >> 2)) + uint32_t(g & 3) * 4;

  float acc[kMmaM][kMmaN][4];
#pragma unroll
  for (int mi = 0; mi < kMmaM; ++mi)
#pragma unroll
    for (int ni = 0; ni < kMmaN; ++ni)
#pragma unroll
      for (int e = 0; e < 4; ++e) acc[mi][ni][e] = 0.0f;

  const auto compute_tile = [&](uint32_t stage) { ComputeTile(acc, stage, a_frag, b_frag); };

  const int tiles = K / kBlockK;
  if constexpr (Cfg::kLoadMode == 0) {
    // One barrier per tile: tile t+1 goes into registers before the mma of tile t and into the
    // other stage after them; the barrier publishes it and frees stage t for tile t+2.
    load_registers();
    store_registers(stage_addr(0));
    __syncthreads();
    for (int kt = 0; kt < tiles; ++kt) {
      const bool more = kt + 1 < tiles;
      if (more) load_registers();
      compute_tile(stage_addr(kt & 1));
      if (more) store_registers(stage_addr((kt + 1) & 1));
      __syncthreads();
    }
  } else {
    // One barrier per tile: it makes tile t (waited for by every thread) visible and guarantees
    // that tile t-1's stage is no longer read, so tile t+1 can be issued into it right after.
    issue_async(stage_addr(0));
    for (int kt = 0; kt < tiles; ++kt) {
      ptx::CpAsyncWaitGroup<0>();
      __syncthreads();
      if (kt + 1 < tiles) issue_async(stage_addr((kt + 1) & 1));
      compute_tile(stage_addr(kt & 1));
    }
  }

  StoreTile(acc, C, N, origin.x + wm, origin.y + wn, g, t);
}

}  // namespace ablation::kernels::tf32_gemm
