#include "server/core/presets.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "server/core/config.h"

namespace ablation::core {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

kernels::Registry Catalog() {
  kernels::Registry r;
  kernels::RegisterCatalog(r);
  return r;
}

TEST(Presets, BuiltInFileParsesAndHasEveryPresetOfThePlan) {
  PresetCatalog presets;
  Status st = presets.LoadText(BuiltinPresetsToml(), "presets.toml");
  ASSERT_TRUE(st.ok()) << st.message();
  for (const char* name : {"ladder-a", "ladder-b", "swizzle", "all-ablation", "pipelining", "arch",
                           "shapes", "nightly"}) {
    const Preset* p = presets.Find(name);
    ASSERT_NE(p, nullptr) << name;
    EXPECT_FALSE(p->description.empty()) << name;
    // Every group names its cuBLAS baseline.
    for (const auto& g : p->groups) {
      bool has_cublas = false;
      for (const auto& v : g.variants) has_cublas |= v.rfind("cublas_", 0) == 0;
      EXPECT_TRUE(has_cublas) << name << " group " << g.dtype;
    }
  }
  const Preset* shapes = presets.Find("shapes");
  EXPECT_EQ(shapes->groups[0].shapes.size(), 10u);
  const Preset* a = presets.Find("ladder-a");
  EXPECT_THAT(a->groups[0].variants, ElementsAre("abl_L1_R0_bl0_s3_sw1", "abl_L1_R0_bl1_s3_sw1",
                                                 "abl_L1_R1_bl0_s3_sw1", "cublas_bf16"));
  ASSERT_EQ(a->groups[0].shapes.size(), 1u);  // default 4096^3
  EXPECT_EQ(a->groups[0].shapes[0].k(), 4096);
  EXPECT_EQ(presets.Find("pipelining")->groups.size(), 3u);
}

TEST(Presets, MissingVariantsAreListedNotFatal) {
  kernels::Registry registry = Catalog();
  PresetCatalog presets;
  ASSERT_TRUE(presets.LoadText(BuiltinPresetsToml(), "presets.toml").ok());
  v1::Preset ladder_b = ToProto(*presets.Find("ladder-b"), registry);
  EXPECT_EQ(ladder_b.groups(0).missing_size(), 0);
  EXPECT_EQ(ladder_b.planned(), 8);

  PresetCatalog mine;
  ASSERT_TRUE(mine.LoadText(R"(
[future]
description = "d"
variants = ["future_cpasync_f16_*", "abl_L1_R1_bl0_s3_sw1", "nope_kernel", "cublas_bf16"]
)",
                            "mine.toml")
                  .ok());
  ResolvedGroup r = ResolvePresetGroup(mine.Find("future")->groups[0], registry);
  EXPECT_THAT(r.missing, ElementsAre("future_cpasync_f16_*", "nope_kernel"));
  EXPECT_THAT(r.resolved, ElementsAre("abl_L1_R1_bl0_s3_sw1", "cublas_bf16"));
}

TEST(Presets, PlanRefusesMissingUnlessAllowed) {
  kernels::Registry registry = Catalog();
  PresetCatalog presets;
  ASSERT_TRUE(presets
                  .LoadText(R"(
[mixed]
description = "two dtypes"
shapes = [256]
  [[mixed.group]]
  dtype = "bf16"
  variants = ["L1_R1_s3", "cublas_bf16"]
  [[mixed.group]]
  dtype = "fp16"
  shapes = ["128x256x512"]
  variants = ["future_ldg_f16_*", "cublas_fp16"]
)",
                            "mixed.toml")
                  .ok());
  v1::RunRequest req;
  req.set_preset("mixed");
  RunPlan plan;
  Status st = PlanPresetRun(req, presets, registry, {}, {}, &plan);
  ASSERT_FALSE(st.ok());
  EXPECT_THAT(st.message(), HasSubstr("future_ldg_f16_* (fp16)"));
  EXPECT_THAT(st.message(), HasSubstr("allow_missing"));

  req.set_allow_missing(true);
  RunPlan allowed;
  st = PlanPresetRun(req, presets, registry, {}, {}, &allowed);
  ASSERT_TRUE(st.ok()) << st.message();
  ASSERT_EQ(allowed.items.size(), 3u);
  EXPECT_EQ(allowed.items[0].variant->name, "abl_L1_R1_bl0_s3_sw1");
  EXPECT_EQ(allowed.items[0].problem.dtype, kernels::DType::kBF16);
  EXPECT_EQ(allowed.items[0].problem.k, 256);
  EXPECT_EQ(allowed.items[2].variant->name, "cublas_fp16");
  EXPECT_EQ(allowed.items[2].problem.dtype, kernels::DType::kFP16);
  EXPECT_EQ(allowed.items[2].problem.k, 512);

  v1::RunRequest both = req;
  both.add_variants("cublas_bf16");
  EXPECT_THAT(PlanPresetRun(both, presets, registry, {}, {}, &plan).message(),
              HasSubstr("either variants or a preset"));
  v1::RunRequest unknown;
  unknown.set_preset("ladder-z");
  EXPECT_THAT(PlanPresetRun(unknown, presets, registry, {}, {}, &plan).message(),
              HasSubstr("unknown preset 'ladder-z'; known: mixed"));
}

