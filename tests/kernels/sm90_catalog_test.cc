// CPU tests of the sm90 family's catalog: the ladder's rungs, one change each, their parameters
// and their refusals (each naming the field).
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "kernels/registry.h"
#include "kernels/sm90/sm90_catalog.h"
#include "kernels/sm90/sm90_config.h"

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
      if (k == key) return val;
    return "";
  }
  Registry registry_;
};

TEST_F(Sm90Catalog, NineRungsOneChangeEach) {
  int count = 0;
  for (const Variant& v : registry_.All()) count += v.family == "sm90";
  EXPECT_EQ(count, 9);
  // Each rung differs from the one before it in exactly one knob.
  for (size_t i = 1; i < sm90::kRungs.size(); ++i) {
    const sm90::Rung& a = sm90::kRungs[i - 1];
    const sm90::Rung& b = sm90::kRungs[i];
    const int changes = (a.mainloop != b.mainloop) + (a.warp_specialized != b.warp_specialized) +
                        (a.persistent != b.persistent) + (a.cluster_m != b.cluster_m) +
                        (a.pending != b.pending) + (a.wide_stores != b.wide_stores) +
                        (a.grouped_order != b.grouped_order);
    EXPECT_EQ(changes, 1) << a.name << " -> " << b.name;
  }
  std::set<std::string> ids;
  for (const sm90::Rung& r : sm90::kRungs) ids.insert(std::string(r.id));
  EXPECT_EQ(ids.size(), sm90::kRungs.size());
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
}

TEST_F(Sm90Catalog, RefusalsNameTheField) {
  const Variant& h2 = Get("sm90_h2_wgmma");
  EXPECT_EQ(h2.can_implement({4096, 4096, 4096, DType::kBF16}), "");
  EXPECT_EQ(h2.can_implement({128, 256, 64, DType::kBF16}), "");
  EXPECT_NE(h2.can_implement({4096, 4096, 4096, DType::kFP16}).find("dtype must be bf16"),
            std::string::npos);
  EXPECT_NE(h2.can_implement({100, 256, 64, DType::kBF16}).find("m must be a multiple of 128"),
            std::string::npos);
  EXPECT_NE(h2.can_implement({128, 384, 64, DType::kBF16}).find("n must be a multiple of 256"),
            std::string::npos);
  EXPECT_NE(h2.can_implement({128, 256, 96, DType::kBF16}).find("k must be a multiple of 64"),
            std::string::npos);
  EXPECT_NE(h2.can_implement({0, 256, 64, DType::kBF16}).find("m must be positive"),
            std::string::npos);
  // The cluster rungs pair two 128-row tiles along M.
  const Variant& h5 = Get("sm90_h5_mc2");
  EXPECT_NE(h5.can_implement({384, 256, 64, DType::kBF16}).find("m must be a multiple of 256"),
            std::string::npos);
  EXPECT_EQ(h5.can_implement({512, 256, 64, DType::kBF16}), "");
}

}  // namespace
}  // namespace ablation::kernels
