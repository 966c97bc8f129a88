// Epilogue policies of the wgmma rungs: how a consumer warpgroup writes its 64 x block_n part of a
// tile of C from wgmma's accumulator layout (warp w holds rows 16w..16w+15, register 4j+{0,1}
// row l/4, 4j+{2,3} row l/4+8, columns 8j + 2(l%4) + {0,1}). One policy per Epilogue knob value,
// and one for overlap_epilogue; EpilogueOf<K> picks it. Off the tile (Knobs::guarded) nothing
// past M or N is written: TMA clips its stores, the 16-byte stores check their row and column.
// Every policy has the same face:
//   Store(d, m0, n0)            the tile's accumulators are final: write (or hold) them;
//   OverlapWithKTiles(kt, ke, f)  at a tile's start, before its k-tile loop (f(kt) runs k-tile kt);
//   Finish(t)                   once, after the last tile (t: the thread's index in the
//                               warpgroup).
// Used by Sm90WgmmaKernel (sm90_wgmma.cuh).
#pragma once

#include <cuda_bf16.h>

#include <cstdint>
#include <type_traits>

#include "kernels/sm90/sm90_common.cuh"
#include "kernels/sm90/sm90_config.h"
#include "kernels/sm90/sm90_ptx.cuh"

namespace ablation::kernels::sm90 {

/// Epilogue::kWide: 16-byte global stores after a transpose in each lane quad (QuadTranspose):
/// a warp's store writes 8 rows x 64 contiguous bytes instead of 8 rows x 16 scattered ones.
/// kGuarded: a store past row M or column N is skipped (N is a multiple of 8, so a 16-byte
/// chunk is all in or all out).
template <bool kGuarded>
struct WideStoreEpilogue {
  __nv_bfloat16* c;
  int m;
  int64_t n;
  int cw;  ///< the consumer warpgroup: rows cw*64.. of the tile

  __device__ __forceinline__ WideStoreEpilogue(__nv_bfloat16* c_, int m_, int64_t n_, uint8_t*,
                                               const CUtensorMap*, int cw_)
      : c(c_), m(m_), n(n_), cw(cw_) {}

  template <class KTile>
  __device__ __forceinline__ void OverlapWithKTiles(int&, int, KTile&&) {}

  /// kAcc accumulators: the warpgroup's 64 x (kAcc * 2) columns, 32 columns a group g. A tile
  /// of 8 or 16 columns (4 or 8 accumulators) has no group of 32, and one of 112 (56) ends with
  /// 16 columns past its three: there each lane stores its two bf16 pairs of each 8 columns j,
  /// of a row and of the row 8 below, 4 bytes each, a lane quad 16 contiguous bytes of a row.
  template <int kAcc>
  __device__ __forceinline__ void Store(const float (&d)[kAcc], int m0, int n0) {
    const int t = threadIdx.x & 127, warp = t >> 5, lane = t & 31, q = lane & 3;
    const int row = m0 + cw * 64 + warp * 16 + (lane >> 2);
    static_assert(kAcc % 16 == 0 || kAcc % 16 == 4 || kAcc % 16 == 8,
                  "groups of 32 columns, then none, 8 or 16 more");
    // The columns past the groups of 32, 8 at a time.
#pragma unroll
    for (int j = kAcc / 16 * 4; j < kAcc / 4; ++j) {
      const int col = n0 + 8 * j + 2 * q;
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        if (kGuarded && (row + 8 * half >= m || col >= n)) continue;
        *reinterpret_cast<uint32_t*>(c + int64_t(row + 8 * half) * n + col) =
            PackBf16x2(d[4 * j + 2 * half], d[4 * j + 2 * half + 1]);
      }
    }
    if constexpr (kAcc >= 16) {
#pragma unroll
      for (int half = 0; half < 2; ++half) {
#pragma unroll
        for (int g = 0; g < kAcc / 16; ++g) {
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
          if (kGuarded && (row + 8 * half >= m || col >= n)) continue;
          *reinterpret_cast<uint4*>(c + int64_t(row + 8 * half) * n + col) =
              make_uint4(out[0], out[1], out[2], out[3]);
        }
      }
    }
  }

  __device__ __forceinline__ void Finish(int) {}

  /// One of four words by a run-time index, as selects.
  __device__ __forceinline__ static uint32_t Pick(const uint32_t (&w)[4], int i) {
    return i == 0 ? w[0] : i == 1 ? w[1] : i == 2 ? w[2] : w[3];
  }
};

