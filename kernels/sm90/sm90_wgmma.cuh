// The wgmma rungs of the Hopper ladder (H2..H10): 128x256x64 block tile computed by two warpgroups,
// each one 64x256 half with wgmma m64n256k16 (4 per k-tile) from shared memory, TMA loads of 4
// stages completing on mbarriers. The template's knobs add warp specialisation, a persistent grid,
// 2x1 clusters with B multicast, an L2-friendly tile order, 16-byte or TMA stores, a stream-K
// tail and an epilogue overlapped with the next tile, one per rung (sm90_config.h); 2x2 clusters
// are a configuration of the tuning tool only.
#pragma once

#include <cuda_bf16.h>

#include <cstdint>
#include <type_traits>

#include "kernels/sm90/sm90_config.h"
#include "kernels/sm90/sm90_mma.cuh"
#include "kernels/sm90/sm90_ptx.cuh"

namespace ablation::kernels::sm90 {

template <bool kWarpSpecialized_, bool kPersistent_, int kClusterM_, bool kGroupedOrder_,
          int kPending_ = 0, Epilogue kEpilogue_ = Epilogue::kDirect, bool kStreamK_ = false,
          int kClusterN_ = 1, int kSkMaxFullQuarters_ = kStreamKMaxFullQuarters,
          bool kOverlapEpilogue_ = false, int kGroupRows_ = kGroupRows>
struct WgmmaConfig {
  /// Unit rows of one group of the grouped order (the tuning tool's knob; the ladder's is
  /// kGroupRows).
  static constexpr int kGroup = kGroupRows_;
  /// A tile's TMA-store epilogue runs during the next tile's first k-tiles: its accumulators wait
  /// packed to bf16 in registers and go out one 64x64 chunk per k-tile while the wgmma run.
  static constexpr bool kOverlapEpilogue = kOverlapEpilogue_;
  /// CTAs per cluster along N (1 or 2, with kClusterM 2): with 2, the CTAs of a cluster row also
  /// share A, each loading half of it and multicasting it to the other.
  static constexpr int kClusterN = kClusterN_;
  /// Stream-K shares the last round when it is at most this many quarters full (the tuning
  /// tool's knob; 4: whenever one is left over).
  static constexpr int kSkMaxFullQuarters = kSkMaxFullQuarters_;
  /// The units left after the last whole round are shared along K by all clusters (stream-K),
  /// the partial sums fixed up through global memory (StreamKPlan says when).
  static constexpr bool kStreamK = kStreamK_;
  /// How the tile of C is written (sm90_config.h).
  static constexpr Epilogue kEpilogue = kEpilogue_;
  /// A producer warpgroup issues the loads; the two consumer warpgroups only compute.
  static constexpr bool kWarpSpecialized = kWarpSpecialized_;
  /// gridDim.x CTAs (one per SM) walk the tiles.
  static constexpr bool kPersistent = kPersistent_;
  /// CTAs per cluster along M (1 or 2); with 2 each loads half of B and multicasts it.
  static constexpr int kClusterM = kClusterM_;
  /// Tiles in groups of kGroupRows tile rows, walked down then right.
  static constexpr bool kGroupedOrder = kGroupedOrder_;
  /// wgmma batches a consumer leaves running when it moves to the next k-tile (0 or 1); with 1
  /// the stage of the batch before is released once that batch is done.
  static constexpr int kPending = kPending_;
  static constexpr int kThreads = kWarpSpecialized ? 384 : 256;
  static constexpr int kConsumerWarps = 8;
  static_assert(kClusterM == 1 || kClusterM == 2, "clusters of 1 or 2 CTAs along M");
  static_assert(kClusterN == 1 || (kClusterN == 2 && kClusterM == 2), "2x2 clusters or 1 along N");
  /// CTAs of a cluster, rank r at (r % kClusterM, r / kClusterM) of its unit of tiles.
  static constexpr int kCtas = kClusterM * kClusterN;
  /// CTAs that write into a CTA's stages (itself, its B partner along M, its A partner along N):
  /// each of their consumers releases a stage to all of them.
  static constexpr int kWriters = kClusterM + kClusterN - 1;
  static_assert(kWarpSpecialized ||
                    (!kPersistent && kClusterM == 1 && kEpilogue != Epilogue::kTmaStore),
                "the persistent, cluster and TMA-store rungs build on the warp-specialised one");
  static_assert(!kStreamK || kPersistent, "stream-K shares the last round of a persistent grid");
  static_assert(!kOverlapEpilogue || (kPersistent && kEpilogue == Epilogue::kTmaStore),
                "the overlapped epilogue is the TMA-store one of a persistent grid");
};

namespace wgmma_detail {

/// Tile (m, n) of work unit `unit`; a unit is kClusterM x kClusterN adjacent tiles (one per CTA
/// of a cluster), `rank` picks this CTA's.
template <class Cfg>
__device__ __forceinline__ void TileOf(int unit, int m_tiles, int n_tiles, int rank, int* m0,
                                       int* n0) {
  const int units_m = m_tiles / Cfg::kClusterM;
  const int units_n = n_tiles / Cfg::kClusterN;
  int um, un;
  if constexpr (Cfg::kGroupedOrder) {
    const int per_group = Cfg::kGroup * units_n;
    const int first = (unit / per_group) * Cfg::kGroup;
    const int rows = min(Cfg::kGroup, units_m - first);
    const int r = unit % per_group;
    um = first + r % rows;
    un = r / rows;
  } else {
    um = unit / units_n;
    un = unit % units_n;
  }
  *m0 = (um * Cfg::kClusterM + rank % Cfg::kClusterM) * kBlockM;
  *n0 = (un * Cfg::kClusterN + rank / Cfg::kClusterM) * kBlockN;
}

/// A warpgroup's wgmma descriptors of stage 0 (its 64 rows of A, all of B); stage s is
/// s * kStageDesc further on.
struct StageDescs {
  uint64_t a, b;
};
inline constexpr uint64_t kStageDesc = kStageBytes >> 4;

/// For consumer warpgroup `cw` (rows cw*64.. of the tile), warp-uniform, of the stages at `smem`.
__device__ __forceinline__ StageDescs DescsOf(const uint8_t* smem, int cw) {
  const uint32_t base = SmemAddr(smem);
  return {SmemDescK128B(base + cw * 64 * 128), SmemDescK128B(base + kATileBytes)};
}

/// The four wgmma of one k-tile of stage `s` for the warpgroup whose descriptors are `st`.
/// Returns with at most kPending of this warpgroup's k-tile batches still running.
template <int kPending>
__device__ __forceinline__ void MmaStage(float (&d)[128], const StageDescs& st, int s,
                                         bool accumulate) {
#pragma unroll
  for (int i = 0; i < 128; ++i) FenceOperand(d[i]);
  WgmmaFence();
  const uint64_t da = st.a + s * kStageDesc, db = st.b + s * kStageDesc;
#pragma unroll
  for (int kk = 0; kk < kBlockK / 16; ++kk) {  // a k-step is 32 bytes into the swizzled rows
    WgmmaM64N256K16Bf16(d, da + kk * 2, db + kk * 2, (accumulate || kk > 0) ? 1 : 0);
  }
  WgmmaCommit();
  WgmmaWait<kPending>();
#pragma unroll
  for (int i = 0; i < 128; ++i) FenceOperand(d[i]);
}

/// Writes consumer warpgroup `cw`'s 64x256 half of the tile at (m0, n0) (wgmma's accumulator
/// layout: warp w holds rows 16w..16w+15, register 4j+{0,1} row l/4, 4j+{2,3} row l/4+8, columns
/// 8j + 2(l%4) + {0,1}).
__device__ __forceinline__ void StoreTile(const float (&d)[128], __nv_bfloat16* c, int64_t n,
                                          int m0, int n0, int cw) {
  const int t = threadIdx.x & 127, warp = t >> 5, lane = t & 31;
  const int row = m0 + cw * 64 + warp * 16 + (lane >> 2);
  const int col = n0 + (lane & 3) * 2;
#pragma unroll
  for (int j = 0; j < 32; ++j) {
    StoreBf16x2(c, n, row, col + j * 8, d[4 * j], d[4 * j + 1]);
    StoreBf16x2(c, n, row + 8, col + j * 8, d[4 * j + 2], d[4 * j + 3]);
  }
}

/// One of four words by a run-time index, as selects (a run-time index into a register array
/// would put it in local memory).
__device__ __forceinline__ uint32_t Pick(const uint32_t (&w)[4], int i) {
  return i == 0 ? w[0] : i == 1 ? w[1] : i == 2 ? w[2] : w[3];
}

/// As StoreTile, with 16-byte stores: the four lanes of a quad hold 2 columns each of four
/// consecutive 8-column blocks; a 4x4 transpose by shuffles gives each lane one whole block, so
/// a warp's store writes 8 rows x 64 contiguous bytes instead of 8 rows x 16 scattered ones.
__device__ __forceinline__ void StoreTileWide(const float (&d)[128], __nv_bfloat16* c, int64_t n,
                                              int m0, int n0, int cw) {
  const int t = threadIdx.x & 127, warp = t >> 5, lane = t & 31, q = lane & 3;
  const int row = m0 + cw * 64 + warp * 16 + (lane >> 2);
#pragma unroll
  for (int half = 0; half < 2; ++half) {
#pragma unroll
    for (int g = 0; g < 8; ++g) {
      uint32_t mine[4], out[4];
#pragma unroll
      for (int b = 0; b < 4; ++b) {
        const int j = 4 * g + b;
        mine[b] = PackBf16x2(d[4 * j + 2 * half], d[4 * j + 2 * half + 1]);
      }
      out[0] = mine[0];  // placeholders; set below by source lane
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        // From lane q ^ i: its two columns of block q (lane q ^ i sent Pick(mine, q)).
        const uint32_t got =
            i == 0 ? Pick(mine, q) : __shfl_xor_sync(0xffffffffu, Pick(mine, q ^ i), i);
        const int src = q ^ i;
        out[0] = src == 0 ? got : out[0];
        out[1] = src == 1 ? got : out[1];
        out[2] = src == 2 ? got : out[2];
        out[3] = src == 3 ? got : out[3];
      }
      const int col = n0 + 8 * (4 * g + q);
      *reinterpret_cast<uint4*>(c + int64_t(row + 8 * half) * n + col) =
          make_uint4(out[0], out[1], out[2], out[3]);
    }
  }
}

/// As StoreTile, through shared memory and TMA: the warpgroup's 64x256 half goes out in four
/// 64x64 chunks. Each chunk is written with stmatrix (the accumulator layout is stmatrix's, so no
/// shuffles) into one of the warpgroup's two 8 KiB buffers in the 128-byte-swizzled layout the
/// map of C names (the 16-byte column chunk c of row r sits at c ^ (r % 8): the eight rows of
/// one stmatrix phase fall in eight different bank groups), then one thread stores it with a bulk
/// tensor copy. A buffer is rewritten once the store issued from it two chunks before has read
/// it, so the last stores of a tile run on while the next tile computes.
/// Chunk p (columns 64p..64p+63 of the half) of StoreTileTma, from the accumulators packed two
/// by two: w[i] = bf16x2(d[2i], d[2i+1]).
template <int kP>
__device__ __forceinline__ void StoreChunkTma(const uint32_t (&w)[64], uint8_t* buffers,
                                              const CUtensorMap* map_c, int m0, int n0, int cw) {
  const int t = threadIdx.x & 127, warp = t >> 5, lane = t & 31;
  const int mi = lane >> 3;                               // the matrix this lane addresses
  const int row = warp * 16 + (mi & 1) * 8 + (lane & 7);  // its row within the 64 of the half
  uint8_t* buf = buffers + (kP & 1) * kStoreChunkBytes;
  if (t == 0) TmaStoreWaitRead<1>();
  NamedBarrierSync(1 + cw, 128);  // the buffer is free for all 128 threads
#pragma unroll
  for (int jj = 0; jj < 8; jj += 2) {
    const int j = 8 * kP + jj;  // 8-column block of the 256
    const int c16 = jj + (mi >> 1);
    StMatrixX4(buf + row * 128 + ((c16 ^ (row & 7)) << 4), w[2 * j], w[2 * j + 1], w[2 * j + 2],
               w[2 * j + 3]);
  }
  FenceProxyAsyncShared();
  NamedBarrierSync(1 + cw, 128);  // every lane's chunk is written and visible to TMA
  if (t == 0) {
    TmaStore2d(map_c, buf, n0 + 64 * kP, m0 + cw * 64);
    TmaStoreCommit();
  }
}

__device__ __forceinline__ void PackTile(const float (&d)[128], uint32_t (&w)[64]) {
#pragma unroll
  for (int i = 0; i < 64; ++i) w[i] = PackBf16x2(d[2 * i], d[2 * i + 1]);
}

__device__ __forceinline__ void StoreTileTma(const float (&d)[128], uint8_t* buffers,
                                             const CUtensorMap* map_c, int m0, int n0, int cw) {
  uint32_t w[64];
  PackTile(d, w);
  StoreChunkTma<0>(w, buffers, map_c, m0, n0, cw);
  StoreChunkTma<1>(w, buffers, map_c, m0, n0, cw);
  StoreChunkTma<2>(w, buffers, map_c, m0, n0, cw);
  StoreChunkTma<3>(w, buffers, map_c, m0, n0, cw);
}

/// Writes consumer warpgroup `cw`'s half of the tile at (m0, n0) the way the rung says.
template <class Cfg>
__device__ __forceinline__ void StoreTileAs(const float (&d)[128], __nv_bfloat16* c, int64_t n,
                                            uint8_t* store_buffers, const CUtensorMap* map_c,
                                            int m0, int n0, int cw) {
  if constexpr (Cfg::kEpilogue == Epilogue::kTmaStore) {
    StoreTileTma(d, store_buffers + cw * 2 * kStoreChunkBytes, map_c, m0, n0, cw);
  } else if constexpr (Cfg::kEpilogue == Epilogue::kWide) {
    StoreTileWide(d, c, n, m0, n0, cw);
  } else {
    StoreTile(d, c, n, m0, n0, cw);
  }
}

/// This CTA's schedule (sm90_config.h), its stream-K part read from the launch's parameters.
template <class Cfg>
__device__ __forceinline__ Schedule ScheduleOf(int units, int kt_count, const StreamKArgs& sk) {
  Schedule s;
  s.kt_count = kt_count;
  s.cluster = int(blockIdx.x) / Cfg::kCtas;
  s.clusters = Cfg::kPersistent ? int(gridDim.x) / Cfg::kCtas : units;
  s.dp_units = Cfg::kStreamK ? sk.dp_units : units;
  if constexpr (Cfg::kStreamK) {
    s.sk_clusters = sk.sk_clusters;
    s.sk_iters = sk.sk_iters;
  }
  return s;
}

/// Calls f(unit, first k-tile, end k-tile, stream-K unit or -1) for this cluster's work in order:
/// its whole units, then its stream-K segments (SkSegmentAt says why in that order). The
/// schedule is made where it is used, from the kernel's parameters (constant memory), so that
/// the producer (40 registers) holds none of it across its loops.
template <class Cfg, class F>
__device__ __forceinline__ void ForEachWork(int units, int kt_count, const StreamKArgs& sk, F&& f) {
  {
    const Schedule s = ScheduleOf<Cfg>(units, kt_count, sk);
    for (int unit = s.cluster; unit < s.dp_units; unit += s.clusters) f(unit, 0, kt_count, -1);
  }
  if constexpr (Cfg::kStreamK) {
    SkSegment seg;
    for (int i = 0;
         SkSegmentAt(ScheduleOf<Cfg>(units, kt_count, sk), int(blockIdx.x) / Cfg::kCtas, i, &seg);
         ++i) {
      f(seg.unit, seg.kb, seg.ke, seg.sku);
    }
  }
}

/// Where a stream-K partial lives: per (stream-K unit, CTA rank, slot, consumer warpgroup) a
/// 64x256 fp32 block, stored as 32 float4 per thread with the threads of a warpgroup adjacent
/// (each warp writes 512 contiguous bytes), and one flag.
template <int kCtas>
__device__ __forceinline__ int64_t PartialIndex(int sku, int rank, int slot, int cw) {
  return ((int64_t(sku) * kCtas + rank) * 2 + slot) * 2 + cw;
}

__device__ __forceinline__ void WritePartial(const float (&d)[128], float* block) {
  const int t = threadIdx.x & 127;
  float4* out = reinterpret_cast<float4*>(block);
#pragma unroll
  for (int i = 0; i < 32; ++i) {
    __stcg(out + i * 128 + t, make_float4(d[4 * i], d[4 * i + 1], d[4 * i + 2], d[4 * i + 3]));
  }
}

__device__ __forceinline__ void AddPartial(float (&d)[128], const float* block) {
  const int t = threadIdx.x & 127;
  const float4* in = reinterpret_cast<const float4*>(block);
#pragma unroll
  for (int i = 0; i < 32; ++i) {
    const float4 v = __ldcg(in + i * 128 + t);
    d[4 * i] += v.x;
    d[4 * i + 1] += v.y;
    d[4 * i + 2] += v.z;
    d[4 * i + 3] += v.w;
  }
}

__device__ __forceinline__ void SignalFlag(uint32_t* flag, uint32_t epoch) {
  __threadfence();
  asm volatile("st.release.gpu.global.u32 [%0], %1;\n" ::"l"(flag), "r"(epoch) : "memory");
}

__device__ __forceinline__ void WaitFlag(const uint32_t* flag, uint32_t epoch) {
  uint32_t v;
  do {
    asm volatile("ld.acquire.gpu.global.u32 %0, [%1];\n" : "=r"(v) : "l"(flag) : "memory");
  } while (v != epoch);
}

}  // namespace wgmma_detail

