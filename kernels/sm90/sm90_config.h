// The sm90 family (Hopper ladder): one rung per Hopper feature, each adding exactly one thing to
// the rung before it. The rung table and the one type of every knob (Knobs), shared by the
// catalog, the launchers, the kernels and the tuning tool; the kernels are in sm90_mma.cuh
// (mma.sync rungs) and sm90_wgmma.cuh (wgmma rungs), the tile schedule in sm90_schedule.h, the
// small-shape ladder's tile builds in sm90_tile_rungs.h, and README.md in this folder maps each
// rung to the code it changes.
//
// Contract (every rung): bf16 A (M x K, row-major) and B (N x K, row-major, i.e. K-major like the
// ablation family's bl1 layout), fp32 accumulation, bf16 C (M x N, row-major), any M, N, K of
// at least 1 (sm90_shapes.h says how a shape off the tile runs). Block tile 128 x 256 x 64,
// 4 shared-memory stages of A 128x64 and B 256x64 with the 128-byte swizzle.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

namespace ablation::kernels::sm90 {

inline constexpr int kBlockM = 128;
inline constexpr int kBlockN = 256;
inline constexpr int kBlockK = 64;  ///< bf16 elements; a k-tile row is 128 bytes in every dtype
inline constexpr int kBlockKBytes = 128;
inline constexpr int kStages = 4;
inline constexpr int kATileBytes = kBlockM * kBlockK * 2;  // 16 KiB
inline constexpr int kBTileBytes = kBlockN * kBlockK * 2;  // 32 KiB
inline constexpr int kStageBytes = kATileBytes + kBTileBytes;
/// The TMA-store epilogue's chunk: 64 rows x 64 columns of bf16 (one 128-byte swizzle span wide).
inline constexpr int kStoreChunkBytes = 64 * 64 * 2;  // 8 KiB
/// Tile rows of one group in the L2-friendly order (the grid walks down 8 tile rows, then right).
inline constexpr int kGroupRows = 8;

/// How a rung's main loop computes.
enum class Mainloop : int {
  kMmaCpAsync = 0,  ///< mma.sync m16n8k16 + ldmatrix, cp.async loads by every thread
  kMmaTma = 1,      ///< mma.sync m16n8k16 + ldmatrix, TMA loads completing on an mbarrier
  kWgmma = 2,       ///< wgmma m64n256k16 from shared memory, TMA loads
};

/// How a rung's epilogue writes its tile of C (the policies are in sm90_epilogue.cuh).
enum class Epilogue : int {
  kWide = 1,      ///< a 4x4 transpose by shuffles in each lane quad, then 16-byte stores
  kTmaStore = 2,  ///< stmatrix into swizzled shared memory, then TMA bulk tensor stores
};

/// Stream-K shares the last round only when it is at most 3/4 full: fuller, it saves too little
/// to pay for the fix-up (on the H200 at 4096^3, 58 of 66 clusters busy, sharing measured 2%
/// slower; at 8192^3, 34 of 66, 1.7% faster; notes/gpu-runs.md).
inline constexpr int kStreamKMaxFullQuarters = 3;
/// With fewer units than clusters (a small M or N: one partial round and nothing else), stream-K
/// shares the units only when they have at least this many k-tiles: shorter, the fix-up costs
/// more than the clusters it adds save (on the H200 at 512x512x1024, 16 k-tiles, sharing measured
/// 10% slower; at 512x512x4096, 64 k-tiles, 25% faster, and 37% at 128x8192x8192;
/// notes/gpu-runs.md has 32).
inline constexpr int kStreamKMinKTilesAlone = 32;

/// Every knob of the family, one literal type: a rung is a Knobs value (kRungs below), the kernels
/// take one as their template argument (Sm90MmaKernel<K>, Sm90WgmmaKernel<K>), and the tuning tool
/// (tools/sm90_tune.cu) derives its configurations from the rungs' by changing a field. Written
/// with designated initializers; a field left out keeps the default shown here.
struct Knobs {
  Mainloop mainloop = Mainloop::kWgmma;
  // ---- the wgmma kernel (sm90_wgmma.cuh) ----
  bool warp_specialized = false;  ///< a producer warpgroup issues TMA; consumers only compute
  bool persistent = false;        ///< one CTA per SM walks the tiles (TileScheduler)
  int cluster_m = 1;  ///< 1, 2 or 4: two or four CTAs along M share B through TMA multicast
  int cluster_n = 1;  ///< 1, or 2: two CTAs along N share A through TMA multicast (1x2; with
                      ///< cluster_m 2, 2x2 clusters: no rung, measured slower, notes/gpu-runs.md)
  int pending = 0;    ///< wgmma batches left running across k-tiles (0 or 1; TmaPipeline)
  bool grouped_order = false;  ///< tiles walked in groups of group_rows unit rows (L2 reuse)
  int group_rows = kGroupRows;
  Epilogue epilogue = Epilogue::kWide;  ///< how the tile of C is written
  bool stream_k = false;                ///< the last, partial round shared along K by all clusters
  /// Stream-K shares the last round when it is at most this many quarters full (4: whenever one
  /// is left over).
  int sk_max_full_quarters = kStreamKMaxFullQuarters;
  /// Stream-K's ranges are longer than 1/sk_parts of a unit, so that a unit meets at most
  /// sk_parts + 1 of them and the one holding its last k-tiles adds at most sk_parts partial sums
  /// (2: at most three ranges; more, shorter ranges keep more clusters busy where the units are
  /// few, for a longer fix-up).
  int sk_parts = 2;
  /// C written transposed, element (r, c) of the kernel's product at c * M + r, by plain stores
  /// (whatever the epilogue knob says): the kernel computes C^T = B A^T for a caller whose A and
  /// B it is given swapped (swap-AB), so that a few columns of C are the rows of its tiles.
  bool store_transposed = false;
  bool overlap_epilogue = false;  ///< a tile's TMA stores issued during the next tile's k-tiles
  /// The TMA-store epilogue per warp: each warp stores its own 16 rows of a 64x64 chunk with its
  /// own bulk tensor copy (C's map has 16-row boxes), ordered by __syncwarp, where the whole
  /// warpgroup otherwise meets at two named barriers a chunk and one thread stores the chunk.
  bool warp_stores = false;
  int max_ctas = 0;  ///< a cap on the persistent grid (0: as many as fit)
  /// A persistent grid whose last round stream-K does not share shrinks to the fewest clusters
  /// that take the same number of rounds (FitGridClusters, sm90_schedule.h): every round full,
  /// each one the same aligned block of the tile order.
  bool fit_grid = false;
  /// With cluster_m 2: where the persistent grid is fitted to its rounds (more units than
  /// clusters, the last round not shared by stream-K), the same kernel without clusters runs
  /// instead (Unclustered, sm90_plan.h: every CTA loads its own B, no pair paced by its slower
  /// CTA); where stream-K shares the last round, the clusters and their B multicast stay.
  bool clusters_where_shared = false;
  /// fp8 operands (DType::kFP8): A and B in e4m3, wgmma m64n256k32 (4 per k-tile, as bf16's
  /// k16), k-tiles of 128 elements (the same 128-byte rows, so stages, swizzle and descriptors
  /// are bf16's), the per-tensor scales applied to the accumulators before the epilogue, C in
  /// bf16. Warp-specialised rungs only.
  bool fp8 = false;
  /// Rows of the block tile: 128 (two consumer warpgroups, 64 rows each), 64 (one consumer
  /// warpgroup) or 192 (three; no cluster along N, the 16-byte or transposed stores); 64 and 192 in
  /// warp-specialised rungs only. The stage's A tile is block_m rows of 128 bytes.
  int block_m = kBlockM;
  // ---- the mma.sync kernel (sm90_mma.cuh) ----
  int warps_m = 2;  ///< warps along M and N; the warp tile is (128 / warps_m) x (block_n /
  int warps_n = 4;  ///< warps_n)
  /// The next stage is waited for during the last k16 step of this one, so its first fragments
  /// load while that step's mma issue.
  bool cross_stage = true;
  int block_n = kBlockN;
  int stages = kStages;
  int min_blocks = 1;  ///< CTAs per SM the launch bounds ask for
  // ---- shapes (both kernels; not a rung's knob) ----
  /// Bounds checked: M, N and K need not be multiples of the tile. Rows and columns past the
  /// matrices read as zeros (TMA fills them; cp.async copies zero bytes of them) and are not
  /// written (TMA clips its stores; the 16-byte stores past M or N are skipped). N and K must be
  /// multiples of 8 (rows of whole 16-byte chunks), which the launcher arranges (sm90_shapes.h).
  /// Every launcher runs Guarded(rung) at a shape off its tile and the rung itself on it, so the
  /// code the ladder was measured with is what runs at the shapes it was measured at.
  bool guarded = false;