/// Epilogue::kTmaStore: through shared memory and TMA. The warpgroup's 64x256 half goes out in
/// four 64x64 chunks. Each chunk is written with stmatrix (the accumulator layout is stmatrix's,
/// so no shuffles) into one of the warpgroup's two 8 KiB buffers in the 128-byte-swizzled layout
/// the map of C names (the 16-byte column chunk c of row r sits at c ^ (r % 8): the eight rows of
/// one stmatrix phase fall in eight different bank groups), then one thread stores it with a
/// bulk tensor copy. A buffer is rewritten once the store issued from it two chunks before has
/// read it, so the last stores of a tile run on while the next tile computes.
/// kPerWarp (Knobs::warp_stores): no named barrier; each warp waits for its own earlier store to
/// have read the buffer, writes its 16 rows of the chunk, and its lane 0 stores those rows (a
/// 16x64 box of C's map), the warp ordered by __syncwarp.
template <bool kPerWarp>
struct TmaStoreEpilogue {
  uint8_t* buffers;  ///< all consumers' (StoreBufferBytes); this one's are at cw * 2 chunks
  const CUtensorMap* map_c;
  int cw;

  __device__ __forceinline__ TmaStoreEpilogue(__nv_bfloat16*, int, int64_t, uint8_t* store_buffers,
                                              const CUtensorMap* map, int cw_)
      : buffers(store_buffers), map_c(map), cw(cw_) {}

  template <class KTile>
  __device__ __forceinline__ void OverlapWithKTiles(int&, int, KTile&&) {}

  __device__ __forceinline__ void Store(const float (&d)[128], int m0, int n0) {
    uint32_t w[64];
    PackAccumulators(d, w);
    StoreAll(w, buffers + cw * 2 * kStoreChunkBytes, map_c, m0, n0, cw);
  }

  __device__ __forceinline__ void Finish(int t) { WaitAllStores(t); }

  /// Once, after the last tile: every thread that issued stores waits for them (bulk async-groups
  /// are a thread's own), so that the buffers outlive the last store.
  __device__ __forceinline__ static void WaitAllStores(int t) {
    if (kPerWarp ? (t & 31) == 0 : t == 0) TmaStoreWaitAll();
  }

  /// Chunk p (columns 64p..64p+63 of the half) from the packed accumulators, through the buffers
  /// of this warpgroup at `mine`.
  template <int kP>
  __device__ __forceinline__ static void StoreChunk(const uint32_t (&w)[64], uint8_t* mine,
                                                    const CUtensorMap* map_c, int m0, int n0,
                                                    int cw) {
    const int t = threadIdx.x & 127, warp = t >> 5, lane = t & 31;
    const int mi = lane >> 3;                               // the matrix this lane addresses
    const int row = warp * 16 + (mi & 1) * 8 + (lane & 7);  // its row within the 64 of the half
    uint8_t* buf = mine + (kP & 1) * kStoreChunkBytes;
    if constexpr (kPerWarp) {
      if (lane == 0) TmaStoreWaitRead<1>();
      __syncwarp();  // the warp's rows of the buffer are free
    } else {
      if (t == 0) TmaStoreWaitRead<1>();
      NamedBarrierSync(1 + cw, 128);  // the buffer is free for all 128 threads
    }
#pragma unroll
    for (int jj = 0; jj < 8; jj += 2) {
      const int j = 8 * kP + jj;  // 8-column block of the 256
      const int c16 = jj + (mi >> 1);
      StMatrixX4(buf + row * 128 + ((c16 ^ (row & 7)) << 4), w[2 * j], w[2 * j + 1], w[2 * j + 2],
                 w[2 * j + 3]);
    }
    FenceProxyAsyncShared();
    if constexpr (kPerWarp) {
      __syncwarp();  // the warp's 16 rows are written and visible to TMA
      if (lane == 0) {
        // 16 rows of 128 bytes: 2 KiB on, the warp's rows keep the swizzle of the chunk's.
        TmaStore2d(map_c, buf + warp * 16 * 128, n0 + 64 * kP, m0 + cw * 64 + warp * 16);
        TmaStoreCommit();
      }
    } else {
      NamedBarrierSync(1 + cw, 128);  // every lane's chunk is written and visible to TMA
      if (t == 0) {
        TmaStore2d(map_c, buf, n0 + 64 * kP, m0 + cw * 64);
        TmaStoreCommit();
      }
    }
  }

  __device__ __forceinline__ static void StoreAll(const uint32_t (&w)[64], uint8_t* mine,
                                                  const CUtensorMap* map_c, int m0, int n0,
                                                  int cw) {
    StoreChunk<0>(w, mine, map_c, m0, n0, cw);
    StoreChunk<1>(w, mine, map_c, m0, n0, cw);
    StoreChunk<2>(w, mine, map_c, m0, n0, cw);
    StoreChunk<3>(w, mine, map_c, m0, n0, cw);
  }
};

