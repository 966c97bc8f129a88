// The sm90 family (Hopper ladder): one rung per Hopper feature, each adding exactly one thing to
// the rung before it. A description shared by the catalog and the launchers (and, for the
// stream-K schedule, by the kernels); the kernels are in sm90_mma.cuh (mma.sync rungs) and
// sm90_wgmma.cuh (wgmma rungs).
//
// Contract (every rung): bf16 A (M x K, row-major) and B (N x K, row-major, i.e. K-major like the
// ablation family's bl1 layout), fp32 accumulation, bf16 C (M x N, row-major). Block tile
// 128 x 256 x 64, 4 shared-memory stages of A 128x64 and B 256x64 with the 128-byte swizzle.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <string_view>

// The stream-K schedule below is shared by the kernels and the host (launcher, tests).
#if defined(__CUDACC__)
#define ABLATION_SM90_HD __host__ __device__ __forceinline__
#else
#define ABLATION_SM90_HD inline
#endif

namespace ablation::kernels::sm90 {

inline constexpr int kBlockM = 128;
inline constexpr int kBlockN = 256;
inline constexpr int kBlockK = 64;
inline constexpr int kStages = 4;
inline constexpr int kATileBytes = kBlockM * kBlockK * 2;  // 16 KiB
inline constexpr int kBTileBytes = kBlockN * kBlockK * 2;  // 32 KiB
inline constexpr int kStageBytes = kATileBytes + kBTileBytes;
/// Tile rows of one group in the L2-friendly order (the grid walks down 8 tile rows, then right).
inline constexpr int kGroupRows = 8;

/// How a rung's main loop computes.
enum class Mainloop : int {
  kMmaCpAsync = 0,  ///< mma.sync m16n8k16 + ldmatrix, cp.async loads by every thread
  kMmaTma = 1,      ///< mma.sync m16n8k16 + ldmatrix, TMA loads completing on an mbarrier
  kWgmma = 2,       ///< wgmma m64n256k16 from shared memory, TMA loads
};

/// How a rung's epilogue writes its tile of C.
enum class Epilogue : int {
  kDirect = 0,    ///< each lane stores its bf16x2 words (4 bytes) from the accumulator layout
  kWide = 1,      ///< a 4x4 transpose by shuffles in each lane quad, then 16-byte stores
  kTmaStore = 2,  ///< stmatrix into swizzled shared memory, then TMA bulk tensor stores
};

struct Rung {
  std::string_view name;  ///< canonical variant name
  std::string_view id;    ///< ladder id: M1, H1, ...
  std::string_view adds;  ///< the one change against the rung before
  Mainloop mainloop;
  bool warp_specialized;  ///< a producer warpgroup issues TMA; consumers only compute
  bool persistent;        ///< one CTA per SM walks the tiles; the epilogue overlaps the next loads
  int cluster_m;          ///< 1, or 2: two CTAs along M share B through TMA multicast
  int pending;            ///< wgmma batches left running across k-tiles (0 or 1)
  bool grouped_order;     ///< tiles walked in groups of kGroupRows tile rows (L2 reuse)
  Epilogue epilogue;      ///< how the tile of C is written
  bool stream_k = false;  ///< the last, partial round shared along K by all clusters
  int cluster_n = 1;      ///< 1, or 2 (with cluster_m 2): 2x2 clusters also share A (no rung
                          ///< yet: measured slower, notes/gpu-runs.md)
  bool overlap_epilogue = false;  ///< a tile's TMA stores issued during the next tile's k-tiles
};

// The order is what the H200 measured (notes/gpu-runs.md): each rung adds one thing to the rung
// above it, so each row's change is that thing's worth. Every rung before the TMA-store one
// writes C with 16-byte stores (part of the mma.sync ceiling, kept so that no later rung changes
// two things).
inline constexpr std::array<Rung, 11> kRungs = {{
    {"sm90_m1_mma", "M1",
     "mma.sync ceiling: 128x256x64 tile, 8 warps of 64x64, 4 cp.async stages (each thread's "
     "copy addresses planned once per block), ldmatrix fragments double-buffered in registers "
     "across k-steps and into the next stage, 16-byte epilogue stores (a 4x4 transpose by "
     "shuffles in each lane quad)",
     Mainloop::kMmaCpAsync, false, false, 1, 0, false, Epilogue::kWide},
    {"sm90_h1_tma", "H1", "TMA loads on an mbarrier replace cp.async (mma.sync kept)",
     Mainloop::kMmaTma, false, false, 1, 0, false, Epilogue::kWide},
    {"sm90_h2_wgmma", "H2",
     "wgmma m64n256k16 from shared memory replaces ldmatrix + mma.sync (two warpgroups)",
     Mainloop::kWgmma, false, false, 1, 0, false, Epilogue::kWide},
    {"sm90_h3_ws", "H3",
     "warp specialisation: a producer warpgroup (setmaxnreg 40) issues TMA, two consumer "
     "warpgroups (setmaxnreg 232) compute; full/empty mbarriers replace __syncthreads",
     Mainloop::kWgmma, true, false, 1, 0, false, Epilogue::kWide},
    {"sm90_h4_persistent", "H4",
     "persistent grid: one CTA per SM walks the tiles, the next tile's loads overlap the "
     "epilogue",
     Mainloop::kWgmma, true, true, 1, 0, false, Epilogue::kWide},
    {"sm90_h5_mc2", "H5",
     "2x1 clusters: the two CTAs of a cluster share B, each loading half with TMA multicast",
     Mainloop::kWgmma, true, true, 2, 0, false, Epilogue::kWide},
    {"sm90_h6_async_release", "H6",
     "one wgmma batch left running: a stage is released when the next k-tile's batch is issued",
     Mainloop::kWgmma, true, true, 2, 1, false, Epilogue::kWide},
    {"sm90_h7_l2order", "H7",
     "L2-friendly tile order: groups of 8 tile rows walked column by column", Mainloop::kWgmma,
     true, true, 2, 1, true, Epilogue::kWide},
    {"sm90_h8_tma_store", "H8",
     "TMA-store epilogue: stmatrix into 128-byte-swizzled shared memory (64x64 chunks, two "
     "buffers per consumer), bulk tensor stores that run on while the next tile computes",
     Mainloop::kWgmma, true, true, 2, 1, true, Epilogue::kTmaStore},
    {"sm90_h9_stream_k", "H9",
     "stream-K tail: when the last round is at most 3/4 full, its units are cut along K into one "
     "equal range per cluster, partial sums fixed up in fp32 through global memory in a fixed "
     "order",
     Mainloop::kWgmma, true, true, 2, 1, true, Epilogue::kTmaStore, true},
    {"sm90_h10_epilogue_overlap", "H10",
     "epilogue overlapped with the next tile: the accumulators wait packed to bf16 in registers, "
     "and each 64x64 chunk's stmatrix and TMA store is issued after one of the next tile's first "
     "four k-tile batches, while it runs, so the tensor cores no longer idle through the stores",
     Mainloop::kWgmma, true, true, 2, 1, true, Epilogue::kTmaStore, true, 1, true},
}};

inline constexpr int Threads(const Rung& r) { return r.warp_specialized ? 384 : 256; }

/// The TMA-store epilogue's chunk: 64 rows x 64 columns of bf16 (one 128-byte swizzle span wide).
inline constexpr int kStoreChunkBytes = 64 * 64 * 2;  // 8 KiB
/// Its shared memory: two chunk buffers per consumer warpgroup, so a chunk is written while the
/// one before is still being stored.
inline constexpr int kStoreBufferBytes = 2 * 2 * kStoreChunkBytes;  // 32 KiB

/// Dynamic shared memory: the stages, the store buffers of the TMA-store epilogue, 1 KiB to align
/// them (the 128-byte swizzle repeats every 1024 bytes), and the full/empty barriers.
inline constexpr int64_t SmemBytes(Epilogue e) {
  return int64_t(kStages) * kStageBytes + (e == Epilogue::kTmaStore ? kStoreBufferBytes : 0) +
         1024 + 2 * 8 * kStages;
}

// ---- the persistent grid's schedule, stream-K ------------------------------------------------

/// The stream-K fix-up's global memory and schedule, passed to the kernel (zeros for the rungs
/// without stream-K). A partial's writer sets its flag to `epoch`, a number new to each launch,
/// so the flags never need clearing and a flag left by an earlier launch never reads as set.
struct StreamKArgs {
  float* partials = nullptr;
  uint32_t* flags = nullptr;
  uint32_t epoch = 0;
  /// From StreamKPlan: units done whole, and the clusters sharing the sk_iters k-tiles of the
  /// rest (0: none; every unit whole).
  int dp_units = 0;
  uint32_t sk_clusters = 0;
  uint32_t sk_iters = 0;
};

/// Bytes of partial sums one CTA of a stream-K unit may need: 2 slots x 2 warpgroups x 64x256
/// fp32 (a unit meets at most three ranges, so at most two partials precede its own).
inline constexpr int64_t kPartialBytesPerCta = 4 * 64 * 256 * 4;

/// Stream-K shares the last round only when it is at most 3/4 full: fuller, it saves too little
/// to pay for the fix-up (on the H200 at 4096^3, 58 of 66 clusters busy, sharing measured 2%
/// slower; at 8192^3, 34 of 66, 1.7% faster; notes/gpu-runs.md).
inline constexpr int kStreamKMaxFullQuarters = 3;

/// The stream-K schedule of `units` units of `kt_count` k-tiles on `clusters` clusters. When the
/// last round is at most max_full_quarters/4 full, the units left after the last whole round are
/// laid out as one line of k-tiles and cut into equal ranges longer than half a unit, one per
/// sharing cluster, so that a unit meets at most three ranges. Left whole (sk_clusters 0) when
/// nothing is left over, when the last round is fuller, or when the line is too long for the
/// kernel's 32-bit arithmetic (beyond 2^32 / 133 k-tiles, far past any matrix that fits).
inline void StreamKPlan(int units, int kt_count, int clusters, StreamKArgs* sk,
                        int max_full_quarters = kStreamKMaxFullQuarters) {
  sk->dp_units = units;
  sk->sk_clusters = 0;
  sk->sk_iters = 0;
  if (clusters <= 0 || kt_count <= 0 || units % clusters == 0) return;
  if (4 * (units % clusters) > max_full_quarters * clusters) return;
  const int dp = units / clusters * clusters;
  const int64_t iters = int64_t(units - dp) * kt_count;
  const int64_t shared =
      std::min<int64_t>(clusters, std::max<int64_t>(1, iters / (kt_count / 2 + 1)));
  if (iters * (shared + 1) >= (int64_t(1) << 32)) return;
  sk->dp_units = dp;
  sk->sk_clusters = uint32_t(shared);
  sk->sk_iters = uint32_t(iters);
}

/// Which units a cluster computes, and which k-tiles of them. Units 0..dp_units-1 go round-robin
/// to the clusters whole. With stream-K the rest (fewer than one round) is laid out as one line of
/// sk_iters k-tiles and cut into sk_clusters equal ranges, one per cluster: a unit is then shared
/// by up to three clusters, and the one holding its last k-tile adds the others' partial sums and
/// stores it. Without stream-K, every unit goes whole (a non-persistent grid has one cluster per
/// unit). Producer and consumers walk the same schedule, so their stages stay in step.
struct Schedule {
  int kt_count = 0;
  int clusters = 0;  ///< clusters of the grid
  int cluster = 0;   ///< this CTA's
  int dp_units = 0;
  uint32_t sk_clusters = 0;
  uint32_t sk_iters = 0;  ///< sk_iters * (sk_clusters + 1) < 2^32 (the launcher's condition)

