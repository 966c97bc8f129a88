// The pipe_ family's catalog entries: names, parameters, layouts, shared memory and refusals
// (host-only).
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "kernels/pipe/pipe_catalog.h"
#include "kernels/pipe/pipe_config.h"
#include "kernels/registry.h"

namespace ablation::kernels {
namespace {

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

TEST(PipeCatalog, RegistersThreePipelinesPerTypeAndTile) {
  Registry r = Catalog();
  std::set<std::string> names;
  for (const Variant& v : r.All())
    if (v.family == "pipe") names.insert(v.name);
  // 3 pipelines x (small tile + 128x128x32) x 3 types.
  EXPECT_EQ(names.size(), 18u);
  for (const char* type : {"f16", "i8", "f32"}) {
    for (const char* p : {"baseline", "ldg", "cpasync"}) {
      EXPECT_EQ(names.count(std::string("pipe_") + p + "_" + type + "_128x128x32"), 1u)
          << p << " " << type;
    }
  }
  // The small example tiles: 2 KiB of A and 2 KiB of B per buffer.
  for (const char* name :
       {"pipe_cpasync_f16_64x64x16", "pipe_baseline_f16_64x64x16", "pipe_ldg_f16_64x64x16",
        "pipe_cpasync_i8_64x64x32", "pipe_ldg_f32_64x64x8"}) {
    EXPECT_EQ(names.count(name), 1u) << name;
  }
}

TEST(PipeCatalog, ParamsLayoutsAndSharedMemory) {
  Registry r = Catalog();
  int checked = 0;
  for (const Variant& v : r.All()) {
    if (v.family != "pipe") continue;
    SCOPED_TRACE(v.name);
    ++checked;
    ASSERT_EQ(v.params.size(), 6u);
    EXPECT_EQ(v.params[0].first, "variant");
    EXPECT_EQ(v.params[1].first, "dtype");
    EXPECT_EQ(v.params[2].first, "bm");
    EXPECT_EQ(v.params[3].first, "bn");
    EXPECT_EQ(v.params[4].first, "bk");
    EXPECT_EQ(v.params[5].first, "threads");
    const std::string variant = Param(v, "variant");
    EXPECT_TRUE(variant == "baseline" || variant == "ldg" || variant == "cpasync");
    const auto dtype = ParseDType(Param(v, "dtype"));
    ASSERT_TRUE(dtype.has_value());
    ASSERT_EQ(v.dtypes.size(), 1u);
    EXPECT_EQ(v.dtypes[0], *dtype);
    const std::string tag = *dtype == DType::kFP16 ? "f16" : *dtype == DType::kINT8 ? "i8" : "f32";
    EXPECT_EQ(v.name, "pipe_" + variant + "_" + tag + "_" + Param(v, "bm") + "x" + Param(v, "bn") +
                          "x" + Param(v, "bk"));
    EXPECT_EQ(std::to_string(v.tile.m), Param(v, "bm"));
    EXPECT_EQ(std::to_string(v.tile.n), Param(v, "bn"));
    EXPECT_EQ(std::to_string(v.tile.k), Param(v, "bk"));
    EXPECT_EQ(std::to_string(v.threads), Param(v, "threads"));
    EXPECT_EQ(v.threads, v.tile.m == 64 ? 128 : 256);
    // int8's mma wants B "col": those entries take B as N x K; the others K x N.
    EXPECT_EQ(v.b_layout, *dtype == DType::kINT8 ? BLayout::kNK : BLayout::kKN);
    EXPECT_FALSE(v.bit_exact_family);
    EXPECT_NE(v.description.find("bit-identical"), std::string::npos);
    EXPECT_FALSE(v.launch);  // bound only by the CUDA library
    // Shared memory: one buffer (baseline) or two, each an A and a B tile with 16-byte row pads.
    const int eb = *dtype == DType::kINT8 ? 1 : *dtype == DType::kFP16 ? 2 : 4;
    const int64_t a = int64_t(v.tile.m) * (v.tile.k * eb + 16);
    const int64_t b = *dtype == DType::kINT8 ? int64_t(v.tile.n) * (v.tile.k * eb + 16)
                                             : int64_t(v.tile.k) * (v.tile.n * eb + 16);
    EXPECT_EQ(v.smem_bytes, (variant == "baseline" ? 1 : 2) * (a + b));
  }
  EXPECT_EQ(checked, 18);
  // The small tile's budget: 64x64x16 fp16 double-buffered stays far below any occupancy cliff.
  EXPECT_EQ(r.Find("pipe_cpasync_f16_64x64x16")->smem_bytes, 2 * (64 * 48 + 16 * 144));
  EXPECT_EQ(r.Find("pipe_baseline_f32_128x128x32")->smem_bytes, 128 * 144 + 32 * 528);
}

TEST(PipeCatalog, RaggedShapesAreAllowed) {
  Registry r = Catalog();
  const Variant* f16 = r.Find("pipe_cpasync_f16_128x128x32");
  const Variant* i8 = r.Find("pipe_ldg_i8_64x64x32");
  const Variant* f32 = r.Find("pipe_baseline_f32_64x64x8");
  ASSERT_NE(f16, nullptr);
  ASSERT_NE(i8, nullptr);
  ASSERT_NE(f32, nullptr);
  for (Problem p : {Problem{500, 300, 77}, Problem{1, 1, 1}, Problem{4096, 4096, 4096},
                    Problem{1000, 1000, 1000}, Problem{129, 7, 33}}) {
    p.dtype = DType::kFP16;
    EXPECT_EQ(f16->can_implement(p), "") << p.m << "x" << p.n << "x" << p.k;
    p.dtype = DType::kINT8;
    EXPECT_EQ(i8->can_implement(p), "");
    p.dtype = DType::kFP32;
    EXPECT_EQ(f32->can_implement(p), "");
  }
}

TEST(PipeCatalog, CanImplementNamesTheField) {
  Registry r = Catalog();
  const Variant* v = r.Find("pipe_ldg_f16_64x64x16");
  ASSERT_NE(v, nullptr);
  auto refusal = [&](Problem p) { return v->can_implement(p); };
  EXPECT_NE(refusal({0, 128, 32, DType::kFP16}).find("m must be positive"), std::string::npos);
  EXPECT_NE(refusal({128, -1, 32, DType::kFP16}).find("n must be positive"), std::string::npos);
  EXPECT_NE(refusal({128, 128, 0, DType::kFP16}).find("k must be positive"), std::string::npos);
  EXPECT_NE(refusal({int64_t(1) << 31, 128, 32, DType::kFP16}).find("m must fit in int32"),
            std::string::npos);
  EXPECT_NE(refusal({128, 128, int64_t(1) << 32, DType::kFP16}).find("k must fit in int32"),
            std::string::npos);
  EXPECT_NE(refusal({int64_t(1) << 30, int64_t(1) << 30, 32, DType::kFP16}).find("m*n"),
            std::string::npos);
  // Each entry runs its own type only, and says which.
  const std::string wrong = refusal({128, 128, 32, DType::kBF16});
  EXPECT_NE(wrong.find("dtype must be fp16"), std::string::npos) << wrong;
  EXPECT_NE(wrong.find("bf16"), std::string::npos) << wrong;
  EXPECT_NE(r.Find("pipe_cpasync_i8_128x128x32")
                ->can_implement({128, 128, 32, DType::kFP16})
                .find("dtype must be int8"),
            std::string::npos);
  EXPECT_NE(r.Find("pipe_cpasync_f32_128x128x32")
                ->can_implement({128, 128, 32, DType::kTF32})
                .find("dtype must be fp32"),
            std::string::npos);
}

TEST(PipeConfig, NamesAndBufferSizes) {
  using namespace pipe;
  EXPECT_EQ(PipeVariantName(Pipeline::kCpAsync, {DType::kFP16, 64, 64, 16, 128}),
            "pipe_cpasync_f16_64x64x16");
  EXPECT_EQ(PipeVariantName(Pipeline::kBaseline, {DType::kINT8, 128, 128, 32, 256}),
            "pipe_baseline_i8_128x128x32");
  // Row strides are odd multiples of 16 bytes (conflict-free ldmatrix phases).
  for (const PipeTile& t : kPipeTiles) {
    EXPECT_EQ(AStrideBytes(t) % 32, 16) << t.bm << "x" << t.bn << "x" << t.bk;
    EXPECT_EQ(BStrideBytes(t) % 32, 16) << t.bm << "x" << t.bn << "x" << t.bk;
    EXPECT_EQ(SmemBytes(Pipeline::kLdg, t), 2 * SmemBytes(Pipeline::kBaseline, t));
    EXPECT_EQ(SmemBytes(Pipeline::kCpAsync, t), SmemBytes(Pipeline::kLdg, t));
  }
}

}  // namespace
}  // namespace ablation::kernels
