// The sm90 family (Hopper ladder): one rung per Hopper feature, each adding exactly one thing to
// the rung before it. Host-only description shared by the catalog and the launchers; the kernels
// are in sm90_mma.cuh (mma.sync rungs) and sm90_wgmma.cuh (wgmma rungs).
//
// Contract (every rung): bf16 A (M x K, row-major) and B (N x K, row-major, i.e. K-major like the
// ablation family's bl1 layout), fp32 accumulation, bf16 C (M x N, row-major). Block tile
// 128 x 256 x 64, 4 shared-memory stages of A 128x64 and B 256x64 with the 128-byte swizzle.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

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
  bool wide_stores;       ///< epilogue: a quad transpose by shuffles, then 16-byte stores
};

// The order is what the H200 measured (notes/gpu-runs.md): each rung adds one thing to the rung
// above it, so each row's change is that thing's worth.
inline constexpr std::array<Rung, 9> kRungs = {{
    {"sm90_m1_mma", "M1",
     "mma.sync ceiling: 128x256x64 tile, 8 warps of 64x64, 4 cp.async stages, ldmatrix, "
     "register double buffer",
     Mainloop::kMmaCpAsync, false, false, 1, 0, false, false},
    {"sm90_h1_tma", "H1", "TMA loads on an mbarrier replace cp.async (mma.sync kept)",
     Mainloop::kMmaTma, false, false, 1, 0, false, false},
    {"sm90_h2_wgmma", "H2",
     "wgmma m64n256k16 from shared memory replaces ldmatrix + mma.sync (two warpgroups)",
     Mainloop::kWgmma, false, false, 1, 0, false, false},
    {"sm90_h3_ws", "H3",
     "warp specialisation: a producer warpgroup (setmaxnreg 40) issues TMA, two consumer "
     "warpgroups (setmaxnreg 232) compute; full/empty mbarriers replace __syncthreads",
     Mainloop::kWgmma, true, false, 1, 0, false, false},
    {"sm90_h4_persistent", "H4",
     "persistent grid: one CTA per SM walks the tiles, the next tile's loads overlap the "
     "epilogue",
     Mainloop::kWgmma, true, true, 1, 0, false, false},
    {"sm90_h5_mc2", "H5",
     "2x1 clusters: the two CTAs of a cluster share B, each loading half with TMA multicast",
     Mainloop::kWgmma, true, true, 2, 0, false, false},
    {"sm90_h6_async_release", "H6",
     "one wgmma batch left running: a stage is released when the next k-tile's batch is issued",
     Mainloop::kWgmma, true, true, 2, 1, false, false},
    {"sm90_h7_l2order", "H7",
     "L2-friendly tile order: groups of 8 tile rows walked column by column", Mainloop::kWgmma,
     true, true, 2, 1, true, false},
    {"sm90_h8_wide_stores", "H8",
     "16-byte epilogue stores: a 4x4 transpose by shuffles in each lane quad, so a warp writes 64 "
     "contiguous bytes per row instead of 16",
     Mainloop::kWgmma, true, true, 2, 1, true, true},
}};

inline constexpr int Threads(const Rung& r) { return r.warp_specialized ? 384 : 256; }

/// Dynamic shared memory: the stages, 1 KiB to align them (the 128-byte swizzle repeats every
/// 1024 bytes), and the full/empty barriers.
inline constexpr int64_t SmemBytes() {
  return int64_t(kStages) * kStageBytes + 1024 + 2 * 8 * kStages;
}

}  // namespace ablation::kernels::sm90
