// The SIMT SGEMM ladder: FP32 FFMA on the CUDA cores, no Tensor Cores, optimised as far as the
// Tensor Core kernels it is compared with (a fair comparison needs both sides fully optimised). One
// template whose knobs are switched on one at a time, in the classic sgemm ladder's order:
// shared-memory tiling with 8x8 register blocking -> A transposed into shared memory ->
// bank-conflict-free swizzle of that transposed store -> coalesced (float4) C writes ->
// double-buffered shared memory.
//
// C = A * B, A M x K row-major, B K x N row-major, C M x N row-major, all fp32. Every rung gives
// each thread the same 8x8 outputs and accumulates each of them with one fmaf chain in ascending k,
// so all five rungs give bit-identical C (the knobs only move data).
#pragma once

#include <cstdint>

#include "kernels/common/ptx.cuh"
#include "kernels/common/raster.cuh"
#include "kernels/simt/simt_shape.h"

namespace ablation::kernels::simt_gemm {

template <int A_TRANSPOSED_,   /// A in smem: 0 As[m][k] (scalar reads), 1 As[k][m] (float4 reads)
          int SWIZZLE_,        /// 1: As[k][m ^ 16*(k/4)], conflict-free transposed store
          int COALESCED_C_,    /// C: 0 scalar stores, 1 float4 stores (whole 256-byte segments)
          int DOUBLE_BUFFER_>  /// 1: two stages, the next tile's loads overlap the FFMAs
struct Config {
  static constexpr int kATransposed = A_TRANSPOSED_;
  static constexpr int kSwizzle = SWIZZLE_;
  static constexpr int kCoalescedC = COALESCED_C_;
  static constexpr int kDoubleBuffer = DOUBLE_BUFFER_;
  static_assert(kSwizzle == 0 || kATransposed == 1, "the swizzle is of the transposed A store");
  static constexpr int kStages = kDoubleBuffer ? 2 : 1;
  static constexpr int kSmemBytes = int(SmemBytes(kDoubleBuffer));
};

inline constexpr int kTileFloats = kBlockM * kBlockK;  // A tile = B tile = 1024 floats
inline constexpr int kStageFloats = 2 * kTileFloats;
/// Output tiles are visited in groups of this many tile rows, so that concurrently running blocks
/// share A rows and B columns in L2 (the ablation family does the same).
inline constexpr int kRasterGroupM = 8;

/// Column of element (k, m) in the transposed A tile. The swizzle flips bit 4 of m in the k rows
/// 4..7: the two k halves a warp stores at once (threads 2i and 2i+1 hold k 0-3 and 4-7 of row i)
/// then land in bank halves 0-15 and 16-31 instead of both in 0-15 (a 2-way conflict per store).
/// Groups of four m stay contiguous and 16-byte aligned, so the float4 reads are unchanged.
template <int SWIZZLE>
__device__ __forceinline__ int TransposedColumn(int m, int k) {
  return SWIZZLE ? (m ^ ((k & 4) << 2)) : m;
}

/// One scalar LDS (ld.volatile.shared.f32). simt_tiling reads A through it: the reads of four
/// consecutive k of a row (As[m][k..k+3]) are adjacent in the untransposed tile, and both NVVM
/// (plain C++ loads) and ptxas (plain ld.shared.f32, checked in the SASS) merge them into one
/// LDS.128 across the unrolled k loop, i.e. do the transposition in registers, and the ladder's
/// second rung would measure nothing. Volatile keeps the 64 scalar LDS per tile the rung stands
/// for.
__device__ __forceinline__ float LdSharedF32(const float* p) {
  float v;
  asm volatile("ld.volatile.shared.f32 %0, [%1];\n" : "=f"(v) : "r"(ptx::SmemAddr(p)));
  return v;
}

/// One st.shared.v4.f32 (NVVM otherwise splits the untransposed A store into four scalar ones).
__device__ __forceinline__ void StSharedV4(float* p, const float4& v) {
  asm volatile("st.shared.v4.f32 [%0], {%1, %2, %3, %4};\n" ::"r"(ptx::SmemAddr(p)), "f"(v.x),
               "f"(v.y), "f"(v.z), "f"(v.w)
               : "memory");
}

/// The C tile of this block (row, column of its first element), grouped rasterization.
__device__ __forceinline__ int2 BlockOrigin(int M, int N) {
  const int2 t = GroupedTile(int(blockIdx.x), M / kBlockM, N / kBlockN, kRasterGroupM);
  return make_int2(t.x * kBlockM, t.y * kBlockN);
}

/// One block computes a 128x128 tile of C with 256 threads; thread (ty, tx) of the 16x16 grid owns
/// rows {ty*4 + i, 64 + ty*4 + i} and columns {tx*4 + j, 64 + tx*4 + j}, i, j < 4. The two 4-wide
/// halves keep a warp's float4 reads of B (and of transposed A) on 256 contiguous bytes.
/// Preconditions (can_implement, launcher): M, N multiples of 128, K of 8, 16-byte aligned
/// pointers.
template <class Cfg>
__global__ void __launch_bounds__(kThreads, 2)
    SimtGemmKernel(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C,
                   int M, int N, int K) {
  extern __shared__ __align__(16) float smem[];
  const int tid = int(threadIdx.x);
  const int tx = tid & 15, ty = tid >> 4;
  const int2 origin = BlockOrigin(M, N);

  // gmem -> smem: one float4 of A (row tid/2, k 0-3 or 4-7) and one of B (k row tid/32, 4
  // columns) per thread and tile; a warp reads 16 full 32-byte A rows and 512 contiguous B bytes.
  const int a_row = tid >> 1, a_k = (tid & 1) * 4;
  const int b_k = tid >> 5, b_col = (tid & 31) * 4;
  const float* a_src = A + int64_t(origin.x + a_row) * K + a_k;
  const float* b_src = B + int64_t(b_k) * N + origin.y + b_col;
  const int64_t b_step = int64_t(kBlockK) * N;
  float4 staged_a, staged_b;

  const auto load_tile = [&] {
    staged_a = *reinterpret_cast<const float4*>(a_src);
    staged_b = *reinterpret_cast<const float4*>(b_src);
    a_src += kBlockK;
    b_src += b_step;
  };
  const auto store_tile = [&](float* stage) {
    float* as = stage;
    float* bs = stage + kTileFloats;
    if constexpr (Cfg::kATransposed) {
      as[(a_k + 0) * kBlockM + TransposedColumn<Cfg::kSwizzle>(a_row, a_k + 0)] = staged_a.x;
      as[(a_k + 1) * kBlockM + TransposedColumn<Cfg::kSwizzle>(a_row, a_k + 1)] = staged_a.y;
      as[(a_k + 2) * kBlockM + TransposedColumn<Cfg::kSwizzle>(a_row, a_k + 2)] = staged_a.z;
      as[(a_k + 3) * kBlockM + TransposedColumn<Cfg::kSwizzle>(a_row, a_k + 3)] = staged_a.w;
    } else {
      StSharedV4(&as[a_row * kBlockK + a_k], staged_a);
    }
    *reinterpret_cast<float4*>(&bs[b_k * kBlockN + b_col]) = staged_b;
  };

  float acc[kThreadM][kThreadN];
#pragma unroll
  for (int i = 0; i < kThreadM; ++i)
#pragma unroll
    for (int j = 0; j < kThreadN; ++j) acc[i][j] = 0.0f;

  const auto compute_tile = [&](const float* stage) {
    const float* as = stage;
    const float* bs = stage + kTileFloats;
#pragma unroll
    for (int k = 0; k < kBlockK; ++k) {
      float a[kThreadM], b[kThreadN];
      if constexpr (Cfg::kATransposed) {
        const float4 lo = *reinterpret_cast<const float4*>(
            &as[k * kBlockM + TransposedColumn<Cfg::kSwizzle>(ty * 4, k)]);
        const float4 hi = *reinterpret_cast<const float4*>(
            &as[k * kBlockM + TransposedColumn<Cfg::kSwizzle>(64 + ty * 4, k)]);
        a[0] = lo.x, a[1] = lo.y, a[2] = lo.z, a[3] = lo.w;
        a[4] = hi.x, a[5] = hi.y, a[6] = hi.z, a[7] = hi.w;
      } else {
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          a[i] = LdSharedF32(&as[(ty * 4 + i) * kBlockK + k]);
          a[4 + i] = LdSharedF32(&as[(64 + ty * 4 + i) * kBlockK + k]);
        }
      }
      const float4 lo = *reinterpret_cast<const float4*>(&bs[k * kBlockN + tx * 4]);
      const float4 hi = *reinterpret_cast<const float4*>(&bs[k * kBlockN + 64 + tx * 4]);
      b[0] = lo.x, b[1] = lo.y, b[2] = lo.z, b[3] = lo.w;
      b[4] = hi.x, b[5] = hi.y, b[6] = hi.z, b[7] = hi.w;
#pragma unroll
      for (int i = 0; i < kThreadM; ++i)
#pragma unroll
        for (int j = 0; j < kThreadN; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
    }
  };

  const int tiles = K / kBlockK;
  if constexpr (Cfg::kDoubleBuffer) {
    // One barrier per tile: tile t+1 is loaded into registers before the FFMAs of tile t and
    // stored into the other stage after them; the barrier then publishes it and frees stage t.
    load_tile();
    store_tile(smem);
    __syncthreads();
    for (int t = 0; t < tiles; ++t) {
      const int cur = (t & 1) * kStageFloats;
      const bool more = t + 1 < tiles;
      if (more) load_tile();
      compute_tile(smem + cur);
      if (more) store_tile(smem + (kStageFloats - cur));
      __syncthreads();
    }
  } else {
    for (int t = 0; t < tiles; ++t) {
      load_tile();
      store_tile(smem);
      __syncthreads();
      compute_tile(smem);
      __syncthreads();
    }
  }

#pragma unroll
  for (int i = 0; i < kThreadM; ++i) {
    const int row = origin.x + (i < 4 ? ty * 4 + i : 64 + ty * 4 + (i - 4));
    float* dst = C + int64_t(row) * N + origin.y + tx * 4;
    if constexpr (Cfg::kCoalescedC) {
      // 16 lanes x 16 bytes: each store instruction writes two whole 256-byte row segments.
      *reinterpret_cast<float4*>(dst) = make_float4(acc[i][0], acc[i][1], acc[i][2], acc[i][3]);
      *reinterpret_cast<float4*>(dst + 64) =
          make_float4(acc[i][4], acc[i][5], acc[i][6], acc[i][7]);
    } else {
      // One float per store: a warp's store touches 16-byte-strided words, a quarter of each
      // 32-byte sector.
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        dst[j] = acc[i][j];
        dst[64 + j] = acc[i][4 + j];
      }
    }
  }
}

}  // namespace ablation::kernels::simt_gemm
