// CPU tests of the sm90 family's catalog: the ladder's rungs, one change each, their parameters
// and their refusals (each naming the field).
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "kernels/registry.h"
#include "kernels/sm90/sm90_buckets.h"
#include "kernels/sm90/sm90_catalog.h"
#include "kernels/sm90/sm90_config.h"
#include "kernels/sm90/sm90_few_rows.h"
#include "kernels/sm90/sm90_plan.h"
#include "kernels/sm90/sm90_schedule.h"
#include "kernels/sm90/sm90_shapes.h"
#include "kernels/sm90/sm90_tile_rungs.h"

namespace ablation::kernels {
namespace {

class Sm90Catalog : public ::testing::Test {
 protected:
  void SetUp() override { RegisterCatalog(registry_); }
  const Variant& Get(std::string_view name) {
    const Variant* v = registry_.Find(name);
    EXPECT_NE(v, nullptr) << name;
    return *v;
  }
  std::string Param(const Variant& v, const std::string& key) {
    for (const auto& [k, val] : v.params)
      if (k == key) return val.Text();
    return "";
  }
  /// The entry of a swapped tile build for a few rows, `name`: its tile's columns, its operands
  /// named swapped, `p` and `also` taken, one row refused (M must be a multiple of 8), and the
  /// build it describes at `p` saying that A and B are swapped.
  void ExpectSwappedFewRowEntry(std::string_view name, int tile_n, const Problem& p,
                                const Problem& also) {
    const Variant& v = Get(name);
    EXPECT_EQ(v.tile.n, tile_n);
    EXPECT_EQ(Param(v, "operands"), "swapped");
    EXPECT_EQ(v.can_implement(p), "");
    EXPECT_EQ(v.can_implement(also), "");
    EXPECT_NE(v.can_implement({1, 4096, 4096, DType::kBF16}).find("m must be a multiple of 8"),
              std::string::npos);
    EXPECT_NE(v.build(p, Residency{132, 66}).find("A and B swapped"), std::string::npos);
  }
  Registry registry_;
};

/// Knobs in which two rungs differ.
int Changes(const sm90::Knobs& a, const sm90::Knobs& b) {
  return (a.mainloop != b.mainloop) + (a.warp_specialized != b.warp_specialized) +
         (a.persistent != b.persistent) + (a.cluster_m != b.cluster_m) + (a.pending != b.pending) +
         (a.epilogue != b.epilogue) + (a.stream_k != b.stream_k) + (a.cluster_n != b.cluster_n) +
         (a.grouped_order != b.grouped_order) + (a.overlap_epilogue != b.overlap_epilogue) +
         (a.fp8 != b.fp8) + (a.fit_grid != b.fit_grid) +
         (a.clusters_where_shared != b.clusters_where_shared) + (a.block_m != b.block_m) +
         (a.sk_parts != b.sk_parts) + (a.store_transposed != b.store_transposed);
}

/// A launch of `k` at `p` on an H200 is one round of whole tiles: `tiles` units on as many CTAs,
/// none shared by stream-K, on the tile (the few-row and few-column tile builds' plan).
void ExpectOneRoundOfWholeTiles(const sm90::Knobs& k, const Problem& p, int tiles) {
  const sm90::LaunchPlan plan = sm90::PlanLaunch(k, p, Residency{132, 66});
  EXPECT_FALSE(plan.guarded);
  EXPECT_EQ(plan.grid.units, tiles);
  EXPECT_EQ(plan.grid.ctas, tiles);
  EXPECT_EQ(plan.grid.sk.sk_clusters, 0u);
}

/// kTileRungs[i], named `id`, is kTileRungs[base] with stream-K sharing a last round however full
/// (sk_max_full_quarters 4) and runs that build's kernel (KernelKnobs).
void ExpectOnEverySmOf(size_t i, std::string_view id, size_t base) {
  ASSERT_EQ(sm90::kTileRungs[i].id, id);
  sm90::Knobs expected = sm90::kTileRungs[base].knobs;
  expected.sk_max_full_quarters = 4;
  EXPECT_EQ(sm90::kTileRungs[i].knobs, expected) << id;
  EXPECT_EQ(sm90::KernelKnobs(sm90::kTileRungs[i].knobs), sm90::kTileRungs[base].knobs) << id;
}

/// A launch of `k` at `p` on an H200 that stream-K shares on every SM (the builds of
/// sk_max_full_quarters 4): `units` units, none whole, their `k_tiles` k-tiles each in 132 ranges,
/// one a CTA.
sm90::LaunchPlan ExpectSharedOnEverySm(const sm90::Knobs& k, const Problem& p, int units,
                                       uint32_t k_tiles) {
  const sm90::LaunchPlan plan = sm90::PlanLaunch(k, p, Residency{132, 66});
  EXPECT_FALSE(plan.guarded);
  EXPECT_EQ(plan.grid.units, units);
  EXPECT_EQ(plan.grid.ctas, 132);
  EXPECT_EQ(plan.grid.sk.dp_units, 0);
  EXPECT_EQ(plan.grid.sk.sk_clusters, 132u);
  EXPECT_EQ(plan.grid.sk.sk_iters, uint32_t(units) * k_tiles);
  EXPECT_GT(plan.grid.partial_bytes, 0);
  return plan;
}

TEST_F(Sm90Catalog, ThirteenRungsOneChangeEach) {
  int count = 0;
  for (const Variant& v : registry_.All()) count += v.family == "sm90" && v.Supports(DType::kBF16);
  // and the small-shape ladder's, with the builds of smaller tiles they run, and its per-bucket
  // rungs (S8, S10)
  EXPECT_EQ(count, 13 + int(sm90::kSmallRungs.size() + sm90::kTileRungs.size() +
                            sm90::kBucketTables.size()));
  // Each rung differs from the one before it in exactly one knob.
  for (size_t i = 1; i < sm90::kRungs.size(); ++i) {
    const sm90::Rung& a = sm90::kRungs[i - 1];
    const sm90::Rung& b = sm90::kRungs[i];
    EXPECT_EQ(Changes(a.knobs, b.knobs), 1) << a.name << " -> " << b.name;
  }
  std::set<std::string> ids;
  for (const sm90::Rung& r : sm90::kRungs) ids.insert(std::string(r.id));
  EXPECT_EQ(ids.size(), sm90::kRungs.size());
}

// The fp8 ladder: F1 is H3 with e4m3 operands, and each rung after it adds one knob, the same
// step as one of the bf16 ladder's (H4, H6..H11: H5's clusters left out, from measurement).
// The small-shape ladder's S1: H12 with a few-row path. Which problems the path takes (bf16, at
// most 16 rows, rows of whole 16-byte chunks, aligned operands), the build of rows each runs and
// its grid; the entry names its base and describes the build and launch size at each problem,
// H12's where the path does not take it.
TEST_F(Sm90Catalog, TheFewRowPathTakesAtMost16RowsOfWholeChunks) {
  using sm90::PlanFewRows;
  const auto plan = [](int64_t m, int64_t n, int64_t k, uintptr_t a = 0, uintptr_t b = 0,
                       DType d = DType::kBF16) {
    return PlanFewRows({m, n, k, d}, 16, a, b);
  };
  EXPECT_TRUE(plan(1, 4096, 4096).runs);
  EXPECT_EQ(plan(1, 4096, 4096).rows, 1);
  EXPECT_EQ(plan(1, 4096, 4096).cols, 1);
  EXPECT_EQ(plan(1, 4096, 4096).blocks, 1024);  // 4096 warps of one column, 4 per block
  EXPECT_EQ(plan(3, 10, 8).rows, 4);
  EXPECT_EQ(plan(9, 4096, 4096).rows, 16);
  EXPECT_EQ(plan(16, 14336, 4096).cols, 4);  // 16 rows: 4 columns per warp
  EXPECT_EQ(plan(16, 14336, 4096).blocks, 896);
  EXPECT_EQ(plan(16, 1001, 64).blocks, 63);  // 251 warps, the last with one column
  EXPECT_EQ(plan(8, 10, 8).cols, 2);
  EXPECT_FALSE(plan(17, 4096, 4096).runs);       // more rows: H12's tile
  EXPECT_FALSE(plan(4, 4096, 4100).runs);        // K not whole 16-byte chunks
  EXPECT_FALSE(plan(4, 4096, 4096, 8, 0).runs);  // A misaligned
  EXPECT_FALSE(plan(4, 4096, 4096, 0, 2).runs);  // B misaligned
  EXPECT_FALSE(plan(4, 4096, 4096, 0, 0, DType::kFP16).runs);
  const Variant& s1 = Get("sm90_s1_few_rows");
  const Variant& h12 = Get("sm90_h12_fitted_unclustered");
  EXPECT_EQ(Param(s1, "rung"), "S1");
  EXPECT_EQ(Param(s1, "base"), "sm90_h12_fitted_unclustered");
  EXPECT_EQ(Param(s1, "few_rows"), "16");
  EXPECT_EQ(Param(s1, "schedule"), Param(h12, "schedule"));
  EXPECT_EQ(s1.launch_at({1, 4096, 4096, DType::kBF16}).threads, 128);
  EXPECT_EQ(s1.launch_at({1, 4096, 4096, DType::kBF16}).dynamic_smem_bytes, 0);
  EXPECT_EQ(s1.launch_at({128, 4096, 4096, DType::kBF16}).threads, h12.threads);
  EXPECT_EQ(s1.launch_at({128, 4096, 4096, DType::kBF16}).dynamic_smem_bytes, h12.smem_bytes);
  const Residency none;
  EXPECT_EQ(s1.build({16, 4096, 4096, DType::kBF16}, none),
            "few-row path: a build of 16 rows, 4 columns of C per warp, 256 blocks of 128 threads");
  EXPECT_EQ(s1.build({4096, 4096, 4096, DType::kBF16}, none),
            h12.build({4096, 4096, 4096, DType::kBF16}, none));
  EXPECT_EQ(s1.can_implement({1, 1, 1, DType::kBF16}), "");
  EXPECT_NE(s1.description.find("S1: a few-row path"), std::string::npos);
  EXPECT_FALSE(plan(4096, 1, 4096).runs);  // S1 takes no few-column problem
}

// S2: S1 with swap-AB. At most 16 columns (and more than 16 rows) run the few-row kernel with A
// and B swapped, B's columns its rows and A's rows its columns; a problem of few rows stays
// S1's, not swapped.
TEST_F(Sm90Catalog, SwapAbTakesAtMost16ColumnsOfMoreThan16Rows) {
  using sm90::PlanFewRows;
  const auto plan = [](int64_t m, int64_t n, int64_t k) {
    return PlanFewRows({m, n, k, DType::kBF16}, 16, 0, 0, 16);
  };
  EXPECT_TRUE(plan(4096, 1, 4096).swapped);
  EXPECT_EQ(plan(4096, 1, 4096).rows, 1);
  EXPECT_EQ(plan(4096, 1, 4096).blocks, 1024);  // 4096 of A's rows, a warp each
  EXPECT_EQ(plan(14336, 16, 4096).rows, 16);
  EXPECT_EQ(plan(14336, 16, 4096).cols, 4);
  EXPECT_EQ(plan(14336, 16, 4096).blocks, 896);
  EXPECT_FALSE(plan(16, 1, 4096).swapped);  // few rows: S1's path
  EXPECT_TRUE(plan(16, 1, 4096).runs);
  EXPECT_FALSE(plan(4096, 17, 4096).runs);
  EXPECT_FALSE(plan(4096, 16, 4100).runs);
  const Variant& s2 = Get("sm90_s2_few_cols");
  EXPECT_EQ(Param(s2, "rung"), "S2");
  EXPECT_EQ(Param(s2, "few_cols"), "16");
  EXPECT_EQ(Param(Get("sm90_s1_few_rows"), "few_cols"), "0");
  const Residency none;
  EXPECT_EQ(s2.build({4096, 16, 4096, DType::kBF16}, none),
            "few-row path, A and B swapped (C stored transposed): a build of 16 rows, 4 columns "
            "of C per warp, 256 blocks of 128 threads");
  EXPECT_EQ(s2.launch_at({4096, 16, 4096, DType::kBF16}).threads, 128);
  EXPECT_EQ(s2.build({4096, 4096, 4096, DType::kBF16}, none),
            Get("sm90_h12_fitted_unclustered").build({4096, 4096, 4096, DType::kBF16}, none));
}

// S3: S2 with split-K in the block: a block's 4 warps share its columns (one warp's worth), so a
// problem gets 4 times the warps; the rest of the plan is S2's.
TEST_F(Sm90Catalog, SplitKGivesABlockOneWarpsColumnsAndFourTimesTheWarps) {
  const sm90::SmallRung& s3 = sm90::kSmallRungs[2];
  const sm90::SmallRung& s2 = sm90::kSmallRungs[1];
  ASSERT_EQ(s3.id, "S3");
  EXPECT_EQ(s3.few_rows, s2.few_rows);
  EXPECT_EQ(s3.few_cols, s2.few_cols);
  EXPECT_EQ(s3.split, 4);
  for (Problem p : {Problem{1, 4096, 4096}, Problem{16, 14336, 4096}, Problem{4096, 16, 4096},
                    Problem{5, 1001, 64}}) {
    p.dtype = DType::kBF16;
    const sm90::FewRowsPlan a = sm90::PlanFewRows(p, s2, 0, 0), b = sm90::PlanFewRows(p, s3, 0, 0);
    ASSERT_TRUE(a.runs && b.runs);
    EXPECT_EQ(b.rows, a.rows);
    EXPECT_EQ(b.swapped, a.swapped);
    EXPECT_EQ(b.split, 4);
    const int64_t cols = a.swapped ? p.m : p.n;
    EXPECT_EQ(b.blocks, (cols + b.cols - 1) / b.cols) << p.m << "x" << p.n;
  }
  const Residency none;
  EXPECT_EQ(Get("sm90_s3_split_k").build({16, 4096, 4096, DType::kBF16}, none),
            "few-row path: a build of 16 rows, 4 columns of C per block, K split 4 ways among its "
            "warps, 1024 blocks of 128 threads");
  EXPECT_EQ(Param(Get("sm90_s3_split_k"), "split_k"), "4");
}

// The 64-row build (kTileRungs): H12 with one change, block_m; a 64x256 tile, one consumer
// warpgroup (256 threads), stages of 8 KiB of A; twice H12's units where M is over 128, the same
// at M of 128 (a 2x1 cluster of 64-row tiles is 128 rows, of 128-row tiles 256); on the tile at
// M of 128, guarded at 64.
TEST_F(Sm90Catalog, SixtyFourRowTilesAreH12WithOneChange) {
  const sm90::Knobs& h12 = sm90::RungById("H12").knobs;
  const sm90::Knobs& t64 = sm90::kTileRungs[0].knobs;
  EXPECT_EQ(Changes(h12, t64), 1);
  EXPECT_EQ(t64.block_m, 64);
  EXPECT_EQ(t64.Threads(), 256);
  EXPECT_EQ(h12.Threads(), 384);
  EXPECT_EQ(sm90::ATileBytes(t64), 8192);
  EXPECT_EQ(sm90::StageBytes(h12), sm90::kStageBytes);
  EXPECT_EQ(sm90::SmemBytes(t64), 4 * (8192 + 32768) + 2 * 8192 + 1024 + 64);
  EXPECT_EQ(sm90::SmemBytes(h12), 4 * (16384 + 32768) + 4 * 8192 + 1024 + 64);
  EXPECT_EQ(sm90::UnitsOf(t64, 128, 4096), 16);
  EXPECT_EQ(sm90::UnitsOf(h12, 128, 4096), 16);
  EXPECT_EQ(sm90::UnitsOf(t64, 512, 4096), 64);
  EXPECT_EQ(sm90::UnitsOf(h12, 512, 4096), 32);
  EXPECT_TRUE(sm90::PlanShape({128, 4096, 4096, DType::kBF16}, t64, 0, 0, 0).on_tile);
  EXPECT_FALSE(sm90::PlanShape({64, 4096, 4096, DType::kBF16}, t64, 0, 0, 0).on_tile);
  EXPECT_FALSE(sm90::PlanShape({128, 4096, 4096, DType::kBF16}, h12, 0, 0, 0).on_tile);
  const Variant& v = Get("sm90_h12_rows64");
  EXPECT_EQ(v.tile.m, 64);
  EXPECT_EQ(v.threads, 256);
  EXPECT_EQ(v.smem_bytes, sm90::SmemBytes(t64));
  EXPECT_EQ(Param(v, "rung"), "T64");
  // 128x4096x4096 on 66 clusters: 16 units of 64 k-tiles, all shared by stream-K, in ranges
  // longer than half a unit (so that a unit meets at most three): 1,024 / 33, 31 clusters.
  const Residency h200{132, 66};
  const sm90::LaunchPlan plan = sm90::PlanLaunch(t64, {128, 4096, 4096, DType::kBF16}, h200);
  EXPECT_FALSE(plan.guarded);
  EXPECT_EQ(plan.grid.sk.dp_units, 0);
  EXPECT_EQ(plan.grid.sk.sk_clusters, 31u);
  // T64q: ranges over a quarter of a unit, 1,024 / 17: 60 clusters, each partial slot of its
  // one consumer warpgroup counted in the workspace.
  const sm90::Knobs& t64q = sm90::kTileRungs[1].knobs;
  EXPECT_EQ(Changes(t64, t64q), 1);
  EXPECT_EQ(t64q.sk_parts, 4);
  const sm90::LaunchPlan q = sm90::PlanLaunch(t64q, {128, 4096, 4096, DType::kBF16}, h200);
  EXPECT_EQ(q.grid.sk.sk_clusters, 60u);
  EXPECT_EQ(q.grid.partial_bytes, 16 * 2 * 4 * 64 * 256 * 4);
  EXPECT_EQ(q.grid.flags, 16 * 2 * 4);
  EXPECT_EQ(plan.grid.partial_bytes, 16 * 2 * 2 * 64 * 256 * 4);
  // The tile count a 64-row tile makes of M x N is what the refusal counts.
  EXPECT_NE(v.can_implement({int64_t(1) << 30, 1 << 30, 64, DType::kBF16}).find("tiles of 64x256"),
            std::string::npos);
}

// The 64x64 build (kTileRungs[3]): the 64-row build with 64-column tiles (wgmma m64n64k16, 32
// accumulators a thread), 13 stages of 8 + 8 KiB and the 16-byte stores. 128x4096x4096: 64 units
// of 2x1 tiles, 128 CTAs, each over the whole K (64 on 66 clusters leaves the last round too full
// for stream-K to share), where the 64x256 build has 16 units to share.
TEST_F(Sm90Catalog, SixtyFourBySixtyFourTilesRunEveryTileWholeAt128Rows) {
  const sm90::Knobs& t64 = sm90::kTileRungs[0].knobs;
  const sm90::Knobs& n64 = sm90::kTileRungs[3].knobs;
  ASSERT_EQ(sm90::kTileRungs[3].id, "T64n");
  EXPECT_EQ(n64.block_n, 64);
  EXPECT_EQ(n64.stages, 13);
  EXPECT_EQ(n64.epilogue, sm90::Epilogue::kWide);
  EXPECT_FALSE(n64.overlap_epilogue);
  sm90::Knobs back = n64;
  back.block_n = t64.block_n;
  back.stages = t64.stages;
  back.epilogue = t64.epilogue;
  back.overlap_epilogue = t64.overlap_epilogue;
  EXPECT_TRUE(back == t64) << "every other knob is the 64-row build's";
  EXPECT_EQ(sm90::Accumulators(n64), 32);
  EXPECT_EQ(sm90::Accumulators(t64), 128);
  EXPECT_EQ(sm90::BTileBytes(n64), 8192);
  EXPECT_EQ(sm90::StageBytes(n64), 16384);
  EXPECT_EQ(sm90::SmemBytes(n64), 13 * 16384 + 1024 + 2 * 8 * 13);  // no store buffers
  EXPECT_LE(sm90::SmemBytes(n64), 227 * 1024);
  EXPECT_EQ(sm90::UnitsOf(n64, 128, 4096), 64);
  EXPECT_EQ(sm90::UnitsOf(n64, 4096, 128), 32 * 2);
  EXPECT_TRUE(sm90::PlanShape({128, 4096, 4096, DType::kBF16}, n64, 0, 0, 0).on_tile);
  EXPECT_FALSE(sm90::PlanShape({128, 4128, 4096, DType::kBF16}, n64, 0, 0, 0).on_tile);
  EXPECT_TRUE(sm90::PlanShape({128, 4160, 4096, DType::kBF16}, n64, 0, 0, 0).on_tile);
  const Residency h200{132, 66};
  const sm90::LaunchPlan plan = sm90::PlanLaunch(n64, {128, 4096, 4096, DType::kBF16}, h200);
  EXPECT_FALSE(plan.guarded);
  EXPECT_EQ(plan.grid.units, 64);
  EXPECT_EQ(plan.grid.ctas, 128);
  EXPECT_FALSE(plan.grid.clusters_dropped) << "B multicast across the 2x1 cluster, as cuBLAS's";
  EXPECT_EQ(plan.grid.sk.sk_clusters, 0u);
  EXPECT_EQ(plan.grid.sk.dp_units, 64);
  const Variant& v = Get("sm90_h12_rows64_n64");
  EXPECT_EQ(v.tile.m, 64);
  EXPECT_EQ(v.tile.n, 64);
  EXPECT_EQ(v.threads, 256);
  EXPECT_EQ(v.smem_bytes, sm90::SmemBytes(n64));
  EXPECT_EQ(Param(v, "stages"), "13");
  EXPECT_NE(v.description.find("64x64x64 tile, 13 stages"), std::string::npos) << v.description;
  EXPECT_NE(v.can_implement({int64_t(1) << 30, 1 << 30, 64, DType::kBF16}).find("tiles of 64x64"),
            std::string::npos);
  // Its swapped build: the same knobs, C stored transposed; 4096x128x4096 runs as 128x4096x4096.
  const sm90::Knobs& n64s = sm90::kTileRungs[4].knobs;
  ASSERT_EQ(sm90::kTileRungs[4].id, "T64nS");
  EXPECT_EQ(Changes(n64, n64s), 1);
  EXPECT_TRUE(n64s.store_transposed);
  const Variant& s = Get("sm90_h12_rows64_n64_swapped");
  EXPECT_EQ(Param(s, "operands"), "swapped");
  EXPECT_NE(s.build({4096, 128, 4096, DType::kBF16}, h200).find("A and B swapped"),
            std::string::npos);
  const sm90::LaunchPlan swapped =
      sm90::PlanLaunch(n64s, sm90::SwappedProblem({4096, 128, 4096, DType::kBF16}), h200);
  EXPECT_EQ(swapped.grid.ctas, 128);
  EXPECT_EQ(s.can_implement({4096, 128, 4096, DType::kBF16}), "");
  EXPECT_NE(s.can_implement({4095, 128, 4096, DType::kBF16}).find("m must be a multiple of 8"),
            std::string::npos);
}

// The 64x8 swapped build (kTileRungs[5]): a few-row problem as C^T = B A^T on 64x8 tiles (wgmma
// m64n8k16, 4 accumulators a thread), 16 stages of 8 + 1 KiB, no cluster. 16x4096x4096: 128
// tiles, each over the whole K, none shared by stream-K (128 units on 132 SMs).
TEST_F(Sm90Catalog, SixtyFourByEightTilesRunAFewRowProblemSwapped) {
  const sm90::Knobs& e = sm90::kTileRungs[5].knobs;
  ASSERT_EQ(sm90::kTileRungs[5].id, "T64eS");
  EXPECT_EQ(e.block_m, 64);
  EXPECT_EQ(e.block_n, 8);
  EXPECT_EQ(e.stages, 16);
  EXPECT_TRUE(e.store_transposed);
  EXPECT_EQ(e.Ctas(), 1);
  EXPECT_EQ(sm90::Accumulators(e), 4);
  EXPECT_EQ(sm90::StageBytes(e), 8192 + 1024);
  EXPECT_EQ(sm90::SmemBytes(e), 16 * 9216 + 1024 + 2 * 8 * 16);
  const Problem p{16, 4096, 4096, DType::kBF16};
  ExpectOneRoundOfWholeTiles(e, sm90::SwappedProblem(p), 128);
  ExpectSwappedFewRowEntry("sm90_h12_rows64_n8_swapped", 8, p, {8, 14336, 4096, DType::kBF16});
}

// The 64x64 build without clusters (kTileRungs[6]): the same tiles and stages, no B multicast.
// 128x4096x4096: 128 CTAs, one a tile over the whole K, where the clustered build's 64 units of
// 2x1 tiles go to 64 clusters of 66.
TEST_F(Sm90Catalog, SixtyFourBySixtyFourTilesRunWithoutClusters) {
  const sm90::Knobs& n64 = sm90::kTileRungs[3].knobs;
  const sm90::Knobs& u = sm90::kTileRungs[6].knobs;
  ASSERT_EQ(sm90::kTileRungs[6].id, "T64nU");
  EXPECT_EQ(std::tie(u.block_m, u.block_n, u.stages, u.epilogue),
            std::tie(n64.block_m, n64.block_n, n64.stages, n64.epilogue));
  EXPECT_EQ(n64.Ctas(), 2);
  EXPECT_EQ(u.Ctas(), 1);
  EXPECT_FALSE(u.clusters_where_shared);
  const Residency h200{132, 66};
  const Problem p{128, 4096, 4096, DType::kBF16};
  ExpectOneRoundOfWholeTiles(u, p, 128);
  const sm90::LaunchPlan clustered = sm90::PlanLaunch(n64, p, h200);
  EXPECT_EQ(clustered.grid.units, 64);
  EXPECT_EQ(clustered.grid.ctas, 128);
  const Variant& v = Get("sm90_h12_rows64_n64_unclustered");
  EXPECT_EQ(v.tile.n, 64);
  EXPECT_EQ(v.can_implement(p), "");
}

// The 64x8 build (kTileRungs[7]): a few-column problem on 64x8 tiles, unswapped (C stored by
// 4-byte stores), otherwise the swapped build's knobs. 4096x16x4096: 128 tiles over the whole K.
TEST_F(Sm90Catalog, SixtyFourByEightTilesRunAFewColumnProblem) {
  const sm90::Knobs& e = sm90::kTileRungs[7].knobs;
  const sm90::Knobs& es = sm90::kTileRungs[5].knobs;
  ASSERT_EQ(sm90::kTileRungs[7].id, "T64e");
  EXPECT_FALSE(e.store_transposed);
  EXPECT_EQ(sm90::With(e, [](sm90::Knobs& k) { k.store_transposed = true; }), es);
  EXPECT_EQ(sm90::Accumulators(e), 4);
  const Residency h200{132, 66};
  const Problem p{4096, 16, 4096, DType::kBF16};
  ExpectOneRoundOfWholeTiles(e, p, 128);
  const Variant& v = Get("sm90_h12_rows64_n8");
  EXPECT_EQ(v.tile.n, 8);
  EXPECT_EQ(v.can_implement(p), "");
  EXPECT_EQ(v.can_implement({14336, 16, 4096, DType::kBF16}), "");
  // One column: the guarded build (B's one row padded), as every tile build off its tile.
  EXPECT_EQ(v.can_implement({4096, 1, 4096, DType::kBF16}), "");
  EXPECT_TRUE(sm90::PlanLaunch(e, {4096, 1, 4096, DType::kBF16}, h200).guarded);
}

// The 128x16 swapped build (kTileRungs[8]): H12's two consumer warpgroups on 128 of B's rows by
// 16 of A's (wgmma m64n16k16, 8 accumulators a thread), 12 stages of 16 + 2 KiB, no cluster, C
// stored transposed. 16x14336x4096: 112 tiles over the whole K, one round on 112 of 132 SMs.
TEST_F(Sm90Catalog, OneHundredTwentyEightBySixteenTilesRunAFewRowProblemSwapped) {
  const sm90::Knobs& s = sm90::kTileRungs[8].knobs;
  ASSERT_EQ(sm90::kTileRungs[8].id, "T128sS");
  EXPECT_EQ(std::tie(s.block_m, s.block_n, s.stages), std::make_tuple(sm90::kBlockM, 16, 12));
  EXPECT_EQ(s.Threads(), 384);
  EXPECT_TRUE(s.store_transposed);
  EXPECT_EQ(s.Ctas(), 1);
  EXPECT_EQ(sm90::Accumulators(s), 8);
  EXPECT_EQ(sm90::StageBytes(s), 16384 + 2048);
  EXPECT_LE(sm90::SmemBytes(s), 227 * 1024);
  const Problem p{16, 14336, 4096, DType::kBF16};
  ExpectOneRoundOfWholeTiles(s, sm90::SwappedProblem(p), 112);
  ExpectSwappedFewRowEntry("sm90_h12_n16_swapped", 16, p, {8, 4096, 4096, DType::kBF16});
  // 16x4096x4096: 32 tiles, a round a quarter full, shared along K by stream-K.
  const sm90::LaunchPlan few =
      sm90::PlanLaunch(s, sm90::SwappedProblem({16, 4096, 4096, DType::kBF16}), Residency{132, 66});
  EXPECT_EQ(few.grid.units, 32);
  EXPECT_GT(few.grid.sk.sk_clusters, 0u);
}

// The 128x128 build (kTileRungs[9]): H12's two consumer warpgroups on 128x128 tiles (wgmma
// m64n128k16, 64 accumulators a thread), 7 stages of 16 + 16 KiB, no cluster, the 16-byte
// stores. 128x14336x4096: 112 tiles over the whole K, one round.
TEST_F(Sm90Catalog, OneHundredTwentyEightSquareTilesRunOneRoundAt128Rows) {
  const sm90::Knobs& h = sm90::kTileRungs[9].knobs;
  ASSERT_EQ(sm90::kTileRungs[9].id, "T128h");
  EXPECT_EQ(std::tie(h.block_m, h.block_n, h.stages), std::make_tuple(sm90::kBlockM, 128, 7));
  EXPECT_FALSE(h.store_transposed);
  EXPECT_EQ(h.epilogue, sm90::Epilogue::kWide);
  EXPECT_EQ(h.Ctas(), 1);
  EXPECT_EQ(sm90::Accumulators(h), 64);
  EXPECT_EQ(sm90::StageBytes(h), 2 * 16384);
  EXPECT_LE(sm90::SmemBytes(h), 227 * 1024);
  const Problem p{128, 14336, 4096, DType::kBF16};
  ExpectOneRoundOfWholeTiles(h, p, 112);
  EXPECT_EQ(Get("sm90_h12_n128").tile.n, 128);
  for (const Problem& q :
       {p, Problem{4096, 4096, 4096, DType::kBF16}, Problem{128, 4104, 4096, DType::kBF16}})
    EXPECT_EQ(Get("sm90_h12_n128").can_implement(q), "") << q.m << "x" << q.n;
  // Off the tile (N not a multiple of 128): the guarded build.
  EXPECT_TRUE(sm90::PlanLaunch(h, {128, 4104, 4096, DType::kBF16}, Residency{132, 66}).guarded);
}

// The 128x128 build in 1x2 clusters (kTileRungs[10]): two CTAs along N share their A tile through
// multicast, each loading half of it (64 rows). 128x14336x4096: 56 units of two tiles on 112 CTAs,
// one round, nothing shared by stream-K; the clusters are kept (not a fitted grid's drop).
TEST_F(Sm90Catalog, OneHundredTwentyEightSquareTilesShareAAlongN) {
  const sm90::Knobs& h = sm90::kTileRungs[9].knobs;
  const sm90::Knobs& a = sm90::kTileRungs[10].knobs;
  ASSERT_EQ(sm90::kTileRungs[10].id, "T128hA");
  EXPECT_EQ(sm90::With(h, [](sm90::Knobs& k) { k.cluster_n = 2; }), a);
  EXPECT_EQ(std::make_tuple(a.cluster_m, a.cluster_n, a.Ctas()), std::make_tuple(1, 2, 2));
  const Problem p{128, 14336, 4096, DType::kBF16};
  const sm90::LaunchPlan plan = sm90::PlanLaunch(a, p, Residency{132, 66});
  EXPECT_FALSE(plan.guarded);
  EXPECT_FALSE(plan.grid.clusters_dropped);
  EXPECT_EQ(plan.grid.units, 56);
  EXPECT_EQ(plan.grid.ctas, 112);
  EXPECT_EQ(plan.grid.sk.sk_clusters, 0u);
  EXPECT_EQ(Get("sm90_h12_n128_shared_a").can_implement(p), "");
  // N a multiple of 128 but not of a pair's 256: the guarded build.
  EXPECT_TRUE(sm90::PlanLaunch(a, {128, 4224, 4096, DType::kBF16}, Residency{132, 66}).guarded);
}

// The 192x128 swapped build (kTileRungs[11]): three consumer warpgroups (wgmma m64n128k16, 64
// accumulators a thread) on 192 of B's rows by 128 of A's, 5 stages of 24 + 16 KiB, no cluster,
// C stored transposed; the consumers ask for 152 registers where two or one ask for 232.
// 128x14336x4096: 75 tiles (14336 rows are not whole tiles of 192: guarded), a round 57% full,
// which H12's stream-K shares among all 132 SMs (64 k-tiles a unit, 4800 in ranges of about 36).
TEST_F(Sm90Catalog, OneHundredNinetyTwoRowTilesRunA128RowProblemSwappedOnEverySm) {
  const sm90::Knobs& t = sm90::kTileRungs[11].knobs;
  ASSERT_EQ(sm90::kTileRungs[11].id, "T192hS");
  EXPECT_EQ(std::tie(t.block_m, t.block_n, t.stages), std::make_tuple(192, 128, 5));
  EXPECT_EQ(t.Threads(), 512);
  EXPECT_EQ(sm90::ConsumerWarpgroups(t), 3);
  EXPECT_EQ(sm90::ConsumerRegisters(t), 152);
  EXPECT_LE(sm90::kProducerRegisters * 128 + sm90::ConsumerRegisters(t) * 384, 65536);
  EXPECT_EQ(sm90::ConsumerRegisters(sm90::kTileRungs[9].knobs), 232);  // 128x128: as H12
  EXPECT_EQ(sm90::ConsumerRegisters(sm90::kTileRungs[0].knobs), 232);  // 64x256
  EXPECT_TRUE(t.store_transposed);
  EXPECT_EQ(t.epilogue, sm90::Epilogue::kWide);
  EXPECT_EQ(t.Ctas(), 1);
  EXPECT_EQ(sm90::Accumulators(t), 64);
  EXPECT_EQ(sm90::StageBytes(t), 24576 + 16384);
  EXPECT_LE(sm90::SmemBytes(t), 227 * 1024);
  // The 128x128 build's knobs but the rows, the stages and the transposed stores.
  const sm90::Knobs& h = sm90::kTileRungs[9].knobs;
  EXPECT_EQ(sm90::With(h,
                       [](sm90::Knobs& k) {
                         k.block_m = 192;
                         k.stages = 5;
                         k.store_transposed = true;
                       }),
            t);
  const Problem p{128, 14336, 4096, DType::kBF16};
  const sm90::LaunchPlan plan = sm90::PlanLaunch(t, sm90::SwappedProblem(p), Residency{132, 66});
  EXPECT_TRUE(plan.guarded);
  EXPECT_EQ(plan.grid.units, 75);
  EXPECT_EQ(plan.grid.ctas, 132);
  EXPECT_EQ(plan.grid.sk.dp_units, 0);
  EXPECT_EQ(plan.grid.sk.sk_clusters, 132u);
  EXPECT_EQ(plan.grid.sk.sk_iters, 75u * 64);
  // On the tile: 13824 of N is 72 tiles of 192.
  EXPECT_FALSE(sm90::PlanLaunch(t, sm90::SwappedProblem({128, 13824, 4096, DType::kBF16}),
                                Residency{132, 66})
                   .guarded);
  ExpectSwappedFewRowEntry("sm90_h12_m192_n128_swapped", 128, p, {8, 4096, 4096, DType::kBF16});
  EXPECT_EQ(Get("sm90_h12_m192_n128_swapped").tile.m, 192);
}

// The 192x128 swapped tiles in 4x1 clusters (kTileRungs[12]): the 192x128 build with four CTAs
// along M sharing B (each multicasting a quarter of it: 32 rows, whole swizzle atoms), one unit per
// cluster, data-parallel. 128x14336x4096: 75 tiles in 19 units of four (the last unit's fourth
// tile past the rows), 76 CTAs, nothing shared along K and no workspace; a device's residency
// changes nothing (no persistent grid).
TEST_F(Sm90Catalog, OneHundredNinetyTwoRowTilesInFourCtaClustersShareBWithoutStreamK) {
  const sm90::Knobs& s = sm90::kTileRungs[11].knobs;
  const sm90::Knobs& q = sm90::kTileRungs[12].knobs;
  ASSERT_EQ(sm90::kTileRungs[12].id, "T192hQ");
  EXPECT_EQ(sm90::With(s,
                       [](sm90::Knobs& k) {
                         k.cluster_m = 4;
                         k.persistent = false;
                         k.stream_k = false;
                         k.fit_grid = false;
                       }),
            q);
  EXPECT_EQ(std::make_tuple(q.cluster_m, q.cluster_n, q.Ctas()), std::make_tuple(4, 1, 4));
  EXPECT_EQ(sm90::SmemBytes(q), sm90::SmemBytes(s));
  EXPECT_EQ(q.Threads(), 512);
  EXPECT_EQ(sm90::BTileBytes(q) / 4 % 1024, 0);  // a quarter of B: whole 1 KiB swizzle spans
  const Problem p{128, 14336, 4096, DType::kBF16};
  for (const Residency& device : {Residency{132, 66}, Residency{}}) {
    const sm90::LaunchPlan plan = sm90::PlanLaunch(q, sm90::SwappedProblem(p), device);
    EXPECT_TRUE(plan.guarded);  // 14336 rows are not whole units of 768
    EXPECT_FALSE(plan.grid.clusters_dropped);
    EXPECT_EQ(plan.grid.units, 19);
    EXPECT_EQ(plan.grid.ctas, 76);
    EXPECT_EQ(plan.grid.Clusters(), 19);
    EXPECT_EQ(plan.grid.sk.sk_clusters, 0u);
    EXPECT_EQ(plan.grid.partial_bytes, 0);
    EXPECT_EQ(sm90::DescribeLaunch(plan),
              "guarded build; 76 CTAs in 19 clusters of 4, one per unit");
  }
  // On the tile: 13824 of N is 18 units of 4 x 192 rows.
  const sm90::LaunchPlan on = sm90::PlanLaunch(
      q, sm90::SwappedProblem({128, 13824, 4096, DType::kBF16}), Residency{132, 66});
  EXPECT_FALSE(on.guarded);
  EXPECT_EQ(on.grid.ctas, 72);
  EXPECT_EQ(Param(Get("sm90_h12_m192_n128_quads"), "cluster_m"), "4");
  EXPECT_EQ(Param(Get("sm90_h12_m192_n128_quads"), "schedule"), "static");
  EXPECT_EQ(Param(Get("sm90_h12_m192_n128_quads"), "grid"), "one_per_unit");
  ExpectSwappedFewRowEntry("sm90_h12_m192_n128_quads", 128, p, {8, 4096, 4096, DType::kBF16});
}

// The 64x8 builds in 1x2 clusters (kTileRungs[13], [14]): the 64x8 builds with the two CTAs of
// 16 columns sharing A (each loading 32 of its 64 rows into both). 4096x16x14336 and, swapped,
// 16x4096x14336: 64 units of two tiles, 128 CTAs each over the whole K (the last round more than
// 3/4 full: nothing shared by stream-K), on the tile; 24 columns are guarded.
TEST_F(Sm90Catalog, SixtyFourByEightTilesInPairsShareA) {
  for (const auto& [own, pair, id] : {std::tuple{5, 14, "T64eSP"}, std::tuple{7, 13, "T64eP"}}) {
    const sm90::Knobs& e = sm90::kTileRungs[size_t(own)].knobs;
    const sm90::Knobs& p = sm90::kTileRungs[size_t(pair)].knobs;
    ASSERT_EQ(sm90::kTileRungs[size_t(pair)].id, id);
    sm90::Knobs paired = e;  // the unpaired build with its pairs: the one change
    paired.cluster_n = 2;
    EXPECT_EQ(paired, p) << id;
    EXPECT_EQ(std::make_tuple(p.cluster_m, p.cluster_n, p.Ctas()), std::make_tuple(1, 2, 2));
    EXPECT_EQ(sm90::ATileBytes(p) / 2 % 1024, 0);  // half of A: whole 1 KiB swizzle spans
    const Problem kernel{4096, 16, 14336, DType::kBF16};
    const sm90::LaunchPlan plan = sm90::PlanLaunch(p, kernel, Residency{132, 66});
    EXPECT_FALSE(plan.guarded) << id;
    EXPECT_FALSE(plan.grid.clusters_dropped);
    EXPECT_EQ(plan.grid.units, 64);
    EXPECT_EQ(plan.grid.ctas, 128);
    EXPECT_EQ(plan.grid.Clusters(), 64);
    EXPECT_EQ(plan.grid.sk.sk_clusters, 0u);
    EXPECT_TRUE(sm90::PlanLaunch(p, {4096, 24, 14336, DType::kBF16}, Residency{132, 66}).guarded);
  }
  ExpectSwappedFewRowEntry("sm90_h12_rows64_n8_swapped_pairs", 8, {16, 4096, 14336, DType::kBF16},
                           {8, 4096, 4096, DType::kBF16});
  EXPECT_EQ(Get("sm90_h12_rows64_n8_pairs").can_implement({4096, 16, 14336, DType::kBF16}), "");
  EXPECT_EQ(Param(Get("sm90_h12_rows64_n8_pairs"), "cluster_n"), "2");
}

// The 128x112 build (kTileRungs[15]): the 128x128 build with 112 columns (wgmma m64n112k16, 56
// accumulators a thread; a stage 16 + 14 KiB, a whole number of 1 KiB swizzle repeats).
// 128x14336x4096: 128 tiles over the whole K, one round on 128 of 132 SMs (the 128x128 build:
// 112), nothing for stream-K to share; off the tile (4096 columns are 36.6 tiles) the guarded
// build.
TEST_F(Sm90Catalog, OneHundredTwelveColumnTilesRunOneRoundOnMoreSmsAt128Rows) {
  const sm90::Knobs& h = sm90::kTileRungs[9].knobs;
  const sm90::Knobs& t = sm90::kTileRungs[15].knobs;
  ASSERT_EQ(sm90::kTileRungs[15].id, "T128x112");
  EXPECT_EQ(sm90::With(h, [](sm90::Knobs& k) { k.block_n = 112; }), t);
  EXPECT_EQ(sm90::Accumulators(t), 56);
  EXPECT_EQ(sm90::StageBytes(t), 16384 + 14336);
  EXPECT_EQ(sm90::StageBytes(t) % 1024, 0);
  EXPECT_LE(sm90::SmemBytes(t), 227 * 1024);
  EXPECT_EQ(t.Ctas(), 1);
  const Problem p{128, 14336, 4096, DType::kBF16};
  ExpectOneRoundOfWholeTiles(t, p, 128);
  ExpectOneRoundOfWholeTiles(h, p, 112);
  EXPECT_EQ(Get("sm90_h12_n112").tile.n, 112);
  for (const Problem& q :
       {p, Problem{128, 4096, 4096, DType::kBF16}, Problem{200, 1000, 300, DType::kBF16}})
    EXPECT_EQ(Get("sm90_h12_n112").can_implement(q), "") << q.m << "x" << q.n;
  EXPECT_TRUE(sm90::PlanLaunch(t, {128, 4096, 4096, DType::kBF16}, Residency{132, 66}).guarded);
  EXPECT_FALSE(sm90::PlanLaunch(t, {256, 1792, 64, DType::kBF16}, Residency{132, 66}).guarded);
}

// The swapped few-row builds on every SM: the 128x16 swapped build (kTileRungs[16]) and the 64x8
// one (kTileRungs[19]) with stream-K sharing a last round however full, each its base's kernel.
// 16x14336x4096 (swapped: 14336x16) on 128x16 tiles: 112 units, none whole (fewer than the 132
// CTAs), 7,168 k-tiles in 132 ranges, one a CTA, where the base runs 112 CTAs over the whole K;
// 16x4096x4096 on 64x8 tiles: 128 units, 8,192 k-tiles, where the base runs 128. Off those shapes
// each plans as its base does where the base shares too (a quarter of the shape's rows).
TEST_F(Sm90Catalog, SwappedFewRowTilesShareKOnEverySm) {
  struct Case {
    size_t rung, base;
    std::string_view id, name;
    int tile_n;
    Problem shape;
    int units;
  };
  for (const Case& c : {Case{16, 8, "T128sSk", "sm90_h12_n16_swapped_all_sms", 16,
                             Problem{16, 14336, 4096, DType::kBF16}, 112},
                        Case{19, 5, "T64eSk", "sm90_h12_rows64_n8_swapped_all_sms", 8,
                             Problem{16, 4096, 4096, DType::kBF16}, 128}}) {
    const sm90::Knobs& base = sm90::kTileRungs[c.base].knobs;
    const sm90::Knobs& a = sm90::kTileRungs[c.rung].knobs;
    ExpectOnEverySmOf(c.rung, c.id, c.base);
    const Problem p = sm90::SwappedProblem(c.shape);
    ExpectOneRoundOfWholeTiles(base, p, c.units);
    ExpectSharedOnEverySm(a, p, c.units, 64u);
    ExpectSwappedFewRowEntry(c.name, c.tile_n, c.shape, {8, 14336, 4096, DType::kBF16});
    const Problem few = sm90::SwappedProblem({16, c.shape.n / 4, 4096, DType::kBF16});
    const uint32_t shared = sm90::PlanLaunch(base, few, Residency{132, 66}).grid.sk.sk_clusters;
    EXPECT_GT(shared, 0u) << c.id;
    EXPECT_EQ(sm90::PlanLaunch(a, few, Residency{132, 66}).grid.sk.sk_clusters, shared) << c.id;
  }
}

// The 128x128 build on every SM (kTileRungs[17]): the 128x128 build with stream-K sharing a last
// round however full, its kernel. 128x14336x4096: 112 units, none whole (fewer than the 132
// CTAs), 7,168 k-tiles in 132 ranges, one a CTA, 64 KiB partial sums; the 128x128 build runs 112
// CTAs over the whole K. Where that build shares too (128x4096x4096: 32 units) it plans alike.
TEST_F(Sm90Catalog, OneHundredTwentyEightSquareTilesShareKOnEverySm) {
  const sm90::Knobs& h = sm90::kTileRungs[9].knobs;
  const sm90::Knobs& a = sm90::kTileRungs[17].knobs;
  ExpectOnEverySmOf(17, "T128hk", 9);
  const Problem p{128, 14336, 4096, DType::kBF16};
  ExpectOneRoundOfWholeTiles(h, p, 112);
  const sm90::LaunchPlan plan = ExpectSharedOnEverySm(a, p, 112, 64u);
  EXPECT_GE(plan.grid.partial_bytes, int64_t(132) * 128 * 128 * 4);
  EXPECT_EQ(Get("sm90_h12_n128_all_sms").tile.n, 128);
  EXPECT_EQ(Get("sm90_h12_n128_all_sms").can_implement(p), "");
  const Problem square{128, 4096, 4096, DType::kBF16};
  const sm90::LaunchPlan shared = sm90::PlanLaunch(h, square, Residency{132, 66});
  EXPECT_GT(shared.grid.sk.sk_clusters, 0u);
  EXPECT_EQ(sm90::PlanLaunch(a, square, Residency{132, 66}).grid.sk.sk_clusters,
            shared.grid.sk.sk_clusters);
}

// The 64x64 tiles without clusters on every SM (kTileRungs[18]): that build with stream-K sharing
// a last round however full, its kernel. 128x4096x4096 and 128x4096x14336: 128 units, none whole
// (fewer than the 132 CTAs), their k-tiles in 132 ranges, one a CTA; the build itself runs 128
// CTAs over the whole K.
TEST_F(Sm90Catalog, SixtyFourBySixtyFourTilesShareKOnEverySm) {
  const sm90::Knobs& u = sm90::kTileRungs[6].knobs;
  const sm90::Knobs& a = sm90::kTileRungs[18].knobs;
  ExpectOnEverySmOf(18, "T64nUk", 6);
  for (const int64_t k : {4096, 14336}) {
    const Problem p{128, 4096, k, DType::kBF16};
    ExpectOneRoundOfWholeTiles(u, p, 128);
    const sm90::LaunchPlan plan = ExpectSharedOnEverySm(a, p, 128, uint32_t(k / 64));
    EXPECT_GE(plan.grid.partial_bytes, int64_t(132) * 64 * 64 * 4);
  }
  EXPECT_EQ(Get("sm90_h12_rows64_n64_unclustered_all_sms").tile.n, 64);
}

// The kernel a build is compiled as (KernelKnobs): its knobs less the two only the host's plan
// reads. Every rung of the ladders and every tile build keeps its own kernel, but the builds on
// every SM (ids ending in k: the 128x16 swapped, 128x128, 64x64 unclustered and 64x8 swapped
// tiles), which differ from the builds they change only in how full a last round stream-K shares,
// and so run those builds' kernels; a knob the kernel reads still parts two builds.
TEST_F(Sm90Catalog, BuildsThatDifferOnlyInTheHostsPlanShareOneKernel) {
  for (const sm90::Rung& r : sm90::kRungs) EXPECT_EQ(sm90::KernelKnobs(r.knobs), r.knobs) << r.name;
  for (const sm90::Rung& r : sm90::kFp8Rungs)
    EXPECT_EQ(sm90::KernelKnobs(r.knobs), r.knobs) << r.name;
  for (const sm90::Rung& r : sm90::kTileRungs) {
    if (r.id.ends_with("k") && r.id != "T64nUk" && r.id != "T64eSk" && r.id != "T128hk" &&
        r.id != "T128sSk")
      ADD_FAILURE() << r.name << ": a new build on every SM; name it here";
    if (r.id.ends_with("k")) continue;
    EXPECT_EQ(sm90::KernelKnobs(r.knobs), r.knobs) << r.name;
  }
  const sm90::Knobs& s = sm90::kTileRungs[8].knobs;
  const sm90::Knobs& a = sm90::kTileRungs[16].knobs;
  ASSERT_EQ(sm90::kTileRungs[16].id, "T128sSk");
  EXPECT_NE(a, s);
  EXPECT_EQ(sm90::KernelKnobs(a), s);
  ASSERT_EQ(sm90::kTileRungs[17].id, "T128hk");
  EXPECT_NE(sm90::kTileRungs[17].knobs, sm90::kTileRungs[9].knobs);
  EXPECT_EQ(sm90::KernelKnobs(sm90::kTileRungs[17].knobs), sm90::kTileRungs[9].knobs);
  constexpr sm90::Knobs h12 = sm90::rung_knobs::kH12;
  constexpr sm90::Knobs capped = sm90::With(h12, [](sm90::Knobs& k) { k.max_ctas = 128; });
  constexpr sm90::Knobs parts = sm90::With(h12, [](sm90::Knobs& k) { k.sk_parts = 4; });
  constexpr sm90::Knobs groups = sm90::With(h12, [](sm90::Knobs& k) { k.group_rows = 4; });
  EXPECT_NE(capped, h12);
  EXPECT_EQ(sm90::KernelKnobs(capped), h12);
  EXPECT_NE(sm90::KernelKnobs(parts), h12);
  EXPECT_NE(sm90::KernelKnobs(groups), h12);
}

// S4: S3 with the 64-row build where the few-row paths do not take a problem and it has at most
// 128 rows; above, H12. Its entry names both, and describes and sizes the launch that runs.
TEST_F(Sm90Catalog, S4RunsSixtyFourRowTilesUpTo128Rows) {
  const sm90::SmallRung& s4 = sm90::kSmallRungs[3];
  const sm90::SmallRung& s3 = sm90::kSmallRungs[2];
  ASSERT_EQ(s4.id, "S4");
  EXPECT_EQ(std::tie(s4.few_rows, s4.few_cols, s4.split, s4.base),
            std::tie(s3.few_rows, s3.few_cols, s3.split, s3.base));
  EXPECT_EQ(s4.tile_rows, 128);
  EXPECT_EQ(s3.tile_rows, 0);
  const Variant& v = Get("sm90_s4_rows64");
  const Variant& t64 = Get("sm90_h12_rows64");
  const Variant& h12 = Get("sm90_h12_fitted_unclustered");
  EXPECT_EQ(Param(v, "tile_base"), "sm90_h12_rows64");
  EXPECT_EQ(Param(v, "tile_rows"), "128");
  EXPECT_EQ(Param(Get("sm90_s3_split_k"), "tile_base"), "");
  const Residency none;
  for (int64_t m : {17, 64, 100, 128}) {
    const Problem p{m, 4096, 4096, DType::kBF16};
    EXPECT_EQ(v.build(p, none), "sm90_h12_rows64: " + t64.build(p, none)) << m;
    EXPECT_EQ(v.launch_at(p).threads, 256);
    EXPECT_EQ(v.launch_at(p).dynamic_smem_bytes, t64.smem_bytes);
  }
  for (const Problem& p :
       {Problem{129, 4096, 4096, DType::kBF16}, Problem{4096, 128, 4096, DType::kBF16}}) {
    EXPECT_EQ(v.build(p, none), h12.build(p, none)) << p.m;  // above 128 rows: H12
    EXPECT_EQ(v.launch_at(p).threads, h12.threads);
  }
  EXPECT_EQ(v.build({16, 4096, 4096, DType::kBF16}, none),
            Get("sm90_s3_split_k").build({16, 4096, 4096, DType::kBF16}, none));
  EXPECT_EQ(v.build({100, 16, 4096, DType::kBF16}, none),
            Get("sm90_s3_split_k").build({100, 16, 4096, DType::kBF16}, none));
  EXPECT_EQ(v.can_implement({100, 4096, 0, DType::kBF16}),
            t64.can_implement({100, 4096, 0, DType::kBF16}));
  EXPECT_NE(v.can_implement({100, 4096, 0, DType::kBF16}), "");
}

// S5: S4 with the shorter stream-K ranges of T64q where it runs 64-row tiles; the rest is S4's.
TEST_F(Sm90Catalog, S5RunsShorterRangesWhereS4RunsSixtyFourRowTiles) {
  const sm90::SmallRung& s5 = sm90::kSmallRungs[4];
  const sm90::SmallRung& s4 = sm90::kSmallRungs[3];
  ASSERT_EQ(s5.id, "S5");
  EXPECT_EQ(std::tie(s5.few_rows, s5.few_cols, s5.split, s5.base, s5.tile_rows),
            std::tie(s4.few_rows, s4.few_cols, s4.split, s4.base, s4.tile_rows));
  EXPECT_EQ(s5.tile_base, "sm90_h12_rows64_sk4");
  const Variant& v = Get("sm90_s5_short_ranges");
  const Residency h200{132, 66};
  const Problem decode{128, 4096, 4096, DType::kBF16};
  EXPECT_EQ(v.build(decode, h200),
            "sm90_h12_rows64_sk4: " + Get("sm90_h12_rows64_sk4").build(decode, h200));
  EXPECT_NE(v.build(decode, h200).find("shared by 60 clusters"), std::string::npos)
      << v.build(decode, h200);
  EXPECT_NE(Get("sm90_s4_rows64").build(decode, h200).find("shared by 31 clusters"),
            std::string::npos);
  for (const Problem& p :
       {Problem{16, 4096, 4096, DType::kBF16}, Problem{512, 4096, 4096, DType::kBF16}})
    EXPECT_EQ(v.build(p, h200), Get("sm90_s4_rows64").build(p, h200)) << p.m;
}

// S6: S5 with the tensor-core few-row kernel from 2 rows (swapped: 2 columns): 16 columns of C
// per block, K split among its 4 warps; one row stays on S5's CUDA-core kernel.
TEST_F(Sm90Catalog, S6RunsTwoToSixteenRowsOnTensorCores) {
  const sm90::SmallRung& s6 = sm90::kSmallRungs[5];
  const sm90::SmallRung& s5 = sm90::kSmallRungs[4];
  ASSERT_EQ(s6.id, "S6");
  EXPECT_EQ(std::tie(s6.few_rows, s6.few_cols, s6.split, s6.base, s6.tile_rows, s6.tile_base),
            std::tie(s5.few_rows, s5.few_cols, s5.split, s5.base, s5.tile_rows, s5.tile_base));
  EXPECT_EQ(s6.mma_from, 2);
  EXPECT_EQ(s5.mma_from, 0);
  for (Problem p : {Problem{2, 4096, 4096}, Problem{16, 14336, 4096}, Problem{5, 1001, 64},
                    Problem{4096, 16, 4096}, Problem{14336, 3, 4104}}) {
    p.dtype = DType::kBF16;
    const sm90::FewRowsPlan plan = sm90::PlanFewRows(p, s6, 0, 0);
    ASSERT_TRUE(plan.runs) << p.m << "x" << p.n;
    EXPECT_TRUE(plan.mma);
    EXPECT_EQ(plan.rows, 16);
    EXPECT_EQ(plan.cols, sm90::kMmaCols);
    EXPECT_EQ(plan.split, 4);
    EXPECT_EQ(plan.swapped, p.m > 16);
    const int64_t cols = plan.swapped ? p.m : p.n;
    EXPECT_EQ(plan.blocks, (cols + 15) / 16);
  }
  for (Problem p : {Problem{1, 4096, 4096}, Problem{4096, 1, 4096}}) {
    p.dtype = DType::kBF16;
    const sm90::FewRowsPlan a = sm90::PlanFewRows(p, s6, 0, 0), b = sm90::PlanFewRows(p, s5, 0, 0);
    EXPECT_FALSE(a.mma);
    EXPECT_EQ(std::tie(a.runs, a.rows, a.cols, a.split, a.blocks, a.swapped),
              std::tie(b.runs, b.rows, b.cols, b.split, b.blocks, b.swapped));
  }
  EXPECT_FALSE(sm90::PlanFewRows({16, 4096, 4100, DType::kBF16}, s6, 0, 0).runs);
  const Variant& v = Get("sm90_s6_few_rows_mma");
  const Residency none;
  EXPECT_EQ(v.build({16, 4096, 4096, DType::kBF16}, none),
            "few-row path on tensor cores (mma.sync m16n8k16): a build of 16 rows, 16 columns of C "
            "per block, K split 4 ways among its warps, 256 blocks of 128 threads");
  EXPECT_EQ(Param(v, "mma_from_rows"), "2");
  EXPECT_EQ(v.launch_at({16, 4096, 4096, DType::kBF16}).threads, 128);
  EXPECT_EQ(v.build({128, 4096, 4096, DType::kBF16}, none),
            Get("sm90_s5_short_ranges").build({128, 4096, 4096, DType::kBF16}, none));
}

// The swapped build (T64qS): T64q storing C transposed, given A and B swapped; its entry plans,
// describes and refuses the swapped problem, and M must be whole 16-byte chunks of C. S7 runs
// it past the few-row paths at most 128 columns of more rows (M a multiple of 8), S6's builds
// elsewhere.
TEST_F(Sm90Catalog, S7RunsFewColumnsSwappedOnTheTensorCoreTiles) {
  const sm90::Knobs& t64q = sm90::kTileRungs[1].knobs;
  const sm90::Knobs& swapped = sm90::kTileRungs[2].knobs;
  EXPECT_EQ(Changes(t64q, swapped), 1);
  EXPECT_TRUE(swapped.store_transposed);
  // Its stores are plain: no TMA-store buffers in its shared memory.
  EXPECT_FALSE(sm90::TmaStoresC(swapped));
  EXPECT_TRUE(sm90::TmaStoresC(t64q));
  EXPECT_EQ(sm90::SmemBytes(swapped), sm90::SmemBytes(t64q) - sm90::StoreBufferBytes(t64q));
  const Variant& t = Get("sm90_h12_rows64_sk4_swapped");
  EXPECT_EQ(Param(t, "operands"), "swapped");
  const Residency h200{132, 66};
  const Problem p{4096, 128, 4096, DType::kBF16};
  EXPECT_EQ(t.build(p, h200), "A and B swapped, C stored transposed: " +
                                  Get("sm90_h12_rows64_sk4").build({128, 4096, 4096}, h200));
  EXPECT_EQ(t.can_implement(p), "");
  EXPECT_NE(t.can_implement({4100, 128, 4096, DType::kBF16}).find("multiple of 8"),
            std::string::npos);
  EXPECT_EQ(t.scratch_bytes({4096, 128, 4100, DType::kBF16}),
            (std::vector<int64_t>{4096 * 4104 * 2, 128 * 4104 * 2, 0}));
  const sm90::SmallRung& s7 = sm90::kSmallRungs[6];
  ASSERT_EQ(s7.id, "S7");
  EXPECT_EQ(s7.swap_cols, 128);
  EXPECT_EQ(s7.swap_base, "sm90_h12_rows64_sk4_swapped");
  EXPECT_EQ(sm90::HopperFor(s7, p), s7.swap_base);
  EXPECT_EQ(sm90::HopperFor(s7, {4100, 128, 4096, DType::kBF16}), s7.base);  // M not of 8
  EXPECT_EQ(sm90::HopperFor(s7, {4096, 129, 4096, DType::kBF16}), s7.base);  // N over 128
  EXPECT_EQ(sm90::HopperFor(s7, {128, 64, 4096, DType::kBF16}), s7.swap_base);
  EXPECT_EQ(sm90::HopperFor(s7, {100, 4096, 4096, DType::kBF16}), s7.tile_base);
  EXPECT_EQ(sm90::HopperFor(sm90::kSmallRungs[5], p), sm90::kSmallRungs[5].base);
  const Variant& v = Get("sm90_s7_swap_tiles");
  EXPECT_EQ(v.build(p, h200), "sm90_h12_rows64_sk4_swapped: " + t.build(p, h200));
  EXPECT_EQ(v.launch_at(p).threads, 256);
  EXPECT_EQ(v.build({4096, 16, 4096, DType::kBF16}, h200),
            Get("sm90_s6_few_rows_mma").build({4096, 16, 4096, DType::kBF16}, h200));
  EXPECT_EQ(Param(v, "swap_cols"), "128");
}

// Whether two small rungs are alike but for their names and what they say they add.
bool AlikeButNamed(const sm90::SmallRung& a, const sm90::SmallRung& b) {
  return a.base == b.base && a.few_rows == b.few_rows && a.few_cols == b.few_cols &&
         a.split == b.split && a.tile_rows == b.tile_rows && a.tile_base == b.tile_base &&
         a.mma_from == b.mma_from && a.swap_cols == b.swap_cols && a.swap_base == b.swap_base &&
         a.mma_warps == b.mma_warps && a.mma_stages == b.mma_stages;
}

// The tensor-core few-row plan of rung `r` at `p` (16 rows of N columns, or N rows of 9 columns,
// swapped): `warps` warps a block splitting K, `blocks` blocks.
sm90::FewRowsPlan ExpectFewRowsMmaPlan(const sm90::SmallRung& r, const Problem& p, int warps,
                                       int64_t blocks) {
  const sm90::FewRowsPlan plan = sm90::PlanFewRows(p, r, 0, 0);
  const std::string at = std::string(r.id) + " " + std::to_string(p.m) + "x" + std::to_string(p.n);
  EXPECT_TRUE(plan.runs && plan.mma) << at;
  EXPECT_EQ(plan.split, warps) << at;
  EXPECT_EQ(plan.threads, 32 * warps) << at;
  EXPECT_EQ(plan.blocks, blocks) << at;
  EXPECT_EQ(plan.swapped, p.n == 9) << at;
  return plan;
}

TEST_F(Sm90Catalog, S9SplitsKDeeperOnTheTensorCorePathWhereItsGridIsSmall) {
  const sm90::SmallRung& s9 = sm90::kSmallRungs[7];
  const sm90::SmallRung& s7 = sm90::kSmallRungs[6];
  ASSERT_EQ(s9.id, "S9");
  EXPECT_EQ(s9.mma_warps, 16);
  EXPECT_EQ(s7.mma_warps, 4);
  // One change from S7: every other field alike.
  sm90::SmallRung same = s9;
  same.mma_warps = s7.mma_warps;
  EXPECT_TRUE(AlikeButNamed(same, s7));
  // Warps double while the grid has fewer than kMmaWarpsWanted: 256 blocks -> 16 warps, 896 ->
  // 8, 6250 -> 4; S7 keeps 4 everywhere; swapped alike; one row stays on the CUDA cores.
  const std::tuple<int64_t, int, int64_t> cases[] = {
      {4096, 16, 256}, {14336, 8, 896}, {100000, 4, 6250}, {1000, 16, 63}};
  for (const auto& [cols, warps, blocks] : cases) {
    for (const Problem& p :
         {Problem{16, cols, 4096, DType::kBF16}, Problem{cols, 9, 4096, DType::kBF16}}) {
      const sm90::FewRowsPlan plan = ExpectFewRowsMmaPlan(s9, p, warps, blocks);
      const sm90::FewRowsPlan before = sm90::PlanFewRows(p, s7, 0, 0);
      EXPECT_EQ(before.split, 4);
      EXPECT_EQ(before.threads, 128);
      EXPECT_EQ(before.blocks, plan.blocks);
    }
  }
  EXPECT_FALSE(sm90::PlanFewRows({1, 4096, 4096, DType::kBF16}, s9, 0, 0).mma);
  EXPECT_EQ(sm90::PlanFewRows({1, 4096, 4096, DType::kBF16}, s9, 0, 0).threads, 128);
  const Variant& v = Get("sm90_s9_deeper_split");
  const Residency h200{132, 66};
  const Problem p{16, 4096, 4096, DType::kBF16};
  EXPECT_EQ(v.launch_at(p).threads, 512);
  EXPECT_EQ(Get("sm90_s7_swap_tiles").launch_at(p).threads, 128);
  EXPECT_EQ(v.build(p, h200),
            "few-row path on tensor cores (mma.sync m16n8k16): a build of 16 rows, 16 columns of C "
            "per block, K split 16 ways among its warps, 256 blocks of 512 threads");
  EXPECT_EQ(Param(v, "mma_warps"), "16");
  EXPECT_EQ(Param(Get("sm90_s7_swap_tiles"), "mma_warps"), "");
  // Past the few-row paths, S7's builds.
  for (const Problem& q : {Problem{128, 4096, 4096, DType::kBF16},
                           Problem{4096, 128, 4096, DType::kBF16}, Problem{512, 512, 512}})
    EXPECT_EQ(sm90::HopperFor(s9, q), sm90::HopperFor(s7, q));
}

TEST_F(Sm90Catalog, S11FeedsTheTensorCorePathThroughARingOfCpAsyncStages) {
  const sm90::SmallRung& s11 = sm90::kSmallRungs[8];
  const sm90::SmallRung& s9 = sm90::kSmallRungs[7];
  ASSERT_EQ(s11.id, "S11");
  EXPECT_EQ(s11.mma_stages, 4);
  EXPECT_EQ(s9.mma_stages, 0);
  // One change from S9: every other field alike.
  sm90::SmallRung same = s11;
  same.mma_stages = s9.mma_stages;
  EXPECT_TRUE(AlikeButNamed(same, s9));
  // With the ring the warps double while the grid has fewer than 2048: 256 blocks -> 8 warps
  // (S9: 16), 896 -> 4 (S9: 8), 6250 -> 4, 63 -> 16; 2 KiB a warp and stage.
  const std::tuple<int64_t, int, int64_t, int> cases[] = {
      {4096, 8, 256, 16}, {14336, 4, 896, 8}, {100000, 4, 6250, 4}, {1000, 16, 63, 16}};
  for (const auto& [cols, warps, blocks, s9_warps] : cases) {
    for (const Problem& p :
         {Problem{16, cols, 4096, DType::kBF16}, Problem{cols, 9, 4096, DType::kBF16}}) {
      const sm90::FewRowsPlan plan = ExpectFewRowsMmaPlan(s11, p, warps, blocks);
      EXPECT_EQ(plan.stages, 4);
      EXPECT_EQ(plan.smem, warps * 4 * 2048) << cols;
      const sm90::FewRowsPlan before = sm90::PlanFewRows(p, s9, 0, 0);
      EXPECT_EQ(before.split, s9_warps) << cols;
      EXPECT_EQ(before.stages, 0);
      EXPECT_EQ(before.smem, 0);
      EXPECT_EQ(before.blocks, plan.blocks);
    }
  }
  EXPECT_EQ(sm90::kRingStepBytes, 2048);
  // One row stays on the CUDA cores, with no ring.
  const sm90::FewRowsPlan one = sm90::PlanFewRows({1, 4096, 4096, DType::kBF16}, s11, 0, 0);
  EXPECT_FALSE(one.mma);
  EXPECT_EQ(one.stages, 0);
  EXPECT_EQ(one.smem, 0);
  const Variant& v = Get("sm90_s11_ring");
  const Residency h200{132, 66};
  const Problem p{16, 4096, 4096, DType::kBF16};
  EXPECT_EQ(v.launch_at(p).threads, 256);
  EXPECT_EQ(v.launch_at(p).dynamic_smem_bytes, 65536);
  EXPECT_EQ(Get("sm90_s9_deeper_split").launch_at(p).dynamic_smem_bytes, 0);
  EXPECT_EQ(v.build(p, h200),
            "few-row path on tensor cores (mma.sync m16n8k16): a build of 16 rows, 16 columns of C "
            "per block, K split 8 ways among its warps, 256 blocks of 256 threads, B through a "
            "ring of 4 cp.async stages a warp (64 KiB of shared memory a block)");
  EXPECT_EQ(Param(v, "mma_stages"), "4");
  EXPECT_EQ(Param(v, "rung"), "S11");
  EXPECT_EQ(Param(Get("sm90_s9_deeper_split"), "mma_stages"), "");
  // Past the few-row paths, S9's builds.
  for (const Problem& q : {Problem{128, 4096, 4096, DType::kBF16},
                           Problem{4096, 128, 4096, DType::kBF16}, Problem{512, 512, 512}})
    EXPECT_EQ(sm90::HopperFor(s11, q), sm90::HopperFor(s9, q));
}

TEST_F(Sm90Catalog, Fp8LadderOneChangeEach) {
  int count = 0;
  for (const Variant& v : registry_.All()) count += v.family == "sm90" && v.Supports(DType::kFP8);
  EXPECT_EQ(count, int(sm90::kFp8Rungs.size()));
  EXPECT_EQ(Changes(sm90::rung_knobs::kH3, sm90::kFp8Rungs[0].knobs), 1);
  EXPECT_TRUE(sm90::kFp8Rungs[0].knobs.fp8);
  // The bf16 rung whose step each fp8 rung takes: H3, H4, H6, H7, H8, H9, H10, H11.
  const size_t kSameStep[] = {3, 4, 6, 7, 8, 9, 10, 11};
  ASSERT_EQ(std::size(kSameStep), sm90::kFp8Rungs.size());
  for (size_t i = 0; i < sm90::kFp8Rungs.size(); ++i) {
    const sm90::Rung& b = sm90::kFp8Rungs[i];
    EXPECT_EQ(b.knobs.cluster_m, 1) << b.name;
    sm90::Knobs bf16 = b.knobs;
    bf16.fp8 = false;
    bf16.cluster_m = sm90::kRungs[kSameStep[i]].knobs.cluster_m;
    EXPECT_EQ(bf16, sm90::kRungs[kSameStep[i]].knobs) << b.name;
    if (i == 0) continue;
    const sm90::Rung& a = sm90::kFp8Rungs[i - 1];
    EXPECT_EQ(Changes(a.knobs, b.knobs), 1) << a.name << " -> " << b.name;
  }
  const Variant& f8 = Get("sm90_fp8_f7_epilogue_overlap");
  EXPECT_EQ(f8.dtypes, std::vector<DType>{DType::kFP8});
  EXPECT_EQ(f8.tile.k, 128);
  EXPECT_EQ(f8.b_layout, BLayout::kNK);
  EXPECT_NE(f8.description.find("e4m3"), std::string::npos);
  EXPECT_EQ(f8.can_implement({4096, 4096, 4096, DType::kFP8}), "");
  EXPECT_EQ(f8.can_implement({7, 9, 13, DType::kFP8}), "");
  EXPECT_NE(f8.can_implement({4096, 4096, 4096, DType::kBF16}).find("dtype must be fp8"),
            std::string::npos);
  EXPECT_NE(Get("sm90_h10_epilogue_overlap")
                .can_implement({4096, 4096, 4096, DType::kFP8})
                .find("dtype must be bf16"),
            std::string::npos);
  const Variant& lt = Get("cublas_fp8");
  EXPECT_EQ(lt.dtypes, std::vector<DType>{DType::kFP8});
  EXPECT_EQ(lt.b_layout, BLayout::kNK);
  EXPECT_EQ(lt.can_implement({4096, 4096, 4096, DType::kFP8}), "");
  EXPECT_NE(lt.can_implement({64, 64, 40, DType::kFP8}).find("k must be a multiple of 16"),
            std::string::npos);
  EXPECT_NE(lt.can_implement({64, 60, 64, DType::kFP8}).find("n must be a multiple of 8"),
            std::string::npos);
}

// fp8 rows are 16-byte chunks of 16 elements and k-tiles 128 elements.
TEST_F(Sm90Catalog, Fp8ShapePlan) {
  const sm90::Knobs f8 = sm90::rung_knobs::kF7;
  auto plan = [&](int64_t m, int64_t n, int64_t k) {
    return sm90::PlanShape({m, n, k, DType::kFP8}, f8, 0, 0, 0);
  };
  EXPECT_TRUE(plan(4096, 4096, 4096).on_tile);
  EXPECT_FALSE(plan(4096, 4096, 4096 + 64).on_tile);  // a bf16 k-tile, half an fp8 one
  EXPECT_FALSE(plan(4096, 4096, 4096 + 64).Pads());
  EXPECT_FALSE(plan(4096, 4096, 4096 + 16).Pads());
  const sm90::ShapePlan padded = plan(4096, 4096, 4100);
  EXPECT_TRUE(padded.pad_a && padded.pad_b);
  EXPECT_EQ(padded.k, 4112);
  EXPECT_TRUE(plan(4096, 4095, 4096).pad_c);
  // bf16 keeps its own rules: K a multiple of 8 is a whole chunk there.
  EXPECT_FALSE(
      sm90::PlanShape({4096, 4096, 4104, DType::kBF16}, sm90::rung_knobs::kH10, 0, 0, 0).Pads());
  EXPECT_EQ(sm90::BlockK(f8), 128);
  EXPECT_EQ(sm90::BlockK(sm90::rung_knobs::kH10), 64);
}

TEST_F(Sm90Catalog, EntriesDescribeTheContract) {
  const Variant& m1 = Get("sm90_m1_mma");
  EXPECT_EQ(m1.dtypes, std::vector<DType>{DType::kBF16});
  EXPECT_EQ(m1.b_layout, BLayout::kNK);
  EXPECT_EQ(m1.threads, 256);
  EXPECT_EQ(m1.tile.m, 128);
  EXPECT_EQ(m1.tile.n, 256);
  EXPECT_EQ(m1.tile.k, 64);
  EXPECT_FALSE(m1.bit_exact_family);
  EXPECT_EQ(Param(m1, "mainloop"), "mma.sync+cp.async");
  EXPECT_EQ(Param(m1, "arch"), "sm_90a");
  const Variant& h3 = Get("sm90_h3_ws");
  EXPECT_EQ(h3.threads, 384);
  EXPECT_EQ(Param(h3, "warp_specialized"), "1");
  EXPECT_NE(h3.description.find("not bit-identical"), std::string::npos);
  EXPECT_NE(h3.description.find("compute capability 9.0"), std::string::npos);
  const Variant& h6 = Get("sm90_h7_l2order");
  EXPECT_EQ(Param(h6, "cluster_m"), "2");
  EXPECT_EQ(Param(h6, "tile_order"), "grouped8");
  EXPECT_EQ(Param(h6, "pending"), "1");
  // Four stages of A 128x64 and B 256x64 bf16 fit Hopper's 227 KiB with the alignment slack.
  EXPECT_EQ(h6.smem_bytes, 4 * (16384 + 32768) + 1024 + 64);
  EXPECT_LE(h6.smem_bytes, 227 * 1024);
  // The TMA-store epilogue adds two 8 KiB chunk buffers per consumer warpgroup, still within.
  const Variant& h9 = Get("sm90_h8_tma_store");
  EXPECT_EQ(Param(h9, "epilogue"), "tma_store");
  EXPECT_EQ(h9.smem_bytes, h6.smem_bytes + 32768);
  EXPECT_LE(h9.smem_bytes, 227 * 1024);
  const Variant& sk = Get("sm90_h9_stream_k");
  EXPECT_EQ(Param(sk, "schedule"), "stream_k");
  EXPECT_EQ(Param(h9, "schedule"), "static");
  EXPECT_NE(sk.description.find("repeats bit for bit"), std::string::npos);
  EXPECT_EQ(Param(sk, "epilogue_overlap"), "none");
  // The last rung keeps H9's schedule and shared memory: the held tile lives in registers.
  const Variant& last = Get("sm90_h10_epilogue_overlap");
  EXPECT_EQ(Param(last, "epilogue_overlap"), "next_tile");
  EXPECT_EQ(Param(last, "schedule"), "stream_k");
  EXPECT_EQ(last.smem_bytes, sk.smem_bytes);
  EXPECT_EQ(last.threads, 384);
}

// The stream-K schedule, walked on the host as every cluster of the grid walks it: each k-tile of
// each unit is computed exactly once, a unit meets at most parts + 1 ranges (the partial slots
// the workspace has: 2, or 4 for the shorter ranges), its slots are numbered 0.. in k order and its
// last k-tiles' holder waits for exactly the slots before it, and no cluster works a segment that
// waits before one that others wait for (the fix-ups cannot deadlock).
TEST(Sm90StreamK, EveryKTileOnceAtMostTwoPartialsNoWaitBeforeASignal) {
  int planned_sk = 0;
  for (int parts : {2, 4})
    for (int quarters : {4, 3})
      for (int clusters : {1, 2, 7, 64, 66}) {
        for (int kt : {1, 2, 3, 5, 17, 31, 32, 64, 128}) {
          for (int units = 1; units <= 3 * clusters + 5; ++units) {
            SCOPED_TRACE(std::to_string(units) + " units, " + std::to_string(kt) + " k-tiles, " +
                         std::to_string(clusters) + " clusters, stream-K up to " +
                         std::to_string(quarters) + "/4 full, ranges over 1/" +
                         std::to_string(parts) + " unit");
            sm90::StreamKArgs sk;
            sm90::StreamKPlan(units, kt, clusters, &sk, quarters, parts);
            ASSERT_LE(sk.dp_units, units);
            // Left whole: nothing left over, a last round too full, or a lone round (fewer units
            // than clusters) too short along K.
            if (units % clusters == 0 || 4 * (units % clusters) > quarters * clusters ||
                (units < clusters && kt < sm90::kStreamKMinKTilesAlone)) {
              EXPECT_EQ(sk.sk_clusters, 0u);
              EXPECT_EQ(sk.dp_units, units);
            } else {
              EXPECT_EQ(sk.dp_units, units / clusters * clusters);
              EXPECT_GE(sk.sk_clusters, 1u);
              EXPECT_LE(sk.sk_clusters, uint32_t(clusters));
              EXPECT_EQ(sk.sk_iters, uint32_t((units - sk.dp_units) * kt));
              ++planned_sk;
            }
            sm90::Schedule s;
            s.kt_count = kt;
            s.clusters = clusters;
            s.dp_units = sk.dp_units;
            s.sk_clusters = sk.sk_clusters;
            s.sk_iters = sk.sk_iters;
            std::vector<int> covered(size_t(units) * kt, 0);
            for (int u = 0; u < sk.dp_units; ++u) {
              for (int k = 0; k < kt; ++k) ++covered[size_t(u) * kt + k];
            }
            // (stream-K unit) -> slots written, and the slot count its finaliser waits for
            std::map<int, std::set<int>> written;
            std::map<int, int> waits_for;
            for (int c = 0; c < clusters; ++c) {
              bool waited = false;
              sm90::SkSegment seg;
              for (int i = 0; sm90::SkSegmentAt(s, c, i, &seg); ++i) {
                ASSERT_LT(i, 3);
                ASSERT_EQ(seg.unit, sk.dp_units + seg.sku);
                ASSERT_LT(seg.unit, units);
                ASSERT_GE(seg.kb, 0);
                ASSERT_LT(seg.kb, seg.ke);
                ASSERT_LE(seg.ke, kt);
                for (int k = seg.kb; k < seg.ke; ++k) ++covered[size_t(seg.unit) * kt + k];
                const int slot = s.SlotOf(seg.sku, seg.kb);
                ASSERT_GE(slot, 0);
                if (seg.ke < kt) {
                  EXPECT_LE(slot, parts - 1) << "a partial past the workspace's slots";
                  EXPECT_FALSE(waited) << "cluster " << c << " signals after it waited";
                  EXPECT_TRUE(written[seg.sku].insert(slot).second) << "slot written twice";
                } else {
                  EXPECT_LE(slot, parts);
                  EXPECT_EQ(waits_for.count(seg.sku), 0u) << "two finalisers";
                  waits_for[seg.sku] = slot;
                  waited = waited || slot > 0;
                }
              }
            }
            for (size_t i = 0; i < covered.size(); ++i) {
              ASSERT_EQ(covered[i], 1) << "unit " << i / kt << " k-tile " << i % kt;
            }
            const int sk_units = units - sk.dp_units;
            EXPECT_EQ(int(waits_for.size()), sk_units);
            for (const auto& [sku, slots] : waits_for) {
              std::set<int> expect;
              for (int j = 0; j < slots; ++j) expect.insert(j);
              EXPECT_EQ(written[sku], expect) << "stream-K unit " << sku;
            }
          }
        }
      }
  EXPECT_GT(planned_sk, 100);
  // The shapes the ladder is measured at, on the 66 clusters of an H200: at 4096^3 the last round
  // has 58 of 256 units (too full to share: every unit whole); at 8192^3, 34 of 1024 (shared).
  sm90::StreamKArgs at4096, at8192;
  sm90::StreamKPlan(256, 64, 66, &at4096);
  EXPECT_EQ(at4096.dp_units, 256);
  EXPECT_EQ(at4096.sk_clusters, 0u);
  sm90::StreamKPlan(1024, 128, 66, &at8192);
  EXPECT_EQ(at8192.dp_units, 990);
  EXPECT_EQ(at8192.sk_clusters, 66u);
  EXPECT_EQ(at8192.sk_iters, 34u * 128);
  // Fewer units than clusters (a decode-sized M: 128x8192x8192 is 32 units of 2x1 clusters, 128
  // k-tiles each): one partial round, shared by 63 of the 66 clusters (ranges longer than half a
  // unit), where the grid once had only the 32 clusters the units filled.
  sm90::StreamKArgs decode;
  sm90::StreamKPlan(int(sm90::UnitsOf(sm90::rung_knobs::kH10, 128, 8192)), 128, 66, &decode);
  EXPECT_EQ(decode.dp_units, 0);
  EXPECT_EQ(decode.sk_clusters, 63u);
  EXPECT_EQ(decode.sk_iters, 32u * 128);
  // Alone (no whole round) and short along K, the units are not shared: 512x512x1024 is 4 units
  // of 16 k-tiles; 512x512x2048 (32 k-tiles) is.
  sm90::StreamKArgs short_k, long_k;
  sm90::StreamKPlan(4, 16, 66, &short_k);
  EXPECT_EQ(short_k.sk_clusters, 0u);
  EXPECT_EQ(short_k.dp_units, 4);
  sm90::StreamKPlan(4, 32, 66, &long_k);
  EXPECT_EQ(long_k.sk_clusters, 7u);
  EXPECT_EQ(long_k.dp_units, 0);
}

// H11 and F8 fit the persistent grid to its rounds when stream-K leaves the last round whole:
// the fewest clusters that take as many rounds, every round full.
TEST(Sm90FitGrid, TheFewestClustersThatTakeAsManyRounds) {
  // 4096^3 bf16: 256 units of 2x1 tiles on 66 clusters is 4 rounds (the last 58 units, left
  // whole by stream-K); 64 clusters take 4 full rounds.
  sm90::StreamKArgs sk;
  sm90::StreamKPlan(256, 64, 66, &sk);
  ASSERT_EQ(sk.sk_clusters, 0u);
  EXPECT_EQ(sm90::FitGridClusters(256, 66), 64);
  // 4096^3 fp8: 512 tiles on 132 CTAs, 4 rounds; 128 CTAs.
  EXPECT_EQ(sm90::FitGridClusters(512, 132), 128);
  // The rounds never grow, every cluster has work and the last round is short by fewer units
  // than there are rounds.
  for (int clusters = 1; clusters <= 140; ++clusters) {
    for (int units = 1; units <= 3000; units += 7) {
      const int fit = sm90::FitGridClusters(units, clusters);
      if (units <= clusters) {
        EXPECT_EQ(fit, clusters);  // left as it is (the launcher trims it to the units)
        continue;
      }
      const int rounds = (units + clusters - 1) / clusters;
      ASSERT_LE(fit, clusters);
      EXPECT_EQ((units + fit - 1) / fit, rounds) << units << " on " << clusters;
      EXPECT_GT(units, (rounds - 1) * fit) << units << " on " << clusters;
      EXPECT_LT(rounds * fit - units, rounds) << units << " on " << clusters;
      // Fewer clusters would take another round.
      if (fit > 1) EXPECT_GT((units + fit - 2) / (fit - 1), rounds) << units << " on " << clusters;
    }
  }
  // Whole rounds already: nothing changes (8192^3 fp8 on 128 CTAs: 2048 tiles, 16 rounds).
  EXPECT_EQ(sm90::FitGridClusters(2048, 128), 128);
  EXPECT_EQ(sm90::FitGridClusters(132 * 3, 132), 132);
  EXPECT_TRUE(sm90::rung_knobs::kH11.fit_grid && sm90::rung_knobs::kF8.fit_grid);
  EXPECT_FALSE(sm90::rung_knobs::kH10.fit_grid || sm90::rung_knobs::kF7.fit_grid);
}

// H12 runs without its clusters where the grid is fitted to its rounds, and keeps them where
// stream-K shares the last round or where there is one round only.
TEST(Sm90FitGrid, ClustersOnlyWhereTheLastRoundIsShared) {
  sm90::StreamKArgs sk;
  // 4096^3: 256 units of 2x1 tiles, 64 k-tiles, on 66 clusters: the last round (58) left whole.
  sm90::StreamKPlan(256, 64, 66, &sk);
  EXPECT_TRUE(sm90::RunsWithoutClusters(sk, 256, 66));
  // 8192^3: 1024 units, 128 k-tiles: the last round (34 of 66) shared along K.
  sm90::StreamKPlan(1024, 128, 66, &sk);
  ASSERT_GT(sk.sk_clusters, 0u);
  EXPECT_FALSE(sm90::RunsWithoutClusters(sk, 1024, 66));
  // Whole rounds: 132 units on 66 clusters, nothing shared, the grid fitted (it stays 66).
  sm90::StreamKPlan(132, 64, 66, &sk);
  EXPECT_TRUE(sm90::RunsWithoutClusters(sk, 132, 66));
  // One partial round, too short to share (4 units of 16 k-tiles): the clusters stay.
  sm90::StreamKPlan(4, 16, 66, &sk);
  ASSERT_EQ(sk.sk_clusters, 0u);
  EXPECT_FALSE(sm90::RunsWithoutClusters(sk, 4, 66));
  constexpr sm90::Knobs kBare = sm90::Unclustered(sm90::rung_knobs::kH12);
  EXPECT_EQ(kBare.Ctas(), 1);
  EXPECT_FALSE(kBare.clusters_where_shared);
  EXPECT_TRUE(kBare.fit_grid && kBare.stream_k && kBare.overlap_epilogue);
  EXPECT_EQ(Changes(kBare, sm90::rung_knobs::kH11), 1);  // H11 without clusters
}

// The host plan (sm90_plan.h) the launcher follows and the registry names: H12 at 4096^3 on an
// H200 (132 SMs, 66 pairs) runs without clusters, 128 single CTAs in 4 fitted rounds; at 8192^3
// it keeps its clusters and shares the last round along K.
TEST(Sm90Plan, TheLastRungsBuildAt4096AndAt8192) {
  const Residency h200{.sms = 132, .pair_clusters = 66};
  const sm90::GridPlan at4096 = sm90::PlanGrid(sm90::rung_knobs::kH12, {4096, 4096, 4096}, h200);
  EXPECT_TRUE(at4096.clusters_dropped);
  EXPECT_TRUE(at4096.build == sm90::Unclustered(sm90::rung_knobs::kH12));
  EXPECT_EQ(at4096.units, 512);
  EXPECT_EQ(at4096.ctas, 128);
  EXPECT_EQ(at4096.Rounds(), 4);
  EXPECT_TRUE(at4096.fitted);
  EXPECT_EQ(at4096.sk.sk_clusters, 0u);
  EXPECT_EQ(at4096.partial_bytes, 0);

  const sm90::GridPlan at8192 = sm90::PlanGrid(sm90::rung_knobs::kH12, {8192, 8192, 8192}, h200);
  EXPECT_FALSE(at8192.clusters_dropped);
  EXPECT_EQ(at8192.build.Ctas(), 2);
  EXPECT_EQ(at8192.ctas, 132);
  EXPECT_EQ(at8192.Clusters(), 66);
  EXPECT_EQ(at8192.sk.dp_units, 990);
  EXPECT_EQ(at8192.sk.sk_clusters, 66u);
  EXPECT_EQ(at8192.Rounds(), 15);
  EXPECT_FALSE(at8192.fitted);  // a shared last round keeps every cluster
  EXPECT_EQ(at8192.partial_bytes, 34 * 2 * sm90::PartialBytesPerCta(sm90::rung_knobs::kH12));
  EXPECT_EQ(sm90::PartialBytesPerCta(sm90::rung_knobs::kH12), 2 * 2 * 64 * 256 * 4);
  EXPECT_EQ(at8192.flags, 34 * 2 * 4);

  // H11 (clusters always) at 4096^3: its 66 clusters fitted to 64, 4 rounds.
  const sm90::GridPlan h11 = sm90::PlanGrid(sm90::rung_knobs::kH11, {4096, 4096, 4096}, h200);
  EXPECT_FALSE(h11.clusters_dropped);
  EXPECT_EQ(h11.ctas, 128);
  EXPECT_EQ(h11.Clusters(), 64);
  // An unknown device (no GPU): a cluster per unit, nothing fitted or dropped.
  const sm90::GridPlan unknown = sm90::PlanGrid(sm90::rung_knobs::kH12, {4096, 4096, 4096}, {});
  EXPECT_FALSE(unknown.clusters_dropped);
  EXPECT_EQ(unknown.ctas, 512);
}

// Over rungs, shapes and devices: what the launcher is handed is a grid it can launch.
TEST(Sm90Plan, EveryPlanIsALaunchableGrid) {
  std::vector<const sm90::Rung*> rungs;
  for (const sm90::Rung& r : sm90::kRungs) rungs.push_back(&r);
  for (const sm90::Rung& r : sm90::kFp8Rungs) rungs.push_back(&r);
  for (const sm90::Rung* r : rungs) {
    for (Residency device : {Residency{132, 66}, Residency{114, 57}, Residency{132, 60}}) {
      for (Problem p :
           {Problem{4096, 4096, 4096}, Problem{8192, 8192, 8192}, Problem{1, 1, 1},
            Problem{128, 8192, 8192}, Problem{4096, 4095, 4089}, Problem{512, 512, 2048}}) {
        p.dtype = sm90::RungDType(r->knobs);
        SCOPED_TRACE(std::string(r->id) + " " + std::to_string(p.m) + "x" + std::to_string(p.n) +
                     "x" + std::to_string(p.k));
        const sm90::LaunchPlan l = sm90::PlanLaunch(r->knobs, p, device);
        const sm90::GridPlan& g = l.grid;
        ASSERT_GT(g.ctas, 0);
        EXPECT_EQ(g.ctas % g.build.Ctas(), 0);
        EXPECT_EQ(g.build.guarded, l.guarded);
        if (g.build.persistent) {
          EXPECT_LE(g.Clusters(), g.build.Ctas() == 1 ? device.sms : device.pair_clusters);
        } else if (g.build.mainloop == sm90::Mainloop::kWgmma) {
          EXPECT_EQ(g.Clusters(), g.units);
        }
        EXPECT_TRUE(!g.clusters_dropped || r->knobs.clusters_where_shared);
        EXPECT_EQ(g.partial_bytes > 0, g.sk.sk_clusters > 0);
        if (g.sk.sk_clusters > 0) {
          EXPECT_LE(int(g.sk.sk_clusters), g.Clusters());
          EXPECT_LT(g.sk.dp_units, g.units);
        }
      }
    }
  }
}

// Off the tile the guarded build runs, on padded copies where TMA cannot address the rows; the
// grid is planned for the problem the kernel sees.
TEST(Sm90Plan, ShapesOffTheTileRunTheGuardedBuild) {
  const Residency h200{132, 66};
  sm90::LaunchPlan on = sm90::PlanLaunch(sm90::rung_knobs::kH10, {4096, 4096, 4096}, h200);
  EXPECT_FALSE(on.guarded);
  sm90::LaunchPlan off = sm90::PlanLaunch(sm90::rung_knobs::kH10, {4000, 4096, 4096}, h200);
  EXPECT_TRUE(off.guarded);
  EXPECT_TRUE(off.grid.build.guarded);
  EXPECT_FALSE(off.shape.Pads());
  sm90::LaunchPlan padded = sm90::PlanLaunch(sm90::rung_knobs::kH10, {4096, 4096, 4089}, h200);
  EXPECT_TRUE(padded.guarded && padded.shape.pad_a && padded.shape.pad_b);
  EXPECT_EQ(padded.seen.k, 4096);
}

// The catalog names the build that runs a problem on a device (what `variants --shape` and `sass
// --shape` print).
TEST_F(Sm90Catalog, NamesTheBuildThatRunsAProblem) {
  const Residency h200{132, 66};
  const Variant& h12 = Get("sm90_h12_fitted_unclustered");
  ASSERT_TRUE(h12.build);
  EXPECT_EQ(h12.build(Problem{4096, 4096, 4096}, h200),
            "own build; 128 CTAs without clusters (the rung's clusters dropped: the grid is "
            "fitted to its rounds), 4 rounds (fitted)");
  EXPECT_EQ(h12.build(Problem{8192, 8192, 8192}, h200),
            "own build; 132 CTAs in 66 clusters of 2, 15 rounds, stream-K: 990 units whole, the "
            "last 34 shared by 66 clusters");
  EXPECT_EQ(h12.build(Problem{4096, 4096, 4089}, {}),
            "guarded build on padded copies of A, B; a persistent grid of as many CTAs as the "
            "device holds (no device known here)");
  const Variant& m1 = Get(std::string(sm90::kRungs[0].name));
  EXPECT_EQ(m1.build(Problem{4096, 4096, 4096}, h200), "own build; 512 CTAs, one per unit");
}

// Every rung takes every bf16 shape cuBLAS takes; what it refuses names the field.
TEST_F(Sm90Catalog, TakesEveryShapeAndNamesWhatItRefuses) {
  for (const sm90::Rung& r : sm90::kRungs) {
    const Variant& v = Get(std::string(r.name));
    SCOPED_TRACE(v.name);
    for (Problem p : {Problem{4096, 4096, 4096}, Problem{128, 256, 64}, Problem{1, 1, 1},
                      Problem{4000, 4000, 4000}, Problem{4096, 4096, 4000},
                      Problem{128, 8192, 8192}, Problem{1, 4096, 4096}, Problem{4097, 4095, 4099},
                      Problem{384, 256, 64}, Problem{100, 200, 96}}) {
      p.dtype = DType::kBF16;
      EXPECT_EQ(v.can_implement(p), "") << p.m << "x" << p.n << "x" << p.k;
    }
    EXPECT_NE(v.can_implement({4096, 4096, 4096, DType::kFP16}).find("dtype must be bf16"),
              std::string::npos);
    EXPECT_NE(v.can_implement({0, 256, 64, DType::kBF16}).find("m must be positive"),
              std::string::npos);
    EXPECT_NE(v.can_implement({128, -1, 64, DType::kBF16}).find("n must be positive"),
              std::string::npos);
    EXPECT_NE(v.can_implement({128, 256, int64_t(1) << 31, DType::kBF16}).find("k must be at most"),
              std::string::npos);
  }
  EXPECT_NE(sm90::ShapeError({int64_t(1) << 30, int64_t(1) << 30, 64, DType::kBF16})
                .find("below 2^31 tiles"),
            std::string::npos);
}

uintptr_t Aligned(int i) { return uintptr_t(0x7f0000000000) + uintptr_t(i) * (uintptr_t(1) << 30); }

// How a launch runs a shape: the rung's own build on its tile, its guarded build off it, and
// padded rows where TMA cannot address the operands' rows.
TEST_F(Sm90Catalog, ShapePlanPicksTheBuildAndThePadding) {
  using sm90::PlanShape;
  const sm90::Knobs h10 = sm90::rung_knobs::kH10, h4 = sm90::rung_knobs::kH4,
                    m1 = sm90::rung_knobs::kM1, h1 = sm90::rung_knobs::kH1;
  const uintptr_t a = Aligned(0), b = Aligned(1), c = Aligned(2);
  auto plan = [&](const sm90::Knobs& k, int64_t m, int64_t n, int64_t kk, uintptr_t pa = 0,
                  uintptr_t pb = 0, uintptr_t pc = 0) {
    return PlanShape({m, n, kk, DType::kBF16}, k, pa ? pa : a, pb ? pb : b, pc ? pc : c);
  };
  // On the tile: the measured build, nothing padded. The cluster rungs' tile is two tiles tall.
  for (const sm90::Knobs& k : {h10, h4, m1, h1}) {
    const sm90::ShapePlan s = plan(k, 4096, 4096, 4096);
    EXPECT_TRUE(s.on_tile);
    EXPECT_FALSE(s.Pads());
    EXPECT_EQ(s.n, 4096);
    EXPECT_EQ(s.k, 4096);
  }
  EXPECT_TRUE(plan(h4, 128, 256, 64).on_tile);
  EXPECT_FALSE(plan(h10, 128, 256, 64).on_tile) << "2x1 clusters pair 128-row tiles";
  EXPECT_TRUE(plan(h10, 256, 256, 64).on_tile);
  // Off the tile, rows of whole 16-byte chunks: the guarded build on the caller's operands.
  for (auto [m, n, k] : {std::tuple{4000, 4000, 4000}, std::tuple{4096, 4096, 4000},
                         std::tuple{128, 8192, 8192}, std::tuple{1, 4096, 4096}}) {
    const sm90::ShapePlan s = plan(h10, m, n, k);
    EXPECT_FALSE(s.on_tile) << m << "x" << n << "x" << k;
    EXPECT_FALSE(s.Pads()) << m << "x" << n << "x" << k;
    EXPECT_EQ(s.n, n);
    EXPECT_EQ(s.k, k);
  }
  // K not a multiple of 8: A and B padded to the rounded K; N not: C padded, and B too for the
  // cp.async rung, which reads B's rows up to the kernel's N (TMA reads zeros past them).
  const sm90::ShapePlan ragged = plan(h10, 4097, 4095, 4099);
  EXPECT_TRUE(ragged.pad_a && ragged.pad_b && ragged.pad_c);
  EXPECT_EQ(ragged.k, 4104);
  EXPECT_EQ(ragged.n, 4096);
  const sm90::ShapePlan n_only = plan(h10, 4096, 4095, 4096);
  EXPECT_FALSE(n_only.pad_a || n_only.pad_b);
  EXPECT_TRUE(n_only.pad_c);
  EXPECT_EQ(n_only.k, 4096);
  const sm90::ShapePlan n_only_m1 = plan(m1, 4096, 4095, 4096);
  EXPECT_TRUE(n_only_m1.pad_b && n_only_m1.pad_c);
  EXPECT_FALSE(n_only_m1.pad_a);
  EXPECT_FALSE(plan(h1, 4096, 4095, 4096).pad_b) << "TMA reads zeros past B's rows";
  // A pointer TMA cannot take (not 16-byte aligned) pads that operand alone.
  const sm90::ShapePlan odd_a = plan(h10, 4096, 4096, 4096, a + 2);
  EXPECT_TRUE(odd_a.pad_a);
  EXPECT_FALSE(odd_a.pad_b || odd_a.pad_c || odd_a.on_tile);
  EXPECT_EQ(odd_a.k, 4096);
  EXPECT_TRUE(plan(h10, 4096, 4096, 4096, 0, 0, c + 8).pad_c);
  EXPECT_TRUE(plan(h10, 4096, 4096, 4096, 0, b + 4).pad_b);
}

// Off the tile, work units round up: the last row and column of units reach past the matrix.
TEST_F(Sm90Catalog, UnitsRoundUpOffTheTile) {
  EXPECT_EQ(sm90::UnitsOf(sm90::rung_knobs::kH10, 4096, 4096), 16 * 16);
  EXPECT_EQ(sm90::UnitsOf(sm90::rung_knobs::kH10, 4000, 4000), 16 * 16);
  EXPECT_EQ(sm90::UnitsOf(sm90::rung_knobs::kH10, 128, 8192), 1 * 32);
  EXPECT_EQ(sm90::UnitsOf(sm90::rung_knobs::kH4, 129, 257), 2 * 2);
  EXPECT_EQ(sm90::UnitsOf(sm90::rung_knobs::kH10, 1, 1), 1);
}

}  // namespace
}  // namespace ablation::kernels
