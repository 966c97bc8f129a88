// The small-shape ladder's first rung (notes/small-shape-ladder.md): a path for GEMMs of a few
// rows. Host-only header (no CUDA types): the catalog describes the rung with it, the launcher
// (sm90_few_rows.cu) follows its plan, the host tests check the plan without a device.
//
// S1 is H12 with one change: a problem of at most kFewRows rows (decode: M = 1 to 16) runs a
// kernel of its own instead of a 128-row tile (whose rows past M are zeros: 8 to 128 times the
// tensor-core work). C = A * B^T is then a stream of B: each warp takes `cols` columns of C and
// walks K with 16-byte loads of B's rows (K-major, read once) and of A's few rows (kept hot in
// L1), fp32 products of bf16 pairs, a tree of shuffles per output at the end. No tensor cores;
// its figure of merit is B's bytes per second against the measured bandwidth. Any other problem,
// or one whose rows are not whole 16-byte chunks (K not a multiple of 8, an operand not 16-byte
// aligned), runs H12's launch, padding included.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

#include "kernels/common/problem.h"
#include "kernels/registry.h"
#include "kernels/sm90/sm90_config.h"

namespace ablation::kernels::sm90 {

/// The most rows the few-row path takes.
inline constexpr int kFewRows = 16;
/// Threads of its blocks: 4 warps.
inline constexpr int kFewRowsThreads = 128;

/// A rung of the small-shape ladder: a rung of the Hopper ladder (`base`, whose launch runs
/// every problem the change does not take) and the change.
struct SmallRung {
  std::string_view name, id, adds;
  std::string_view base;  ///< the Hopper rung's variant name
  int few_rows = 0;       ///< at most this many rows run the few-row path
  /// At most this many columns (N) run it with A and B swapped (C^T = B A^T), C stored
  /// transposed: B's few rows are then the kernel's rows and A is streamed.
  int few_cols = 0;
  /// The ways a block's warps split K on the few-row path: 1 (a warp owns its columns whole) or
  /// 4 (the block's 4 warps share its columns, each every 4th chunk of K, added in warp order).
  int split = 1;
  /// Past the few-row path, a problem of at most this many rows runs `tile_base` (a build of
  /// the last rung with a smaller block tile, kTileRungs in sm90_tile_rungs.h) instead of
  /// `base` (0: never).
  int tile_rows = 0;
  std::string_view tile_base;
  /// On the few-row paths, at least this many rows (the kernel's: swapped, B's) run on tensor
  /// cores (mma.sync m16n8k16, kMmaCols columns of C per block, K split among its 4 warps); fewer
  /// run the CUDA-core kernel (0: every row count does).
  int mma_from = 0;
  /// Past the few-row paths, a problem of at most this many columns (N), more rows than columns
  /// and rows a multiple of 8 runs `swap_base` (a build that stores C transposed, given A and B
  /// swapped: the few columns are its tiles' rows) (0: never).
  int swap_cols = 0;
  std::string_view swap_base;
  /// On the tensor-core few-row path, at most this many warps a block split K (4, 8 or 16): more
  /// than 4 only where 4 would leave the grid fewer than kMmaWarpsWanted warps, doubling until
  /// it has them or this many.
  int mma_warps = 4;
  /// On the tensor-core few-row path, B reaches each warp through a ring of this many cp.async
  /// stages in shared memory (kRingStepBytes a stage), so that stages - 1 steps of its loads are
  /// in flight while it computes one; 0: loaded straight into registers. With a ring the split
  /// doubles only while the grid has fewer than kMmaWarpsWanted / 2 warps.
  int mma_stages = 0;
};

/// The warps a tensor-core few-row grid is given at least, where its rung allows (mma_warps):
/// about 31 an SM on the 132 SMs of an H100 or H200, so that enough 16-byte loads of B are in
/// flight to keep HBM busy (measured: 256 blocks of 4 warps read 34% of the bandwidth at
/// 16x4096x4096, 896 blocks 79% at 16x14336x4096).
inline constexpr int64_t kMmaWarpsWanted = 4096;

/// Columns of C per block of the tensor-core few-row kernel: two n8 tiles of mma.sync.
inline constexpr int kMmaCols = 16;

/// Bytes of B one warp of the tensor-core few-row kernel loads a 64-wide step of K: 16 bytes a
/// lane for each n8 tile and each 32-wide half of the step.
inline constexpr int kRingStepBytes = (kMmaCols / 8) * 2 * 32 * 16;
/// The stages of S11's ring (SmallRung::mma_stages), the only ring the kernels are built with.
inline constexpr int kRingStages = 4;

inline constexpr std::array<SmallRung, 9> kSmallRungs = {{
    {"sm90_s1_few_rows", "S1",
     "a few-row path: at most 16 rows run a kernel of their own (a warp per 1 to 4 columns of "
     "C streaming B's K-major rows with 16-byte loads, A's rows hot in L1, no tensor cores) "
     "instead of a 128-row tile of mostly zero rows",
     "sm90_h12_fitted_unclustered", kFewRows, 0, 1},
    {"sm90_s2_few_cols", "S2",
     "swap-AB on the few-row path: at most 16 columns run it with A and B swapped (C^T = B * "
     "A^T: B's few rows held in L1, A streamed), C stored transposed, instead of a 256-column "
     "tile of mostly zero columns",
     "sm90_h12_fitted_unclustered", kFewRows, kFewRows, 1},
    {"sm90_s3_split_k", "S3",
     "split-K in the block on the few-row paths: a block's 4 warps share its columns, each "
     "taking every 4th 16-byte chunk of K, their sums added in shared memory in warp order "
     "(4 times the warps, so more loads in flight where columns are few)",
     "sm90_h12_fitted_unclustered", kFewRows, kFewRows, 4},
    {"sm90_s4_rows64", "S4",
     "64-row tiles past the few-row paths: at most 128 rows run H12 with a 64x256 block tile "
     "and one consumer warpgroup (sm90_h12_rows64), so that no CTA computes a tile of rows past "
     "M (a 2x1 cluster of 128-row tiles holds 256 rows: at M = 128 one CTA of the two computed "
     "zeros)",
     "sm90_h12_fitted_unclustered", kFewRows, kFewRows, 4, 128, "sm90_h12_rows64"},
    {"sm90_s5_short_ranges", "S5",
     "shorter stream-K ranges on the 64-row tiles: ranges longer than a quarter of a unit "
     "rather than half (sm90_h12_rows64_sk4: a unit meets at most five, its last adds at most "
     "four partial sums in their order), so that the few units of up to 128 rows keep more "
     "clusters busy (128x4096x4096: 60 of 66, not 31)",
     "sm90_h12_fitted_unclustered", kFewRows, kFewRows, 4, 128, "sm90_h12_rows64_sk4"},
    {"sm90_s6_few_rows_mma", "S6",
     "tensor cores on the few-row paths from 2 rows: mma.sync m16n8k16 on 16 rows (those past "
     "M zeros) and 16 columns of C per block, K split among its 4 warps; each lane's 16-byte "
     "loads of A and B are its fragments, K permuted alike in both (a sum's order is free), so "
     "B streams in 64-byte runs with no shared memory and no shuffles",
     "sm90_h12_fitted_unclustered", kFewRows, kFewRows, 4, 128, "sm90_h12_rows64_sk4", 2},
    {"sm90_s7_swap_tiles", "S7",
     "swap-AB on the tensor-core tiles: past the few-row paths, at most 128 columns of more rows "
     "(M a multiple of 8) run as C^T = B A^T on the shorter-range 64-row build, C stored "
     "transposed (sm90_h12_rows64_sk4_swapped), so the few columns fill its 64-row tiles "
     "instead of half a 256-column one",
     "sm90_h12_fitted_unclustered", kFewRows, kFewRows, 4, 128, "sm90_h12_rows64_sk4", 2, 128,
     "sm90_h12_rows64_sk4_swapped"},
    // One change from S7 (S8, the per-bucket table, is another).
    {"sm90_s9_deeper_split", "S9",
     "a deeper split of K on the tensor-core few-row path where its grid is small: up to 16 "
     "warps a block (512 threads) instead of 4, doubling while the grid has fewer than 4096 "
     "warps (16 rows of 4096 columns: 256 blocks of 16 warps, not of 4), so that 4 times the "
     "loads of B are in flight",
     "sm90_h12_fitted_unclustered", kFewRows, kFewRows, 4, 128, "sm90_h12_rows64_sk4", 2, 128,
     "sm90_h12_rows64_sk4_swapped", 16},
    // One change from S9 (S10, the per-bucket table over S9, is another).
    {"sm90_s11_ring", "S11",
     "B through a ring of cp.async stages on the tensor-core few-row path: each warp keeps 3 "
     "steps of K in flight in 4 stages of shared memory (2 KiB a stage) instead of loading one "
     "step into registers and waiting on it, so the loads in flight come from the ring rather "
     "than from more warps (the split doubles while the grid has fewer than 2048 warps, not "
     "4096: 16 rows of 14336 columns keep 4 warps a block, one wave of 896 blocks)",
     "sm90_h12_fitted_unclustered", kFewRows, kFewRows, 4, 128, "sm90_h12_rows64_sk4", 2, 128,
     "sm90_h12_rows64_sk4_swapped", 16, kRingStages},
}};

/// Whether small rung `r` runs `p`, where the few-row path does not take it, with its swapped
/// build (swap_base: few columns of more rows, rows a multiple of 8).
constexpr bool UsesSwapBase(const SmallRung& r, const Problem& p) {
  return r.swap_cols > 0 && p.n <= r.swap_cols && p.m > p.n && p.m % 8 == 0;
}

/// Whether small rung `r` runs `p`, where neither the few-row path nor the swapped build takes
/// it, with its smaller-tile build (tile_base) rather than its base rung.
constexpr bool UsesTileBase(const SmallRung& r, const Problem& p) {
  return !UsesSwapBase(r, p) && r.tile_rows > 0 && p.m <= r.tile_rows;
}

/// The Hopper build small rung `r` runs `p` with where the few-row path does not take it: its
/// swapped build, its smaller-tile build or its base rung.
constexpr std::string_view HopperFor(const SmallRung& r, const Problem& p) {
  return UsesSwapBase(r, p) ? r.swap_base : UsesTileBase(r, p) ? r.tile_base : r.base;
}

/// Of `entries` (a rung's catalog or worker entries of the builds it runs, its default first),
/// the one called `name`; the first where none is.
inline const Variant& EntryNamed(const std::vector<Variant>& entries, std::string_view name) {
  for (const Variant& e : entries)
    if (e.name == name) return e;
  return entries.front();
}

/// Of `hopper` (the catalog's or the worker's entries of the rung's base first, then of its
/// smaller-tile and swapped builds), the one HopperFor names for `p`; the base where it names
/// none of them.
inline const Variant& PickHopper(const SmallRung& r, const std::vector<Variant>& hopper,
                                 const Problem& p) {
  return EntryNamed(hopper, HopperFor(r, p));
}

/// The few-row path's launch of one problem: the rows its kernel is built for (the least of 1,
/// 2, 4, 8, 16 at or above M), the columns each warp (or, split, each block) computes, and the
/// grid.
struct FewRowsPlan {
  bool runs = false;  ///< false: the base rung's launch runs the problem
  /// A and B swapped: the kernel's rows are B's (N of them), its columns A's rows, and C is
  /// stored transposed.
  bool swapped = false;
  int split = 1;                  ///< the ways a block's warps split K
  int rows = 0;                   ///< the build's rows (a template argument)
  int cols = 0;                   ///< columns of C per warp (split: per block)
  int threads = kFewRowsThreads;  ///< per block (the tensor-core kernel: 32 per warp of its split)
  int64_t blocks = 0;
  bool mma = false;  ///< the tensor-core kernel (16 rows, kMmaCols columns per block, split 4-16)
  int stages = 0;    ///< the tensor-core kernel's cp.async ring (0: none)
  int smem = 0;      ///< dynamic shared memory per block, bytes (the ring's)
};

/// The columns each warp of a build of `rows` rows computes: one below 8 rows (more warps, more
/// loads in flight), else rows / 4 (each row of A read once from L1 for that many of B).
#if defined(__CUDACC__)
#define ABLATION_FEW_ROWS_HD __host__ __device__
#else
#define ABLATION_FEW_ROWS_HD
#endif
ABLATION_FEW_ROWS_HD constexpr int FewRowsCols(int rows) { return rows < 8 ? 1 : rows / 4; }
#undef ABLATION_FEW_ROWS_HD

/// The plan of `p` with A and B at addresses a and b, for a rung taking at most `few_rows` rows
/// (and, swapped, at most `few_cols` columns; 0: none).
constexpr FewRowsPlan PlanFewRows(const Problem& p, int few_rows, uintptr_t a, uintptr_t b,
                                  int few_cols = 0, int split = 1, int mma_from = 0,
                                  int mma_warps = 4, int mma_stages = 0) {
  FewRowsPlan plan;
  if (p.dtype != DType::kBF16 || p.m < 1 || p.n < 1 || p.k < 8 || p.k % 8 != 0 || a % 16 != 0 ||
      b % 16 != 0)
    return plan;
  plan.swapped = p.m > few_rows && p.n <= few_cols;
  const int64_t rows = plan.swapped ? p.n : p.m, cols = plan.swapped ? p.m : p.n;
  if (rows > few_rows) return FewRowsPlan{};
  plan.runs = true;
  if (mma_from > 0 && rows >= mma_from) {
    plan.mma = true;
    plan.rows = kFewRows;
    plan.cols = kMmaCols;
    plan.split = kFewRowsThreads / 32;
    plan.blocks = (cols + kMmaCols - 1) / kMmaCols;
    const int64_t wanted = mma_stages > 0 ? kMmaWarpsWanted / 2 : kMmaWarpsWanted;
    while (plan.split < mma_warps && plan.blocks * plan.split < wanted) plan.split *= 2;
    plan.threads = plan.split * 32;
    plan.stages = mma_stages;
    plan.smem = plan.split * mma_stages * kRingStepBytes;
    return plan;
  }
  plan.rows = 1;
  while (plan.rows < rows) plan.rows *= 2;
  plan.cols = FewRowsCols(plan.rows);
  plan.split = split;
  const int64_t units = (cols + plan.cols - 1) / plan.cols;  // a warp's columns, or a block's
  const int64_t per_block = split > 1 ? 1 : kFewRowsThreads / 32;
  plan.blocks = (units + per_block - 1) / per_block;
  return plan;
}

/// The plan of `p` for small rung `r`.
constexpr FewRowsPlan PlanFewRows(const Problem& p, const SmallRung& r, uintptr_t a, uintptr_t b) {
  return PlanFewRows(p, r.few_rows, a, b, r.few_cols, r.split, r.mma_from, r.mma_warps,
                     r.mma_stages);
}

}  // namespace ablation::kernels::sm90

namespace ablation::kernels {
class Registry;
namespace sm90 {
/// Binds the small-shape rungs (the worker's side; sm90_few_rows.cu): the few-row path where
/// its plan takes a problem, the base rung's launch (bound before) elsewhere.
void BindSm90SmallRungs(Registry& registry);
}  // namespace sm90
}  // namespace ablation::kernels