  /// First k-tile of cluster c's range in the stream-K line.
  ABLATION_SM90_HD uint32_t SkStart(uint32_t c) const { return c * sk_iters / sk_clusters; }
  /// The cluster whose range holds k-tile x of the line (the largest c with SkStart(c) <= x).
  ABLATION_SM90_HD uint32_t SkOwner(uint32_t x) const {
    return ((x + 1) * sk_clusters + sk_iters - 1) / sk_iters - 1;
  }
  /// Partial sums of stream-K unit `sku` that precede k-tile `kb` of it: the clusters between
  /// the one holding its first k-tile and the one holding kb.
  ABLATION_SM90_HD int SlotOf(int sku, int kb) const {
    const uint32_t x0 = uint32_t(sku) * uint32_t(kt_count);
    return int(SkOwner(x0 + kb) - SkOwner(x0));
  }
};

/// One piece of a cluster's stream-K range: k-tiles kb..ke-1 of unit `unit` (stream-K unit `sku`).
struct SkSegment {
  int unit = 0;
  int kb = 0;
  int ke = 0;
  int sku = 0;
};
/// Segment i of cluster c's stream-K range, in the order the cluster works them: from its last
/// unit down. There it holds a unit's first k-tiles (a partial that waits for nobody) before the
/// unit whose last k-tiles it holds, whose fix-up waits for the partials of the clusters before
/// it. So no cluster waits on a cluster that waits, and the fix-ups cannot deadlock (the
/// persistent grid is resident as a whole). False past the last segment. (An index rather than
/// an array of segments: an array would live in local memory in the kernel.)
ABLATION_SM90_HD bool SkSegmentAt(const Schedule& s, int c, int i, SkSegment* seg) {
  if (uint32_t(c) >= s.sk_clusters) return false;
  const uint32_t b = s.SkStart(uint32_t(c)), e = s.SkStart(uint32_t(c) + 1);
  const uint32_t kt = uint32_t(s.kt_count);
  const int u = int((e - 1) / kt) - i;
  if (u < int(b / kt)) return false;
  const uint32_t u0 = uint32_t(u) * kt;
  seg->unit = s.dp_units + u;
  seg->kb = int((b > u0 ? b : u0) - u0);
  seg->ke = int((e < u0 + kt ? e : u0 + kt) - u0);
  seg->sku = u;
  return true;
}

}  // namespace ablation::kernels::sm90