TEST(Presets, NothingResolvingIsRefusedEvenWithAllowMissing) {
  kernels::Registry registry = Catalog();
  PresetCatalog presets;
  ASSERT_TRUE(presets
                  .LoadText("[later]\ndescription = \"d\"\ndtype = \"int8\"\n"
                            "variants = [\"future_*_i8_*\", \"future_cublas_i8\"]\n",
                            "x.toml")
                  .ok());
  v1::RunRequest req;
  req.set_preset("later");
  req.set_allow_missing(true);
  RunPlan plan;
  EXPECT_THAT(PlanPresetRun(req, presets, registry, {}, {}, &plan).message(),
              HasSubstr("nothing of preset 'later' resolves"));
}

TEST(Presets, AUserFileAddsAndReplaces) {
  PresetCatalog presets;
  ASSERT_TRUE(presets.LoadText(BuiltinPresetsToml(), "built-in").ok());
  size_t before = presets.All().size();
  ASSERT_TRUE(presets
                  .LoadText("[ladder-a]\ndescription = \"mine\"\nvariants = [\"cublas_bf16\"]\n"
                            "[extra]\ndescription = \"x\"\nvariants = [\"L1_R1_s3\"]\n",
                            "site.toml")
                  .ok());
  EXPECT_EQ(presets.All().size(), before + 1);
  EXPECT_EQ(presets.Find("ladder-a")->description, "mine");
  EXPECT_EQ(presets.Find("ladder-a")->source, "site.toml:1");
}

struct BadCase {
  const char* text;
  const char* expected;  // the message names the line and the key
};

class BadPresetFile : public ::testing::TestWithParam<BadCase> {};

TEST_P(BadPresetFile, ErrorNamesLineAndKey) {
  PresetCatalog presets;
  ASSERT_TRUE(presets.LoadText("[keep]\ndescription = \"k\"\nvariants = [\"x\"]\n", "a").ok());
  Status st = presets.LoadText(GetParam().text, "bad.toml");
  ASSERT_FALSE(st.ok());
  EXPECT_THAT(st.message(), HasSubstr(GetParam().expected));
  EXPECT_NE(presets.Find("keep"), nullptr);  // a failed load changes nothing
  EXPECT_EQ(presets.All().size(), 1u);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, BadPresetFile,
    ::testing::Values(BadCase{"[p]\ndescription = \"d\"\nvariants = [\"a\"\n", "bad.toml:"},
                      BadCase{"[p]\ndescription = \"d\"\nvariants = [\"a\", 3]\n",
                              "bad.toml:3: p.variants[1]: expected a string"},
                      BadCase{
                          "[p]\ndescription = \"d\"\nvariants = [\"a\"]\nshapes = [\"4096x0x1\"]\n",
                          "bad.toml:4: p.shapes[0]: '4096x0x1': sizes must be positive"},
                      BadCase{"[p]\ndescription = \"d\"\nvariants = [\"a\"]\nshapes = [\"big\"]\n",
                              "bad.toml:4: p.shapes[0]: 'big' is not a shape"},
                      BadCase{"[p]\ndescription = \"d\"\nvariants = [\"a\"]\ndtype = \"fp8\"\n",
                              "bad.toml:4: p.dtype: unknown dtype 'fp8'"},
                      BadCase{"[p]\ndescription = \"d\"\nvariant = [\"a\"]\n",
                              "bad.toml:3: p.variant: unknown key"},
                      BadCase{"[p]\nvariants = [\"a\"]\n", "bad.toml:1: p.description: missing"},
                      BadCase{"[p]\ndescription = \"d\"\n", "p.variants: missing"},
                      BadCase{"[p]\ndescription = \"d\"\n[[p.group]]\ndtype = \"fp16\"\n",
                              "bad.toml:3: p.group[0].variants: missing"},
                      BadCase{"[p]\ndescription = \"d\"\nvariants = []\n",
                              "bad.toml:3: p.variants: must not be empty"},
                      BadCase{"[P q]\ndescription = \"d\"\n", "bad.toml:"}));

TEST(Config, PresetsKeyIsRead) {
  DaemonConfig config;
  Status st = LoadConfigText("presets = \"/etc/ablationd/presets.toml\"\n", "c.toml", &config);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(config.presets_path, "/etc/ablationd/presets.toml");
  st = LoadConfigText("presets = 3\n", "c.toml", &config);
  EXPECT_THAT(st.message(), HasSubstr("presets: expected a string"));
}

}  // namespace
}  // namespace ablation::core
