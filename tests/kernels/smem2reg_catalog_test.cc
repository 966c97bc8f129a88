// The smem2reg family's catalog entries and work model (host-only).
#include "kernels/smem2reg/smem2reg_catalog.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "kernels/registry.h"

namespace ablation::kernels {
namespace {

// gtest only (this binary does not link gmock): `text` contains `part`.
::testing::AssertionResult Contains(const std::string& text, const std::string& part) {
  if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "'" << text << "' does not contain '" << part << "'";
}

Registry Catalog() {
  Registry r;
  RegisterCatalog(r);
  return r;
}

std::string Param(const Variant& v, const std::string& key) {
  for (const auto& [k, val] : v.params)
    if (k == key) return val.Text();
  return "<missing>";
}

TEST(Smem2RegCatalog, EightVariantsWithTheAblationBlockShape) {
  Registry r = Catalog();
  std::set<std::string> names;
  for (const Variant& v : r.All()) {
    if (v.family == "smem2reg") names.insert(v.name);
  }
  EXPECT_EQ(names, (std::set<std::string>{"smem2reg_R0_bl0_sw0", "smem2reg_R0_bl0_sw1",
                                          "smem2reg_R0_bl1_sw0", "smem2reg_R0_bl1_sw1",
                                          "smem2reg_R1_bl0_sw0", "smem2reg_R1_bl0_sw1",
                                          "smem2reg_R1_bl1_sw0", "smem2reg_R1_bl1_sw1"}));
  for (const Smem2RegConfig& c : AllSmem2RegConfigs()) {
    const Variant* v = r.Find(Smem2RegVariantName(c));
    ASSERT_NE(v, nullptr) << Smem2RegVariantName(c);
    SCOPED_TRACE(v->name);
    EXPECT_EQ(Param(*v, "read_mode"), std::to_string(c.read_mode));
    EXPECT_EQ(Param(*v, "b_layout"), std::to_string(c.b_layout));
    EXPECT_EQ(Param(*v, "swizzle"), std::to_string(c.swizzle));
    EXPECT_EQ(v->tile.m, 128);
    EXPECT_EQ(v->tile.n, 128);
    EXPECT_EQ(v->tile.k, 32);
    EXPECT_EQ(v->threads, 256);
    EXPECT_EQ(v->smem_bytes, 32 * 1024);  // two stages of the ablation layout
    EXPECT_EQ(v->b_layout, c.b_layout == 0 ? BLayout::kKN : BLayout::kNK);
    EXPECT_TRUE(v->Supports(DType::kBF16));
    EXPECT_TRUE(v->Supports(DType::kFP16));
    EXPECT_FALSE(v->Supports(DType::kFP32));
    EXPECT_FALSE(v->bit_exact_family);  // it computes no product to compare
    EXPECT_TRUE(static_cast<bool>(v->work));
    EXPECT_TRUE(Contains(v->description, "no mma"));
    EXPECT_TRUE(Contains(v->description, c.read_mode == 1 ? "ldmatrix" : "ld.shared"));
    EXPECT_TRUE(Contains(v->description, "K/32 k-tiles"));
  }
}

TEST(Smem2RegCatalog, LoadsPerWarpAndKTileCountTheGemmsInstructions) {
  // ldmatrix: per k16 step one x4 per m16 tile (4) and one x2 per n8 tile (4); two steps.
  EXPECT_EQ(Smem2RegLoadsPerWarpTile({1, 0, 1}), 16);
  EXPECT_EQ(Smem2RegLoadsPerWarpTile({1, 1, 0}), 16);
  // ld.shared: 4 b32 per A tile; B 2 b32 per n8 tile ([n][k]) or 4 b16 ([k][n]).
  EXPECT_EQ(Smem2RegLoadsPerWarpTile({0, 1, 1}), 2 * (4 * 4 + 4 * 2));
  EXPECT_EQ(Smem2RegLoadsPerWarpTile({0, 0, 1}), 2 * (4 * 4 + 4 * 4));
  // The swizzle changes addresses, not instruction counts.
  EXPECT_EQ(Smem2RegLoadsPerWarpTile({0, 0, 0}), Smem2RegLoadsPerWarpTile({0, 0, 1}));
  // A 64x32 and B 32x32 fragments of 2-byte elements, whatever the instructions.
  EXPECT_EQ(Smem2RegBytesPerWarpTile(), (64 * 32 + 32 * 32) * 2);
}

TEST(Smem2RegCatalog, WorkModelAtAShape) {
  Registry r = Catalog();
  const Problem p{4096, 4096, 4096, DType::kBF16};
  // 32 x 32 blocks x 8 warps x 128 k-tiles.
  const double warp_tiles = 32.0 * 32 * 8 * 128;
  const WorkModel ldm = r.Find("smem2reg_R1_bl0_sw1")->Work(p);
  EXPECT_DOUBLE_EQ(ldm.flops, 0);
  EXPECT_DOUBLE_EQ(ldm.fragment_loads, warp_tiles * 16);
  EXPECT_DOUBLE_EQ(ldm.bytes, warp_tiles * 6144);
  // The bytes equal what the GEMM's warps read: A once per warp column (4), B once per warp row
  // (2), 3*M*N*K/32 in all.
  EXPECT_DOUBLE_EQ(ldm.bytes, 3.0 * 4096 * 4096 * 4096 / 32);
  const WorkModel lds = r.Find("smem2reg_R0_bl0_sw1")->Work(p);
  EXPECT_DOUBLE_EQ(lds.fragment_loads, warp_tiles * 64);
  EXPECT_DOUBLE_EQ(lds.bytes, ldm.bytes);
  EXPECT_DOUBLE_EQ(r.Find("smem2reg_R0_bl1_sw0")->Work(p).fragment_loads, warp_tiles * 48);

  // Non-square: grid (M/128) x (N/128), K/32 k-tiles each.
  const Problem q{256, 512, 96, DType::kFP16};
  EXPECT_DOUBLE_EQ(r.Find("smem2reg_R1_bl1_sw0")->Work(q).fragment_loads, 2.0 * 4 * 8 * 3 * 16);
}

TEST(Smem2RegCatalog, GemmsKeepTheirFlopsByDefault) {
  Registry r = Catalog();
  const Problem p{512, 256, 128, DType::kBF16};
  for (const char* name : {"abl_L1_R1_bl0_s3_sw1", "cublas_bf16"}) {
    const Variant* v = r.Find(name);
    ASSERT_NE(v, nullptr) << name;
    EXPECT_FALSE(static_cast<bool>(v->work)) << name;
    const WorkModel w = v->Work(p);
    EXPECT_DOUBLE_EQ(w.flops, 2.0 * 512 * 256 * 128) << name;
    EXPECT_DOUBLE_EQ(w.bytes, 0) << name;
    EXPECT_DOUBLE_EQ(w.fragment_loads, 0) << name;
  }
}

TEST(Smem2RegCatalog, CanImplementNamesTheField) {
  const Registry catalog = Catalog();  // the registry outlives the variant it lends
  const Variant* v = catalog.Find("smem2reg_R0_bl1_sw1");
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(v->can_implement({4096, 4096, 4096, DType::kBF16}), "");
  EXPECT_EQ(v->can_implement({128, 128, 32, DType::kFP16}), "");
  EXPECT_TRUE(Contains(v->can_implement({4096, 4096, 4096, DType::kFP32}),
                       "dtype must be bf16 or fp16 for the smem2reg family"));
  EXPECT_TRUE(Contains(v->can_implement({4000, 4096, 4096, DType::kBF16}), "m must be"));
  EXPECT_TRUE(Contains(v->can_implement({4096, 4000, 4096, DType::kBF16}), "n must be"));
  EXPECT_TRUE(Contains(v->can_implement({4096, 4096, 4010, DType::kBF16}), "k must be"));
  EXPECT_TRUE(Contains(v->can_implement({0, 4096, 4096, DType::kBF16}), "m must be positive"));
}

}  // namespace
}  // namespace ablation::kernels
