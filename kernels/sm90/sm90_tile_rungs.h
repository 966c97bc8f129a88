// The tile builds of the small-shape ladder (notes/small-shape-ladder.md): the last rung of the
// Hopper ladder (H12, sm90_config.h) with a smaller or narrower block tile, each a variant of its
// own rather than a rung (no rung above builds on one). Their table, kTileRungs, is what the
// catalog lists, sm90_tiles.cu binds, S12's bucket table (sm90_few_rows.h) picks among, the
// tuning tool times and the GPU test checks; each entry's knobs are H12's or another tile
// build's with the changes its comment names.
#pragma once

#include <array>

#include "kernels/sm90/sm90_config.h"

namespace ablation::kernels::sm90 {

namespace rung_knobs {
inline constexpr Knobs kT64 = With(kH12, [](Knobs& k) { k.block_m = 64; });
inline constexpr Knobs kT64Parts4 = With(kT64, [](Knobs& k) { k.sk_parts = 4; });
inline constexpr Knobs kT64Parts4Swapped =
    With(kT64Parts4, [](Knobs& k) { k.store_transposed = true; });
/// `base` with block tiles of `block_n` columns and `stages` stages, C written by the 16-byte
/// stores (the TMA-store epilogues are written for 256 columns): the narrow tile builds.
constexpr Knobs Narrow(Knobs base, int block_n, int stages) {
  base.block_n = block_n;
  base.stages = stages;
  base.epilogue = Epilogue::kWide;
  base.overlap_epilogue = false;
  return base;
}
/// 64x64 tiles with 13 stages: as many tiles as SMs at 128 rows of 4096 columns, each over the
/// whole K behind a deep pipeline (cuBLAS's kernel there is of this kind), B multicast across the
/// 2x1 cluster as in every H12 build; the 16-byte stores, since the TMA-store epilogues are
/// written for 256 columns.
inline constexpr Knobs kT64N64 = Narrow(kT64, 64, 13);
inline constexpr Knobs kT64N64Swapped = With(kT64N64, [](Knobs& k) { k.store_transposed = true; });
/// The 64x64 tiles without clusters: no B multicast, and 128x4096x4096's 128 tiles on 128 of the
/// 132 SMs rather than 64 clusters of 66 (sm90_tune read 190.7 against 181.9 TFLOPS clustered).
inline constexpr Knobs kT64N64Unclustered = Unclustered(kT64N64);
/// 64x8 tiles, 16 stages of 8 + 1 KiB, no cluster: a few-column problem (4096x16x4096: 64 tiles
/// of 64 rows by 2 of 8 columns, 128 in all, each over the whole K, as cuBLAS's best algorithm at
/// 16x4096x4096 in counters-4 does with A and B swapped); 4-byte stores, a lane quad's 16 bytes.
inline constexpr Knobs kT64N8 = Unclustered(Narrow(kT64, 8, 16));
/// The same for a few-row problem swapped (C^T = B A^T: 64 of B's rows by 8 of A's a tile):
/// 16x4096x4096 is 128 tiles.
inline constexpr Knobs kT64N8Swapped = With(kT64N8, [](Knobs& k) { k.store_transposed = true; });
/// The 64x8 tiles in 1x2 clusters: the two CTAs of a pair (the two 8-column tiles of 16
/// columns) share their A tile through TMA multicast, each loading half of it (32 rows, whole
/// swizzle atoms) into both, so A is read from L2 once rather than twice and the pair streams it
/// in step. 4096x16x14336: 64 units of two tiles, 128 CTAs, each over the whole K (cuBLAS's best
/// algorithm at 16x4096x4096 in counters-4 is of this kind: 64x8 tiles in 1x2 clusters).
inline constexpr Knobs kT64N8Pairs = With(kT64N8, [](Knobs& k) { k.cluster_n = 2; });
/// The same for a few-row problem swapped: 16x4096x14336 is 64 pairs sharing B's rows.
inline constexpr Knobs kT64N8SwappedPairs = With(kT64N8Swapped, [](Knobs& k) { k.cluster_n = 2; });
/// H12's 128-row tiles with 16 columns, swapped: 16x14336x4096 is 112 tiles of 128 of B's rows
/// by A's 16, one round each over the whole K (cuBLAS's best algorithm there has 256x8 tiles,
/// 112 CTAs); 12 stages of 16 + 2 KiB, no cluster, C stored transposed.
inline constexpr Knobs kT128N16Swapped =
    With(Unclustered(Narrow(kH12, 16, 12)), [](Knobs& k) { k.store_transposed = true; });
/// The 128x16 swapped tiles with stream-K sharing a last round however full it is
/// (sk_max_full_quarters 4): 16x14336x4096's 112 tiles become 132 equal ranges of K, one for each
/// SM, where the build above leaves 20 SMs idle; each unit meets at most three ranges, its
/// partial sums 8 KiB (128 x 16 fp32). The cell reads 95% of the measured bandwidth: more SMs keep
/// more of B's loads in flight.
inline constexpr Knobs kT128N16SwappedAllSms =
    With(kT128N16Swapped, [](Knobs& k) { k.sk_max_full_quarters = 4; });
/// H12's 128-row tiles with 128 columns: 128x14336x4096 is 112 tiles, one round each over the
/// whole K; 7 stages of 16 + 16 KiB, no cluster, the 16-byte stores.
inline constexpr Knobs kT128N128 = Unclustered(Narrow(kH12, 128, 7));
/// The 128x128 tiles with stream-K sharing a last round however full it is (sk_max_full_quarters
/// 4): 128x14336x4096's 112 tiles become 132 equal ranges of K (54 or 55 k-tiles where a tile has
/// 64), one for each SM, where the build above leaves 20 SMs idle; each unit meets at most three
/// ranges, its partial sums 64 KiB (128 x 128 fp32). There S12 reads 90% of the measured
/// bandwidth alone at the cap, `cublas_bf16_best` 96.5% (solo-1, evidence/2026-12-07-h100-small-
/// shapes-17): more SMs keep more of B's loads in flight. The same kernel as the build above
/// (KernelKnobs): only the host's plan differs.
inline constexpr Knobs kT128N128AllSms =
    With(kT128N128, [](Knobs& k) { k.sk_max_full_quarters = 4; });
/// The 64x64 tiles without clusters, stream-K sharing a last round however full: 128x4096x4096's
/// and 128x4096x14336's 128 tiles (S12's pick at 17-128 rows of more than 512 columns) become 132
/// equal ranges of K, 16 KiB partial sums, where the build above leaves 4 SMs idle (3%). Its
/// kernel (KernelKnobs).
inline constexpr Knobs kT64N64UnclusteredAllSms =
    With(kT64N64Unclustered, [](Knobs& k) { k.sk_max_full_quarters = 4; });
/// The 64x8 swapped tiles, stream-K sharing a last round however full: 16x4096x4096's 128 tiles
/// (swapped: 4096x16) become 132 equal ranges of K, 2 KiB partial sums, where the build above
/// leaves 4 SMs idle; there S12 (which runs S11) reads 96% of `cublas_bf16_best`. Its kernel
/// (KernelKnobs).
inline constexpr Knobs kT64N8SwappedAllSms =
    With(kT64N8Swapped, [](Knobs& k) { k.sk_max_full_quarters = 4; });
/// H12's 128-row tiles with 112 columns: 128x14336x4096 is 128 tiles, one round on 128 of the 132
/// SMs each over the whole K, where the 128x128 build's 112 tiles leave 20 SMs idle; 7 stages of
/// 16 + 14 KiB, no cluster, the 16-byte stores (the last 16 columns of a tile 4 bytes a lane).
inline constexpr Knobs kT128N112 = Unclustered(Narrow(kH12, 112, 7));
/// The 128x128 tiles in 1x2 clusters: two CTAs along N share their A tile through TMA multicast,
/// each loading half of it into both. At 128x14336x4096 every CTA reads the same 1 MiB of A beside
/// its own 1 MiB of B: the pairs halve A's traffic from L2 (cuBLAS's best algorithm there, 192x128
/// tiles, runs in clusters of 4). 56 units of 2 tiles, one round.
inline constexpr Knobs kT128N128PairsN = With(kT128N128, [](Knobs& k) { k.cluster_n = 2; });
/// 192x128 tiles, swapped: three consumer warpgroups (wgmma m64n128k16, 64 accumulators a thread,
/// 152 registers) on 192 of B's rows by 128 of A's, 5 stages of 24 + 16 KiB, no cluster, C stored
/// transposed. 128x14336x4096: 75 tiles (the last of 128 rows), a round 57% full that H12's
/// stream-K shares among every SM, so A (1 MiB) is read from L2 once a tile's K, 75 times where
/// the 128x128 tiles read it 112 (cuBLAS's best algorithm there: 192x128 tiles of the swapped
/// problem, in clusters of 4).
inline constexpr Knobs kT192N128Swapped = With(Unclustered(Narrow(kH12, 128, 5)), [](Knobs& k) {
  k.block_m = 192;
  k.store_transposed = true;
});
/// The 192x128 swapped tiles data-parallel in 4x1 clusters: four CTAs along M share their B tile
/// (the 128 rows of the swapped problem's A) through TMA multicast, each loading a quarter of it
/// into all four; one unit of four tiles per cluster over the whole K, no persistent grid and no
/// stream-K. 128x14336x4096: 19 clusters of 4 on 76 SMs (the last cluster's fourth tile past the
/// rows), A (1 MiB) read from L2 19 times a K rather than 75, no fix-ups. cuBLAS's best algorithm
/// there is of this kind (nvjet 192x128 in 4x1 clusters sharing B, small-shapes-15).
inline constexpr Knobs kT192N128Quads = With(kT192N128Swapped, [](Knobs& k) {
  k.cluster_m = 4;
  k.persistent = false;
  k.stream_k = false;
  k.fit_grid = false;
});
}  // namespace rung_knobs

inline constexpr std::array<Rung, 20> kTileRungs = {{
    {"sm90_h12_rows64", "T64",
     "64-row tiles: H12 with a block tile of 64x256 computed by one consumer warpgroup (wgmma "
     "m64n256k16) beside the producer, 256 threads; a stage holds 8 KiB of A and 32 KiB of B, "
     "a 2x1 cluster 128 rows",
     rung_knobs::kT64},
    {"sm90_h12_rows64_sk4", "T64q",
     "shorter stream-K ranges: the 64-row build with ranges longer than a quarter of a unit "
     "rather than half (a unit meets at most five, its last adds at most four partial sums), "
     "so that a few units keep more clusters busy (128x4096x4096: 60 clusters of 66, not 31)",
     rung_knobs::kT64Parts4},
    {"sm90_h12_rows64_sk4_swapped", "T64qS",
     "swap-AB on the tensor-core tiles: the shorter-range 64-row build given B as A and A as B "
     "(C^T = B A^T, a few columns of C the rows of its tiles), C stored transposed by plain "
     "stores; M a multiple of 8 (the kernel's N)",
     rung_knobs::kT64Parts4Swapped},
    {"sm90_h12_rows64_n64", "T64n",
     "64x64 tiles, 13 stages: the 64-row build with a block tile of 64 columns (wgmma m64n64k16, "
     "32 accumulators a thread) and a stage of 8 KiB of A and 8 KiB of B, 13 of them in flight; "
     "16-byte stores (the TMA-store epilogues are written for 256 columns). 128x4096x4096: 128 "
     "CTAs each over the whole K, where the 64x256 build has 32 tiles to share by stream-K",
     rung_knobs::kT64N64},
    {"sm90_h12_rows64_n64_swapped", "T64nS",
     "swap-AB on the 64x64 tiles: the 64x64 build given B as A and A as B (C^T = B A^T, a few "
     "columns of C the rows of its tiles), C stored transposed by plain stores; M a multiple of 8 "
     "(the kernel's N). 4096x128x4096: 128 CTAs, as the 64x64 build at 128x4096x4096",
     rung_knobs::kT64N64Swapped},
    {"sm90_h12_rows64_n8_swapped", "T64eS",
     "64x8 tiles, swapped: the 64-row build given B as A and A as B with a block tile of 8 "
     "columns (wgmma m64n8k16, 4 accumulators a thread), 16 stages of 8 KiB of B's rows and 1 KiB "
     "of A's, no cluster, C stored transposed by plain stores; M a multiple of 8. 16x4096x4096: "
     "128 CTAs each over the whole K, where the few-row paths split K",
     rung_knobs::kT64N8Swapped},
    {"sm90_h12_rows64_n64_unclustered", "T64nU",
     "64x64 tiles without clusters: the 64x64 build with no B multicast; 128x4096x4096 is 128 "
     "CTAs on 128 SMs where the 2x1 clusters are 64 of 66",
     rung_knobs::kT64N64Unclustered},
    {"sm90_h12_rows64_n8", "T64e",
     "64x8 tiles: the 64-row build with a block tile of 8 columns (wgmma m64n8k16, 4 accumulators "
     "a thread), 16 stages of 8 KiB of A and 1 KiB of B, no cluster, 4-byte stores (a lane quad "
     "16 bytes of a row). 4096x16x4096: 128 CTAs each over the whole K, where the few-column "
     "paths split K",
     rung_knobs::kT64N8},
    {"sm90_h12_n16_swapped", "T128sS",
     "128x16 tiles, swapped: H12 given B as A and A as B with a block tile of 16 columns (two "
     "consumer warpgroups of wgmma m64n16k16, 8 accumulators a thread), 12 stages of 16 KiB of "
     "B's rows and 2 KiB of A's, no cluster, C stored transposed; M a multiple of 8. "
     "16x14336x4096: 112 CTAs each over the whole K, one round",
     rung_knobs::kT128N16Swapped},
    {"sm90_h12_n128", "T128h",
     "128x128 tiles: H12 with a block tile of 128 columns (two consumer warpgroups of wgmma "
     "m64n128k16, 64 accumulators a thread), 7 stages of 16 + 16 KiB, no cluster, 16-byte "
     "stores. 128x14336x4096: 112 CTAs each over the whole K, one round",
     rung_knobs::kT128N128},
    {"sm90_h12_n128_shared_a", "T128hA",
     "128x128 tiles sharing A: the 128x128 build in 1x2 clusters, two CTAs along N each loading "
     "half of their common A tile into both through TMA multicast. 128x14336x4096: 56 units of "
     "two tiles on 112 SMs, one round, A read from L2 half as often. Measured and rejected "
     "(tiles-8): 303.7 TFLOPS there against the 128x128 build's 305.4, the pairs waiting at "
     "their barriers",
     rung_knobs::kT128N128PairsN},
    {"sm90_h12_m192_n128_swapped", "T192hS",
     "192x128 tiles, swapped: H12 given B as A and A as B with three consumer warpgroups of "
     "wgmma m64n128k16 (64 accumulators a thread, 512 threads), 5 stages of 24 KiB of B's rows "
     "and 16 KiB of A's, no cluster, C stored transposed; M a multiple of 8. 128x14336x4096: 75 "
     "tiles shared by stream-K among every SM, A read from L2 75 times a K rather than 112. "
     "Measured and rejected (tiles, small-shapes-14): 260.8 TFLOPS there against the 128x128 "
     "build's 303.3, slower at every shape measured",
     rung_knobs::kT192N128Swapped},
    {"sm90_h12_m192_n128_quads", "T192hQ",
     "192x128 tiles, swapped, data-parallel in 4x1 clusters: the 192x128 swapped build with four "
     "CTAs along M sharing their B tile (A's rows) through TMA multicast, each loading a quarter "
     "of it into all four, one unit of four tiles per cluster over the whole K (no persistent "
     "grid, no stream-K, no fix-ups); M a multiple of 8. 128x14336x4096: 19 clusters on 76 SMs, "
     "A read from L2 19 times a K rather than 75",
     rung_knobs::kT192N128Quads},
    {"sm90_h12_rows64_n8_pairs", "T64eP",
     "64x8 tiles in 1x2 clusters: the 64x8 build with the two CTAs of each 16 columns sharing "
     "their A tile through TMA multicast, each loading half of it (32 rows) into both. "
     "4096x16x14336: 64 pairs, 128 CTAs each over the whole K, A read from L2 once rather than "
     "twice",
     rung_knobs::kT64N8Pairs},
    {"sm90_h12_rows64_n8_swapped_pairs", "T64eSP",
     "64x8 tiles in 1x2 clusters, swapped: the 64x8 swapped build with the two CTAs of each 16 "
     "rows of C sharing their tile of B's rows through TMA multicast, each loading half of it "
     "into both; M a multiple of 8. 16x4096x14336: 64 pairs, 128 CTAs, B read from L2 once "
     "rather than twice",
     rung_knobs::kT64N8SwappedPairs},
    {"sm90_h12_n112", "T128x112",
     "128x112 tiles: H12 with a block tile of 112 columns (two consumer warpgroups of wgmma "
     "m64n112k16, 56 accumulators a thread), 7 stages of 16 + 14 KiB, no cluster, 16-byte stores "
     "(a tile's last 16 columns 4 bytes a lane). 128x14336x4096: 128 CTAs each over the whole K, "
     "one round on 128 of 132 SMs where the 128x128 build's 112 CTAs leave 20 idle",
     rung_knobs::kT128N112},
    {"sm90_h12_n16_swapped_all_sms", "T128sSk",
     "128x16 tiles, swapped, on every SM: the 128x16 swapped build with stream-K sharing the last "
     "round however full it is. 16x14336x4096: 112 tiles in 132 equal ranges of K, one a CTA, "
     "partial sums of 8 KiB fixed up in a fixed order, where the 128x16 build's 112 CTAs leave 20 "
     "SMs idle",
     rung_knobs::kT128N16SwappedAllSms},
    {"sm90_h12_n128_all_sms", "T128hk",
     "128x128 tiles on every SM: the 128x128 build with stream-K sharing the last round however "
     "full it is (its kernel). 128x14336x4096: 112 tiles in 132 equal ranges of K, one a CTA, "
     "partial sums of 64 KiB fixed up in a fixed order, where the 128x128 build's 112 CTAs leave "
     "20 SMs idle",
     rung_knobs::kT128N128AllSms},
    {"sm90_h12_rows64_n64_unclustered_all_sms", "T64nUk",
     "64x64 tiles without clusters on every SM: the 64x64 build without clusters, stream-K "
     "sharing the last round however full it is (its kernel). 128x4096x4096: 128 tiles in 132 "
     "equal ranges of K, partial sums of 16 KiB, where the build's 128 CTAs leave 4 SMs idle",
     rung_knobs::kT64N64UnclusteredAllSms},
    {"sm90_h12_rows64_n8_swapped_all_sms", "T64eSk",
     "64x8 tiles, swapped, on every SM: the 64x8 swapped build with stream-K sharing the last "
     "round however full it is (its kernel). 16x4096x4096: 128 tiles in 132 equal ranges of K, "
     "partial sums of 2 KiB, where the build's 128 CTAs leave 4 SMs idle",
     rung_knobs::kT64N8SwappedAllSms},
}};
/// Every tile build's stages and barriers fit the 227 KiB of shared memory a block may opt in to.
static_assert([] {
  for (const Rung& r : kTileRungs)
    if (SmemBytes(r.knobs) > 227 * 1024) return false;
  return true;
}());

}  // namespace ablation::kernels::sm90
