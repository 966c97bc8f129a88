// CPU tests of the small-shape ladder's per-bucket rungs (S8, S10, S12;
// kernels/sm90/sm90_buckets.h): the classes of a shape, a table's lookup, and the entry and launch
// of the build a bucket names (with a table of the test's own: the ones made from the evidence may
// name none).
#include <gtest/gtest.h>

#include <array>
#include <string>
#include <vector>

#include "kernels/registry.h"
#include "kernels/sm90/sm90_buckets.h"

namespace ablation::kernels {
namespace {

using sm90::BucketPick;
using sm90::BucketTable;

constexpr std::string_view kS7 = "sm90_s7_swap_tiles";

constexpr Problem Bf16(int64_t m, int64_t n, int64_t k) { return {m, n, k, DType::kBF16}; }

TEST(Sm90Buckets, ClassesAreTheFirstBoundAtOrAboveAndOneMorePastTheLast) {
  // (value, its class among M and N, its class among K)
  const std::array<std::array<int64_t, 3>, 11> cases = {{{1, 0, 0},
                                                         {2, 1, 0},
                                                         {16, 1, 0},
                                                         {17, 2, 0},
                                                         {128, 2, 0},
                                                         {512, 3, 0},
                                                         {513, 4, 0},
                                                         {4096, 4, 0},
                                                         {4097, 5, 1},
                                                         {16384, 5, 1},
                                                         {16385, 5, 2}}};
  for (const auto& [value, rows, depth] : cases) {
    EXPECT_EQ(sm90::BucketClass(value, sm90::kBucketRowBounds), rows) << value;
    EXPECT_EQ(sm90::BucketClass(value, sm90::kBucketDepthBounds), depth) << value;
  }
}

// The tool (tools/sm90_bucket_table.py) writes the same classes: its bounds are these.
TEST(Sm90Buckets, TheTableNamesBucketsTheDefaultElsewhere) {
  static constexpr std::array<BucketPick, 2> picks = {
      {{1, 4, 0, "sm90_h12_fitted_unclustered"}, {4, 1, 1, "sm90_s1_few_rows"}}};
  constexpr BucketTable table{"sm90_s8_test", "S8", kS7, picks};
  EXPECT_EQ(sm90::BucketVariantFor(Bf16(16, 4096, 4096), table), "sm90_h12_fitted_unclustered");
  EXPECT_EQ(sm90::BucketVariantFor(Bf16(2, 1024, 1024), table), "sm90_h12_fitted_unclustered");
  EXPECT_EQ(sm90::BucketVariantFor(Bf16(2, 14336, 1024), table), kS7);
  EXPECT_EQ(sm90::BucketVariantFor(Bf16(16, 4096, 4097), table), kS7);
  EXPECT_EQ(sm90::BucketVariantFor(Bf16(1, 4096, 4096), table), kS7);
  EXPECT_EQ(sm90::BucketVariantFor(Bf16(4096, 16, 14336), table), "sm90_s1_few_rows");
  EXPECT_EQ(sm90::BucketVariantFor(Bf16(16, 4096, 4096), BucketTable{"x", "S8", kS7, {}}), kS7);
}

// The tables in the tree: S8 over S7, S10 over S9 and S12 over S11; every pick names a registered
// build that is not a per-bucket rung, no bucket twice, classes within their bounds.
TEST(Sm90Buckets, TheTablesInTheTreeAreOverTheirRungsAndNameRegisteredBuilds) {
  ASSERT_EQ(sm90::kBucketTables.size(), 3u);
  EXPECT_EQ(sm90::kBucketTables[0].rung, "sm90_s8_buckets");
  EXPECT_EQ(sm90::kBucketTables[0].fallback, kS7);
  EXPECT_EQ(sm90::kBucketTables[1].rung, "sm90_s10_buckets");
  EXPECT_EQ(sm90::kBucketTables[1].fallback, "sm90_s9_deeper_split");
  EXPECT_EQ(sm90::kBucketTables[2].rung, "sm90_s12_buckets");
  EXPECT_EQ(sm90::kBucketTables[2].fallback, "sm90_s11_ring");
  Registry registry;
  RegisterCatalog(registry);
  for (const BucketTable& table : sm90::kBucketTables) {
    EXPECT_NE(registry.Find(table.rung), nullptr) << table.rung;
    for (size_t i = 0; i < table.picks.size(); ++i) {
      const BucketPick& a = table.picks[i];
      EXPECT_NE(registry.Find(a.variant), nullptr) << a.variant;
      for (const BucketTable& other : sm90::kBucketTables) EXPECT_NE(a.variant, other.rung);
      EXPECT_LE(a.m_class, int(sm90::kBucketRowBounds.size()));
      EXPECT_LE(a.n_class, int(sm90::kBucketRowBounds.size()));
      EXPECT_LE(a.k_class, int(sm90::kBucketDepthBounds.size()));
      for (size_t j = 0; j < i; ++j) {
        const BucketPick& b = table.picks[j];
        EXPECT_FALSE(a.m_class == b.m_class && a.n_class == b.n_class && a.k_class == b.k_class)
            << table.id << ": bucket " << a.m_class << a.n_class << a.k_class << " twice";
      }
    }
  }
}

class Sm90BucketRung : public ::testing::Test {
 protected:
  static constexpr std::array<BucketPick, 1> kPicks = {{{1, 4, 0, "sm90_h12_fitted_unclustered"}}};
  static constexpr std::string_view kName = "sm90_s8_test_table";
  static constexpr BucketTable kTable{kName, "S8", kS7, kPicks};
  void SetUp() override {
    RegisterCatalog(registry_);
    sm90::RegisterSm90BucketRung(registry_, kTable);
  }
  const Variant& Get(std::string_view name) {
    const Variant* v = registry_.Find(name);
    EXPECT_NE(v, nullptr) << name;
    return *v;
  }
  Registry registry_;
};

// Each rung of the tree's tables: its default's entry where its table names no build, the named
// build's where it does.
TEST_F(Sm90BucketRung, TheRegisteredRungsRunTheirDefaultWhereTheirTableNamesNoBuild) {
  const Residency h200{132, 66};
  const std::array<int64_t, 6> rows = {1, 16, 128, 512, 4096, 16384};
  const std::array<int64_t, 3> depth = {4096, 16384, 32768};
  for (const BucketTable& table : sm90::kBucketTables) {
    SCOPED_TRACE(table.id);
    const Variant& rung = Get(table.rung);
    const Variant& fallback = Get(table.fallback);
    EXPECT_EQ(rung.Param("rung"), table.id);
    EXPECT_EQ(rung.Param("base"), table.fallback);
    EXPECT_EQ(rung.Param("bucket_picks"), std::to_string(table.picks.size()));
    int bases = 0, rungs = 0;
    for (const auto& [key, value] : rung.params) {
      bases += key == "base";
      rungs += key == "rung";
    }
    EXPECT_EQ(bases, 1);  // the default's own base (H12) replaced, not shadowed
    EXPECT_EQ(rungs, 1);
    EXPECT_EQ(rung.description.rfind(std::string(table.id) + ": per-bucket choice", 0), 0u);
    for (const Problem& p : {Bf16(1, 4096, 4096), Bf16(16, 4096, 4096), Bf16(128, 14336, 4096),
                             Bf16(4096, 128, 4096), Bf16(4100, 100, 4097)}) {
      if (sm90::BucketVariantFor(p, table) != table.fallback) continue;
      EXPECT_EQ(rung.build(p, h200), fallback.build(p, h200));
      EXPECT_EQ(rung.dispatched_to(p), table.fallback);
      EXPECT_EQ(rung.can_implement(p), fallback.can_implement(p));
      EXPECT_EQ(rung.scratch_bytes(p), fallback.scratch_bytes(p));
      EXPECT_EQ(rung.launch_at(p).threads, fallback.launch_at(p).threads);
    }
    // Where the table names a build, a problem of that bucket is described as its.
    for (const BucketPick& pick : table.picks) {
      const Problem p = Bf16(rows[pick.m_class], rows[pick.n_class], depth[pick.k_class]);
      ASSERT_EQ(sm90::BucketVariantFor(p, table), pick.variant);
      EXPECT_EQ(rung.build(p, h200), std::string(pick.variant) + " (this bucket's pick): " +
                                         Get(pick.variant).build(p, h200));
      EXPECT_EQ(rung.dispatched_to(p), pick.variant);  // what its rows store
    }
    EXPECT_FALSE(fallback.dispatched_to);  // a rung of its own launch dispatches nowhere
  }
  // S9's deeper split is S10's default: at 16 rows of 4096 columns its 16-warp build.
  EXPECT_EQ(Get("sm90_s10_buckets").launch_at(Bf16(16, 4096, 4096)).threads, 512);
  EXPECT_EQ(Get("sm90_s8_buckets").launch_at(Bf16(16, 4096, 4096)).threads,
            Get(kS7).launch_at(Bf16(16, 4096, 4096)).threads);
}

TEST_F(Sm90BucketRung, APickedBucketIsDescribedAndSizedAsItsBuild) {
  const Variant& s8 = Get(kName);
  const Variant& h12 = Get("sm90_h12_fitted_unclustered");
  const Variant& s7 = Get(kS7);
  EXPECT_EQ(s8.Param("bucket_picks"), "1");
  const Residency h200{132, 66};
  const Problem picked = Bf16(16, 4096, 4096), other = Bf16(1, 4096, 4096);
  EXPECT_EQ(s8.build(picked, h200),
            "sm90_h12_fitted_unclustered (this bucket's pick): " + h12.build(picked, h200));
  EXPECT_EQ(s8.launch_at(picked).threads, h12.threads);
  EXPECT_EQ(s8.scratch_bytes(Bf16(16, 4096, 4100)), h12.scratch_bytes(Bf16(16, 4096, 4100)));
  // The default's few-row path: its own launch size, not H12's.
  EXPECT_EQ(s8.build(other, h200), s7.build(other, h200));
  EXPECT_NE(s8.launch_at(other).threads, h12.threads);
  // A refusal is the build's own.
  EXPECT_EQ(s8.can_implement(Bf16(0, 4096, 4096)), s7.can_implement(Bf16(0, 4096, 4096)));
  EXPECT_NE(s8.can_implement(Bf16(0, 4096, 4096)), "");
}

// A pick that refuses a problem of its bucket leaves it to the default: a swapped build takes M
// of multiples of 8 only, so 9 rows of a bucket of 2-16 run S7, and the rung takes the problem.
TEST_F(Sm90BucketRung, AProblemItsBucketsPickRefusesRunsTheDefault) {
  static constexpr std::array<BucketPick, 1> swapped = {{{1, 4, 0, "sm90_h12_rows64_n8_swapped"}}};
  static constexpr BucketTable table{"sm90_s8_swapped_test", "S8", kS7, swapped};
  sm90::RegisterSm90BucketRung(registry_, table);
  const Variant& rung = Get(table.rung);
  const Variant& pick = Get("sm90_h12_rows64_n8_swapped");
  const Residency h200{132, 66};
  const Problem taken = Bf16(16, 4096, 4096), refused = Bf16(9, 4096, 4096);
  ASSERT_EQ(sm90::BucketVariantFor(refused, table), pick.name);
  ASSERT_NE(pick.can_implement(refused), "");
  EXPECT_EQ(rung.can_implement(refused), "");
  EXPECT_EQ(rung.dispatched_to(refused), kS7);
  EXPECT_EQ(rung.build(refused, h200), Get(kS7).build(refused, h200));
  EXPECT_EQ(rung.dispatched_to(taken), pick.name);
  // The worker launches the default there too.
  std::vector<std::string> launched;
  for (std::string_view name : {pick.name, std::string(kS7)}) {
    registry_.FindMutable(name)->launch = [&launched, n = std::string(name)](const GemmArgs&) {
      launched.push_back(n);
      return std::string();
    };
  }
  sm90::BindSm90BucketRung(registry_, table);
  GemmArgs args;
  for (const Problem& p : {taken, refused}) {
    args.problem = p;
    EXPECT_EQ(Get(table.rung).launch(args), "");
  }
  EXPECT_EQ(launched, (std::vector<std::string>{pick.name, std::string(kS7)}));
}

TEST_F(Sm90BucketRung, TheWorkerLaunchesTheBuildItsBucketNames) {
  std::vector<std::string> launched;
  for (std::string_view name : {std::string_view("sm90_h12_fitted_unclustered"), kS7}) {
    Variant* v = registry_.FindMutable(name);
    ASSERT_NE(v, nullptr);
    v->launch = [&launched, n = std::string(name)](const GemmArgs&) {
      launched.push_back(n);
      return std::string();
    };
  }
  sm90::BindSm90BucketRung(registry_, kTable);
  const Variant& s8 = Get(kName);
  ASSERT_TRUE(s8.launch);
  GemmArgs args;
  args.problem = Bf16(16, 4096, 4096);
  EXPECT_EQ(s8.launch(args), "");
  args.problem = Bf16(1, 4096, 4096);
  EXPECT_EQ(s8.launch(args), "");
  args.problem = Bf16(16, 4096, 16384);
  EXPECT_EQ(s8.launch(args), "");
  EXPECT_EQ(launched, (std::vector<std::string>{"sm90_h12_fitted_unclustered", std::string(kS7),
                                                std::string(kS7)}));
}

TEST_F(Sm90BucketRung, NothingIsRegisteredOrBoundWhereABuildIsMissing) {
  Registry bare;
  static constexpr std::array<BucketPick, 1> missing = {{{0, 0, 0, "sm90_no_such_build"}}};
  RegisterCatalog(bare);
  sm90::RegisterSm90BucketRung(bare, BucketTable{"sm90_s8_missing", "S8", kS7, missing});
  EXPECT_EQ(bare.Find("sm90_s8_missing"), nullptr);
  // Unbound builds (the daemon's catalog): the worker's binding leaves the rung without a launch.
  sm90::BindSm90BucketRung(registry_, kTable);
  EXPECT_FALSE(Get(kName).launch);
}

}  // namespace
}  // namespace ablation::kernels