/// overlap_epilogue: the TMA-store epilogue run during the next tile's first k-tiles. Store only
/// packs the accumulators to bf16 and holds them in registers; the next tile then issues one
/// 64x64 chunk after each of its first four k-tile batches, while that batch runs, so the tensor
/// cores no longer idle through the stores. kPerWarp: TmaStoreEpilogue's.
template <bool kPerWarp>
struct OverlappedTmaStoreEpilogue {
  using Stores = TmaStoreEpilogue<kPerWarp>;

  uint8_t* mine;  ///< this warpgroup's two chunk buffers
  const CUtensorMap* map_c;
  int cw;
  uint32_t held[64];  ///< the tile waiting to be stored, packed
  bool holding = false;
  int held_m0 = 0, held_n0 = 0;

  __device__ __forceinline__ OverlappedTmaStoreEpilogue(__nv_bfloat16*, int, int64_t,
                                                        uint8_t* store_buffers,
                                                        const CUtensorMap* map, int cw_)
      : mine(store_buffers + cw_ * 2 * kStoreChunkBytes), map_c(map), cw(cw_) {}

  /// Runs k-tiles kt.. of the tile (at most four, up to ke) and stores the held tile one chunk
  /// after each (all four chunks even when the range is shorter).
  template <class KTile>
  __device__ __forceinline__ void OverlapWithKTiles(int& kt, int ke, KTile&& k_tile) {
    auto chunk = [&](auto p) {
      if (kt < ke) k_tile(kt++);
      if (holding) {
        Stores::template StoreChunk<decltype(p)::value>(held, mine, map_c, held_m0, held_n0, cw);
      }
    };
    chunk(std::integral_constant<int, 0>{});
    chunk(std::integral_constant<int, 1>{});
    chunk(std::integral_constant<int, 2>{});
    chunk(std::integral_constant<int, 3>{});
    holding = false;
  }

  __device__ __forceinline__ void Store(const float (&d)[128], int m0, int n0) {
    PackAccumulators(d, held);
    holding = true;
    held_m0 = m0;
    held_n0 = n0;
  }

  __device__ __forceinline__ void Finish(int t) {
    if (holding) Stores::StoreAll(held, mine, map_c, held_m0, held_n0, cw);
    Stores::WaitAllStores(t);
  }
};

/// Knobs::store_transposed: the kernel's element (r, c) at c * M + r of C (the caller's C, of
/// which the kernel computes the transpose), each accumulator by a plain 2-byte store; the 8
/// lanes of a lane-quad column write 8 adjacent rows, 16 contiguous bytes. kGuarded: nothing past
/// row M or column N. WideStoreEpilogue's fields and face, its Store replaced.
template <bool kGuarded>
struct TransposedStoreEpilogue : WideStoreEpilogue<kGuarded> {
  using WideStoreEpilogue<kGuarded>::WideStoreEpilogue;
  using WideStoreEpilogue<kGuarded>::c;
  using WideStoreEpilogue<kGuarded>::m;
  using WideStoreEpilogue<kGuarded>::n;
  using WideStoreEpilogue<kGuarded>::cw;

  /// kAcc accumulators: the warpgroup's 64 x (kAcc * 2) columns of the kernel's product.
  template <int kAcc>
  __device__ __forceinline__ void Store(const float (&d)[kAcc], int m0, int n0) {
    const int t = threadIdx.x & 127, warp = t >> 5, lane = t & 31, q = lane & 3;
    const int row = m0 + cw * 64 + warp * 16 + (lane >> 2);
    uint32_t w[kAcc / 2];  // every accumulator read at once, as the TMA-store epilogue does
    PackAccumulators(d, w);
#pragma unroll
    for (int j = 0; j < kAcc / 4; ++j)
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const int r = row + (i >= 2 ? 8 : 0);
        const int64_t col = n0 + 8 * j + 2 * q + (i & 1);
        if (kGuarded && (r >= m || col >= n)) continue;
        const uint32_t pair = w[2 * j + i / 2];
        c[col * m + r] = __ushort_as_bfloat16(uint16_t((i & 1) ? pair >> 16 : pair & 0xffffu));
      }
  }
};

/// The epilogue policy of the knobs.
template <Knobs K>
using EpilogueOf = std::conditional_t<
    K.store_transposed, TransposedStoreEpilogue<K.guarded>,
    std::conditional_t<
        K.overlap_epilogue, OverlappedTmaStoreEpilogue<K.warp_stores>,
        std::conditional_t<K.epilogue == Epilogue::kTmaStore, TmaStoreEpilogue<K.warp_stores>,
                           WideStoreEpilogue<K.guarded>>>>;

}  // namespace ablation::kernels::sm90