/// C = A * B^T, B given N x K. Shapes are checked by the launcher: M % (128 * kClusterM),
/// N % 256, K % 64 == 0. Non-persistent rungs: one tile per CTA; persistent: gridDim.x CTAs.
template <class Cfg>
__global__ void __launch_bounds__(Cfg::kThreads, 1)
    Sm90WgmmaKernel(const __grid_constant__ CUtensorMap map_a,
                    const __grid_constant__ CUtensorMap map_b,
                    const __grid_constant__ CUtensorMap map_c, __nv_bfloat16* __restrict__ c, int m,
                    int n, int k, const __grid_constant__ StreamKArgs sk) {
  using namespace wgmma_detail;
  extern __shared__ uint8_t smem_raw[];
  uint8_t* smem = AlignSmem1024(smem_raw);
  constexpr bool kTmaStore = Cfg::kEpilogue == Epilogue::kTmaStore;
  uint8_t* store_buffers = smem + kStages * kStageBytes;  // kTmaStore only
  uint64_t* full = reinterpret_cast<uint64_t*>(store_buffers + (kTmaStore ? kStoreBufferBytes : 0));
  uint64_t* empty = full + kStages;
  auto stage_a = [&](int s) { return smem + s * kStageBytes; };
  auto stage_b = [&](int s) { return smem + s * kStageBytes + kATileBytes; };

  const int m_tiles = m / kBlockM, n_tiles = n / kBlockN;
  const int units = (m_tiles / Cfg::kClusterM) * (n_tiles / Cfg::kClusterN);
  const int kt_count = k / kBlockK;
  const int rank = Cfg::kClusterM == 1 ? 0 : int(ClusterCtaRank());
  const int unit0 = int(blockIdx.x) / Cfg::kCtas;

  if (threadIdx.x == 0) {
    TmaPrefetchMap(&map_a);
    TmaPrefetchMap(&map_b);
    if constexpr (kTmaStore) TmaPrefetchMap(&map_c);
    for (int s = 0; s < kStages; ++s) {
      MbarInit(&full[s], 1);
      MbarInit(&empty[s], Cfg::kConsumerWarps * Cfg::kWriters);
    }
    FenceBarrierInit();
  }
  if constexpr (Cfg::kClusterM > 1) {
    ClusterSync();  // the peer's barriers exist before anything multicasts into them
  } else {
    __syncthreads();
  }

  if constexpr (!Cfg::kWarpSpecialized) {
    // H2: every thread computes; thread 0 also refills the stage the block finished last.
    const int cw = WarpUniform(threadIdx.x / 128);
    const StageDescs descs = DescsOf(smem, cw);
    int m0, n0;
    TileOf<Cfg>(unit0, m_tiles, n_tiles, 0, &m0, &n0);
    auto issue = [&](int s, int kt) {
      if (threadIdx.x == 0 && kt < kt_count)
        TmaStage(stage_a(s), &map_a, &map_b, &full[s], kt, m0, n0);
    };
    float d[128] = {};
    for (int s = 0; s < kStages - 1; ++s) issue(s, s);
    for (int kt = 0; kt < kt_count; ++kt) {
      const int s = kt % kStages;
      MbarWait(&full[s], uint32_t(kt / kStages) & 1);
      __syncthreads();
      issue((kt + kStages - 1) % kStages, kt + kStages - 1);
      MmaStage<0>(d, descs, s, kt > 0);
    }
    StoreTileAs<Cfg>(d, c, n, store_buffers, &map_c, m0, n0, cw);
  } else {
    const int wg = threadIdx.x / 128;
    if (wg == 0) {
      SetMaxNRegDec<40>();
      if (threadIdx.x == 0) {
        int s = 0;
        uint32_t phase = 0;
        ForEachWork<Cfg>(units, kt_count, sk, [&](int unit, int kb, int ke, int) {
          int m0, n0;
          TileOf<Cfg>(unit, m_tiles, n_tiles, rank, &m0, &n0);
          for (int kt = kb; kt < ke; ++kt) {
            MbarWait(&empty[s], phase ^ 1);
            if constexpr (Cfg::kClusterN == 2) {
              // 2x2: each CTA loads half of its A (shared along N with rank ^ 2) and half of its
              // B (shared along M with rank ^ 1), each into itself and that partner.
              // The rank is read again here rather than kept: the producer has 40 registers.
              const uint32_t r = ClusterCtaRank(), rm = r & 1, rn = r >> 1;
              MbarArriveExpectTx(&full[s], kStageBytes);
              TmaLoad2dMulticast(stage_a(s) + rn * (kATileBytes / 2), &map_a, &full[s],
                                 kt * kBlockK, m0 + int(rn) * (kBlockM / 2),
                                 uint16_t((1u << r) | (1u << (r ^ 2))));
              TmaLoad2dMulticast(stage_b(s) + rm * (kBTileBytes / 2), &map_b, &full[s],
                                 kt * kBlockK, n0 + int(rm) * (kBlockN / 2),
                                 uint16_t((1u << r) | (1u << (r ^ 1))));
            } else if constexpr (Cfg::kClusterM == 2) {
              // Each CTA loads its A and its half of the shared B tile, into both CTAs.
              MbarArriveExpectTx(&full[s], kStageBytes);
              TmaLoad2d(stage_a(s), &map_a, &full[s], kt * kBlockK, m0);
              TmaLoad2dMulticast(stage_b(s) + rank * (kBTileBytes / 2), &map_b, &full[s],
                                 kt * kBlockK, n0 + rank * (kBlockN / 2), uint16_t(0x3));
            } else {
              TmaStage(stage_a(s), &map_a, &map_b, &full[s], kt, m0, n0);
            }
            if (++s == kStages) {
              s = 0;
              phase ^= 1;
            }
          }
        });
      }
    } else {
      SetMaxNRegInc<232>();
      const int cw = WarpUniform(wg) - 1;
      const int t = threadIdx.x & 127, lane = threadIdx.x & 31;
      // Addresses of the hot loop, computed once: the descriptors, the full barriers, and the
      // empty barriers as every CTA that writes into this one sees them (2x1: both CTAs, each
      // writing half of B; 2x2: itself, its B partner rank ^ 1 and its A partner rank ^ 2).
      const StageDescs descs = DescsOf(smem, cw);
      const uint32_t full_at = SmemAddr(full), empty_at = SmemAddr(empty);
      uint32_t empty_remote[Cfg::kWriters];
      if constexpr (Cfg::kClusterN == 2) {
        const uint32_t r = ClusterCtaRank();
        empty_remote[0] = MapaShared(empty_at, r);
        empty_remote[1] = MapaShared(empty_at, r ^ 1);
        empty_remote[2] = MapaShared(empty_at, r ^ 2);
      } else if constexpr (Cfg::kClusterM == 2) {
        empty_remote[0] = MapaShared(empty_at, 0);
        empty_remote[1] = MapaShared(empty_at, 1);
      }
      float d[128] = {};
      int s = 0;
      uint32_t phase = 0;
      // Releases stage `rs` once this warp's wgmma have read it, to every producer that writes
      // into this CTA.
      auto release = [&](int rs) {
        __syncwarp();
        if (lane == 0) {
          if constexpr (Cfg::kClusterM == 1) {
            MbarArrive(&empty[rs]);
          } else {
#pragma unroll
            for (int w = 0; w < Cfg::kWriters; ++w) MbarArriveRemote(empty_remote[w] + rs * 8);
          }
        }
      };
      uint8_t* my_buffers = store_buffers + cw * 2 * kStoreChunkBytes;
      // The overlapped epilogue's tile waiting to be stored (packed), and where it goes.
      uint32_t held[Cfg::kOverlapEpilogue ? 64 : 1];
      bool holding = false;
      int held_m0 = 0, held_n0 = 0;
      ForEachWork<Cfg>(units, kt_count, sk, [&](int unit, int kb, int ke, int sku) {
        int m0, n0;
        TileOf<Cfg>(unit, m_tiles, n_tiles, rank, &m0, &n0);
        int prev = -1;
        auto k_tile = [&](int kt) {
          MbarWaitAt(full_at + s * 8, phase);
          MmaStage<Cfg::kPending>(d, descs, s, kt > kb);
          if constexpr (Cfg::kPending == 0) {
            release(s);
          } else {
            if (prev >= 0) release(prev);  // the batch before this one has finished
            prev = s;
          }
          if (++s == kStages) {
            s = 0;
            phase ^= 1;
          }
        };
        int kt = kb;
        if constexpr (Cfg::kOverlapEpilogue) {
          // The held tile goes out one chunk after each of the first four k-tiles' batches is
          // issued, while it runs (all four even when the range is shorter).
          auto chunk = [&](auto p) {
            if (kt < ke) k_tile(kt++);
            if (holding)
              StoreChunkTma<decltype(p)::value>(held, my_buffers, &map_c, held_m0, held_n0, cw);
          };
          chunk(std::integral_constant<int, 0>{});
          chunk(std::integral_constant<int, 1>{});
          chunk(std::integral_constant<int, 2>{});
          chunk(std::integral_constant<int, 3>{});
          holding = false;
        }
        for (; kt < ke; ++kt) k_tile(kt);
        if constexpr (Cfg::kPending > 0) {
          WgmmaWait<0>();
#pragma unroll
          for (int i = 0; i < 128; ++i) FenceOperand(d[i]);
          release(prev);
        }
        if constexpr (Cfg::kStreamK) {
          if (sku >= 0) {
            const int slot = ScheduleOf<Cfg>(units, kt_count, sk).SlotOf(sku, kb);
            if (ke < kt_count) {
              // Not the unit's last k-tiles: leave the partial sum for the cluster that has them.
              const int64_t at = PartialIndex<Cfg::kCtas>(sku, rank, slot, cw);
              WritePartial(d, sk.partials + at * (64 * 256));
              NamedBarrierSync(1 + cw, 128);
              if (t == 0) SignalFlag(sk.flags + at, sk.epoch);
              return;
            }
            for (int from = 0; from < slot; ++from) {  // the partials of the k-tiles before kb
              const int64_t at = PartialIndex<Cfg::kCtas>(sku, rank, from, cw);
              if (t == 0) WaitFlag(sk.flags + at, sk.epoch);
              NamedBarrierSync(1 + cw, 128);
              AddPartial(d, sk.partials + at * (64 * 256));
            }
          }
        }
        if constexpr (Cfg::kOverlapEpilogue) {
          PackTile(d, held);
          holding = true;
          held_m0 = m0;
          held_n0 = n0;
        } else {
          StoreTileAs<Cfg>(d, c, n, store_buffers, &map_c, m0, n0, cw);
        }
      });
      if constexpr (Cfg::kOverlapEpilogue) {
        if (holding) {
          StoreChunkTma<0>(held, my_buffers, &map_c, held_m0, held_n0, cw);
          StoreChunkTma<1>(held, my_buffers, &map_c, held_m0, held_n0, cw);
          StoreChunkTma<2>(held, my_buffers, &map_c, held_m0, held_n0, cw);
          StoreChunkTma<3>(held, my_buffers, &map_c, held_m0, held_n0, cw);
        }
      }
      if constexpr (kTmaStore) {
        if (t == 0) TmaStoreWaitAll();  // the buffers outlive the last store
      }
    }
  }
  if constexpr (Cfg::kClusterM > 1) {
    ClusterSync();  // no CTA leaves while its peer may still write into it or arrive on it
  }
}

}  // namespace ablation::kernels::sm90