  constexpr bool operator==(const Knobs&) const = default;
  /// CTAs of a cluster, rank r at (r % cluster_m, r / cluster_m) of its unit of tiles.
  constexpr int Ctas() const { return cluster_m * cluster_n; }
  constexpr int Threads() const {
    return mainloop == Mainloop::kWgmma ? (warp_specialized ? 128 * (1 + block_m / 64) : 256)
                                        : 32 * warps_m * warps_n;
  }
};

// The two below are called from the kernels and from host code (the catalog is plain C++).
#if defined(__CUDACC__)
#define ABLATION_SM90_HD __host__ __device__
#else
#define ABLATION_SM90_HD
#endif
/// Bytes of one element of A and B.
ABLATION_SM90_HD constexpr int OperandBytes(const Knobs& k) { return k.fp8 ? 1 : 2; }
/// Elements of K in one k-tile: a 128-byte row of A and of B (64 bf16, 128 e4m3).
ABLATION_SM90_HD constexpr int BlockK(const Knobs& k) { return kBlockKBytes / OperandBytes(k); }
/// The consumer warpgroups of a wgmma build: one per 64 rows of the block tile.
ABLATION_SM90_HD constexpr int ConsumerWarpgroups(const Knobs& k) { return k.block_m / 64; }
/// The registers each thread of a warp-specialised wgmma build's producer warpgroup keeps
/// (setmaxnreg.dec).
inline constexpr int kProducerRegisters = 40;
/// The registers a consumer thread of a warp-specialised wgmma build asks for (setmaxnreg) beside
/// the producer's: 232, or, with three consumer warpgroups, what the 64K registers of an SM
/// leave them (152): 40 x 128 + 152 x 384 = 63,488.
ABLATION_SM90_HD constexpr int ConsumerRegisters(const Knobs& k) {
  const int share = (65536 / 128 - kProducerRegisters) / ConsumerWarpgroups(k) / 8 * 8;
  return share < 232 ? share : 232;
}
/// Bytes of a stage's A tile (block_m rows of a k-tile's 128 bytes) and of a whole stage.
ABLATION_SM90_HD constexpr int ATileBytes(const Knobs& k) { return k.block_m * kBlockKBytes; }
/// fp32 accumulators a consumer thread of a wgmma build holds: its warpgroup's 64 x block_n.
ABLATION_SM90_HD constexpr int Accumulators(const Knobs& k) { return k.block_n / 2; }
/// Bytes of a stage's B tile of a wgmma build (block_n rows of 128 bytes) and of a whole stage.
ABLATION_SM90_HD constexpr int BTileBytes(const Knobs& k) { return k.block_n * kBlockKBytes; }
ABLATION_SM90_HD constexpr int StageBytes(const Knobs& k) { return ATileBytes(k) + BTileBytes(k); }
/// Whether a build writes C with the TMA-store epilogue (its store buffers, the map of C): the
/// epilogue knob says so and C is not stored transposed (plain stores, whatever that knob says).
ABLATION_SM90_HD constexpr bool TmaStoresC(const Knobs& k) {
  return k.epilogue == Epilogue::kTmaStore && !k.store_transposed;
}
/// Rows of a box of C's tensor map: a warp's 16 rows of a chunk (warp_stores) or the chunk's 64.
ABLATION_SM90_HD constexpr int StoreBoxRows(const Knobs& k) { return k.warp_stores ? 16 : 64; }
/// The TMA-store epilogue's shared memory: two chunk buffers per consumer warpgroup, so a chunk
/// is written while the one before is still being stored (32 KiB for a 128-row tile).
ABLATION_SM90_HD constexpr int StoreBufferBytes(const Knobs& k) {
  return 2 * ConsumerWarpgroups(k) * kStoreChunkBytes;
}
/// Dynamic shared memory of a wgmma build: the stages, the store buffers of the TMA-store
/// epilogue, 1 KiB to align them (the 128-byte swizzle repeats every 1024 bytes), and the
/// full/empty barriers.
ABLATION_SM90_HD constexpr int64_t SmemBytes(const Knobs& k) {
  return int64_t(k.stages) * StageBytes(k) + (TmaStoresC(k) ? StoreBufferBytes(k) : 0) + 1024 +
         2 * 8 * k.stages;
}
#undef ABLATION_SM90_HD

/// `base` with the changes `change` makes to a copy of it: a rung's knobs from the rung before's,
/// a configuration of the tuning tool from a rung's.
template <class F>
consteval Knobs With(Knobs base, F change) {
  change(base);
  return base;
}

/// `k` with bounds checks (Knobs::guarded): what a launcher runs at a shape off the tile.
consteval Knobs Guarded(Knobs k) {
  k.guarded = true;
  return k;
}

/// The rungs' knobs, each the rung before's with its one change (kRungs below).
namespace rung_knobs {
inline constexpr Knobs kM1 = {.mainloop = Mainloop::kMmaCpAsync};
inline constexpr Knobs kH1 = With(kM1, [](Knobs& k) { k.mainloop = Mainloop::kMmaTma; });
inline constexpr Knobs kH2 = With(kH1, [](Knobs& k) { k.mainloop = Mainloop::kWgmma; });
inline constexpr Knobs kH3 = With(kH2, [](Knobs& k) { k.warp_specialized = true; });
inline constexpr Knobs kH4 = With(kH3, [](Knobs& k) { k.persistent = true; });
inline constexpr Knobs kH5 = With(kH4, [](Knobs& k) { k.cluster_m = 2; });
inline constexpr Knobs kH6 = With(kH5, [](Knobs& k) { k.pending = 1; });
inline constexpr Knobs kH7 = With(kH6, [](Knobs& k) { k.grouped_order = true; });
inline constexpr Knobs kH8 = With(kH7, [](Knobs& k) { k.epilogue = Epilogue::kTmaStore; });
inline constexpr Knobs kH9 = With(kH8, [](Knobs& k) { k.stream_k = true; });
inline constexpr Knobs kH10 = With(kH9, [](Knobs& k) { k.overlap_epilogue = true; });
inline constexpr Knobs kH11 = With(kH10, [](Knobs& k) { k.fit_grid = true; });
inline constexpr Knobs kH12 = With(kH11, [](Knobs& k) { k.clusters_where_shared = true; });
}  // namespace rung_knobs

struct Rung {
  std::string_view name;  ///< canonical variant name
  std::string_view id;    ///< ladder id: M1, H1, ...
  std::string_view adds;  ///< the one change against the rung before
  Knobs knobs;
};

// The order is what the H200 measured (notes/gpu-runs.md): each rung adds one thing to the rung
// above it, so each row's change is that thing's worth. Every rung before the TMA-store one
// writes C with 16-byte stores (part of the mma.sync ceiling, kept so that no later rung changes
// two things). kernels/sm90/README.md says where each rung's change is in the code.
inline constexpr std::array<Rung, 13> kRungs = {{
    {"sm90_m1_mma", "M1",
     "mma.sync ceiling: 128x256x64 tile, 8 warps of 64x64, 4 cp.async stages (each thread's "
     "copy addresses planned once per block), ldmatrix fragments double-buffered in registers "
     "across k-steps and into the next stage, 16-byte epilogue stores (a 4x4 transpose by "
     "shuffles in each lane quad)",
     rung_knobs::kM1},
    {"sm90_h1_tma", "H1", "TMA loads on an mbarrier replace cp.async (mma.sync kept)",
     rung_knobs::kH1},
    {"sm90_h2_wgmma", "H2",
     "wgmma m64n256k16 from shared memory replaces ldmatrix + mma.sync (two warpgroups)",
     rung_knobs::kH2},
    {"sm90_h3_ws", "H3",
     "warp specialisation: a producer warpgroup (setmaxnreg 40) issues TMA, two consumer "
     "warpgroups (setmaxnreg 232) compute; full/empty mbarriers replace __syncthreads",
     rung_knobs::kH3},
    {"sm90_h4_persistent", "H4",
     "persistent grid: one CTA per SM walks the tiles, the next tile's loads overlap the "
     "epilogue",
     rung_knobs::kH4},
    {"sm90_h5_mc2", "H5",
     "2x1 clusters: the two CTAs of a cluster share B, each loading half with TMA multicast",
     rung_knobs::kH5},
    {"sm90_h6_async_release", "H6",
     "one wgmma batch left running: a stage is released when the next k-tile's batch is issued",
     rung_knobs::kH6},
    {"sm90_h7_l2order", "H7",
     "L2-friendly tile order: groups of 8 tile rows walked column by column", rung_knobs::kH7},
    {"sm90_h8_tma_store", "H8",
     "TMA-store epilogue: stmatrix into 128-byte-swizzled shared memory (64x64 chunks, two "
     "buffers per consumer), bulk tensor stores that run on while the next tile computes",
     rung_knobs::kH8},
    {"sm90_h9_stream_k", "H9",
     "stream-K tail: when the last round is at most 3/4 full, its units are cut along K into one "
     "equal range per cluster, partial sums fixed up in fp32 through global memory in a fixed "
     "order",
     rung_knobs::kH9},
    {"sm90_h10_epilogue_overlap", "H10",
     "epilogue overlapped with the next tile: the accumulators wait packed to bf16 in registers, "
     "and each 64x64 chunk's stmatrix and TMA store is issued after one of the next tile's first "
     "four k-tile batches, while it runs, so the tensor cores no longer idle through the stores",
     rung_knobs::kH10},
    {"sm90_h11_fit_grid", "H11",
     "a grid fitted to its rounds: when stream-K leaves the last round whole, the persistent "
     "grid shrinks to the fewest clusters that take the same number of rounds (4096^3: 64 "
     "clusters of 66, four full rounds of 8x8 units), so each round is one square block of the "
     "grouped order",
     rung_knobs::kH11},
    {"sm90_h12_fitted_unclustered", "H12",
     "clusters only where the last round is shared: where the grid is fitted to its rounds, the "
     "kernel runs without 2x1 clusters (4096^3: 128 CTAs, each loading its own B, none paced by "
     "a partner); where stream-K shares the last round (8192^3) the clusters and their B "
     "multicast stay",
     rung_knobs::kH12},
}};

/// The fp8 ladder (DType::kFP8: e4m3 A and B with per-tensor scales, fp32 accumulation, bf16 C):
/// the wgmma kernel on the same seams with e4m3 operands, from warp specialisation on, each rung
/// adding one thing to the one before. Its steps are the bf16 ladder's (H4, H6..H10) but for one,
/// chosen from measurement: 2x1 clusters sharing B by multicast (H5) made the fp8 kernel slower
/// at every step it was measured at (the daemon, sustained: -0.5% at 4096^3 and -0.2% at 8192^3
/// on top of persistence; the tuning tool, on top of everything else: -1.4% and -1.3%), so no
/// fp8 rung has it (notes/gpu-runs.md, 2026-12-02, "the fp8 ladder").
namespace rung_knobs {
inline constexpr Knobs kF1 = With(kH3, [](Knobs& k) { k.fp8 = true; });
inline constexpr Knobs kF2 = With(kF1, [](Knobs& k) { k.persistent = true; });
inline constexpr Knobs kF3 = With(kF2, [](Knobs& k) { k.pending = 1; });
inline constexpr Knobs kF4 = With(kF3, [](Knobs& k) { k.grouped_order = true; });
inline constexpr Knobs kF5 = With(kF4, [](Knobs& k) { k.epilogue = Epilogue::kTmaStore; });
inline constexpr Knobs kF6 = With(kF5, [](Knobs& k) { k.stream_k = true; });
inline constexpr Knobs kF7 = With(kF6, [](Knobs& k) { k.overlap_epilogue = true; });
inline constexpr Knobs kF8 = With(kF7, [](Knobs& k) { k.fit_grid = true; });
}  // namespace rung_knobs

inline constexpr std::array<Rung, 8> kFp8Rungs = {{
    {"sm90_fp8_f1_ws", "F1",
     "fp8 base: H3's kernel with e4m3 operands, wgmma m64n256k32 (QGMMA) on 128x256x128 tiles "
     "(128-byte rows, as bf16's 64), a producer warpgroup issuing TMA and two consumer "
     "warpgroups, the per-tensor scales applied to the accumulators before the 16-byte stores",
     rung_knobs::kF1},
    {"sm90_fp8_f2_persistent", "F2", "persistent grid: one CTA per SM walks the tiles",
     rung_knobs::kF2},
    {"sm90_fp8_f3_async_release", "F3",
     "one wgmma batch left running: a stage is released when the next k-tile's batch is issued",
     rung_knobs::kF3},
    {"sm90_fp8_f4_l2order", "F4",
     "L2-friendly tile order: groups of 8 tile rows walked column by column", rung_knobs::kF4},
    {"sm90_fp8_f5_tma_store", "F5",
     "TMA-store epilogue: stmatrix into 128-byte-swizzled shared memory, bulk tensor stores",
     rung_knobs::kF5},
    {"sm90_fp8_f6_stream_k", "F6",
     "stream-K tail: a last round at most 3/4 full shared along K, partials fixed up in a fixed "
     "order",
     rung_knobs::kF6},
    {"sm90_fp8_f7_epilogue_overlap", "F7",
     "epilogue overlapped with the next tile's first four k-tile batches", rung_knobs::kF7},
    {"sm90_fp8_f8_fit_grid", "F8",
     "a grid fitted to its rounds: when stream-K leaves the last round whole, the persistent "
     "grid shrinks to the fewest CTAs that take the same number of rounds (4096^3: 128 of 132, "
     "four full rounds)",
     rung_knobs::kF8},
}};

/// `k` without clusters: what a rung of Knobs::clusters_where_shared runs where its grid is fitted
/// to its rounds (sm90_plan.h), and the tile builds that have none.
constexpr Knobs Unclustered(Knobs k) {
  k.cluster_m = 1;
  k.cluster_n = 1;
  k.clusters_where_shared = false;
  return k;
}

/// `k` as its kernel is compiled: the knobs only the host's plan reads (sm90_plan.h:
/// sk_max_full_quarters, max_ctas) at their defaults, so that builds differing only there run one
/// kernel (kWgmmaKernel<K>, sm90_wgmma.cuh) where each compiled the same code under its own name.
/// A rung that leaves them at their defaults keeps its kernel and its kernel's name.
constexpr Knobs KernelKnobs(Knobs k) {
  const Knobs defaults{};
  k.sk_max_full_quarters = defaults.sk_max_full_quarters;
  k.max_ctas = defaults.max_ctas;
  return k;
}

/// The rung whose id is `id` (M1, H1, ..., H12, F1, ..., F8); a compile-time error when there is
/// none.
consteval const Rung& RungById(std::string_view id) {
  for (const Rung& r : kRungs) {
    if (r.id == id) return r;
  }
  for (const Rung& r : kFp8Rungs) {
    if (r.id == id) return r;
  }
  throw "no rung with this id";
}

inline constexpr int Threads(const Rung& r) { return r.knobs.Threads(); }

}  // namespace ablation::kernels::sm90

// nvcc 13.0's host stubs of a kernel with a class-type template argument (Sm90MmaKernel<K>,
// Sm90WgmmaKernel<K>) spell that argument's type by its mangled name, which nvcc declares only for
// the types of kernel parameters; without this alias every object build of a kernel taking Knobs
// fails in the stub ("_ZN8ablation7kernels4sm905KnobsE was not declared"). Host pass only: the
// device code (and its PTX) does not see it.
#if defined(__CUDACC__) && !defined(__CUDA_ARCH__)
using _ZN8ablation7kernels4sm905KnobsE = ::ablation::kernels::sm90::Knobs;
#endif
