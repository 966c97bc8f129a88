#include "server/core/setup/presets.h"

#include <algorithm>
#include <stdexcept>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "server/core/setup/config.h"

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
  Presets presets;
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
  Presets presets;
  ASSERT_TRUE(presets.LoadText(BuiltinPresetsToml(), "presets.toml").ok());
  v1::Preset ladder_b = ToProto(*presets.Find("ladder-b"), registry);
  EXPECT_EQ(ladder_b.groups(0).missing_size(), 0);
  EXPECT_EQ(ladder_b.planned(), 8);

  Presets mine;
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
  Presets presets;
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
  Presets presets;
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
  Presets presets;
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

// ---------------------------------------------------------------- report sections

std::vector<std::string> Ids(const v1::PresetBlock& block) {
  std::vector<std::string> ids;
  for (const auto& r : block.rungs()) ids.push_back(r.id());
  return ids;
}

const v1::PresetRung& RungOf(const v1::PresetBlock& block, const std::string& id) {
  for (const auto& r : block.rungs())
    if (r.id() == id) return r;
  throw std::runtime_error("no rung " + id);
}

TEST(PresetReport, BuiltInSectionsAreThePlansTables) {
  kernels::Registry registry = Catalog();
  Presets presets;
  ASSERT_TRUE(presets.LoadText(BuiltinPresetsToml(), "presets.toml").ok());
  std::vector<std::pair<int, std::string>> sections;
  for (const Preset* p : presets.All())
    if (!p->report.rungs.empty()) sections.emplace_back(p->report.order, p->name);
  std::sort(sections.begin(), sections.end());
  EXPECT_THAT(
      sections,
      ElementsAre(std::pair(1, std::string("arch")), std::pair(2, std::string("ladder-a")),
                  std::pair(3, std::string("ladder-b")), std::pair(4, std::string("shapes")),
                  std::pair(5, std::string("pipelining")), std::pair(6, std::string("ladder-h")),
                  std::pair(7, std::string("ladder-f8")), std::pair(8, std::string("serving"))));

  const v1::Preset a = ToProto(*presets.Find("ladder-a"), registry);
  ASSERT_TRUE(a.has_report());
  EXPECT_EQ(a.report().title(), "Ladder A: smem -> registers, ld.shared vs ldmatrix");
  EXPECT_EQ(a.report().scope(), "{dtype}, {shape}; fixed: cp.async, 3 stages, swizzle");
  EXPECT_EQ(a.report().notes_size(), 3);
  ASSERT_EQ(a.report().blocks_size(), 2);
  const v1::PresetBlock& bf16 = a.report().blocks(0);
  EXPECT_EQ(bf16.dtype(), "bf16");
  EXPECT_THAT(Ids(bf16), ElementsAre("A1", "A2", "A3", "cuBLAS"));
  EXPECT_THAT(RungOf(bf16, "A1").against(), ElementsAre());
  EXPECT_THAT(RungOf(bf16, "A2").against(), ElementsAre("A1"));  // the previous rung
  EXPECT_THAT(RungOf(bf16, "A3").against(), ElementsAre("A1", "A2"));
  EXPECT_THAT(RungOf(bf16, "cuBLAS").against(), ElementsAre());
  EXPECT_EQ(RungOf(bf16, "A3").label(), "ldmatrix");
  EXPECT_THAT(RungOf(bf16, "A3").resolved(), ElementsAre("abl_L1_R1_bl0_s3_sw1"));
  EXPECT_EQ(RungOf(bf16, "cuBLAS").label(), "cuBLAS bf16 (reference)");
  // The fp16 block: {dtype} filled in.
  const v1::PresetBlock& fp16 = a.report().blocks(1);
  EXPECT_EQ(RungOf(fp16, "cuBLAS").variant(), "cublas_fp16");
  EXPECT_EQ(RungOf(fp16, "A1").dtype(), "fp16");
  EXPECT_EQ(a.groups_size(), 1);  // the plan is as before
  EXPECT_EQ(a.planned(), 4);

  const v1::Preset b = ToProto(*presets.Find("ladder-b"), registry);
  EXPECT_THAT(Ids(b.report().blocks(0)),
              ElementsAre("B0", "B1", "B2", "B3", "B4", "B5", "B6", "cuBLAS"));
  EXPECT_THAT(RungOf(b.report().blocks(0), "B2").against(), ElementsAre("B0"));
  EXPECT_THAT(RungOf(b.report().blocks(0), "B3").against(), ElementsAre("B2"));

  const v1::Preset arch = ToProto(*presets.Find("arch"), registry);
  const v1::PresetBlock& arch_bf16 = arch.report().blocks(0);
  EXPECT_EQ(RungOf(arch_bf16, "S1").dtype(), "fp32");
  EXPECT_THAT(RungOf(arch_bf16, "T1").against(), ElementsAre("S5"));
  EXPECT_THAT(RungOf(arch_bf16, "cuBLAS tf32").against(), ElementsAre("cuBLAS fp32"));
  EXPECT_EQ(RungOf(arch_bf16, "best bf16").label(), "fastest ablation variant (bf16 mma)");
  EXPECT_EQ(RungOf(arch_bf16, "best bf16").variant(), "abl_*");  // the fastest of them
  EXPECT_EQ(RungOf(arch_bf16, "best bf16").resolved_size(), 128);
  EXPECT_EQ(RungOf(arch.report().blocks(1), "best fp16").dtype(), "fp16");

  const v1::Preset pipe = ToProto(*presets.Find("pipelining"), registry);
  EXPECT_TRUE(pipe.report().per_dtype());
  ASSERT_EQ(pipe.report().blocks_size(), 3);  // the groups' dtypes
  const v1::PresetBlock& int8 = pipe.report().blocks(1);
  EXPECT_EQ(int8.dtype(), "int8");
  EXPECT_THAT(Ids(int8), ElementsAre("baseline", "LDG", "cp.async", "cuBLAS"));
  // A glob of one entry of the group reads as that entry.
  EXPECT_EQ(RungOf(int8, "baseline").variant(), "pipe_baseline_i8_*");
  EXPECT_TRUE(RungOf(int8, "baseline").per_tile());
  EXPECT_FALSE(RungOf(int8, "cuBLAS").per_tile());
  EXPECT_EQ(RungOf(int8, "cuBLAS").variant(), "cublas_int8");
  EXPECT_THAT(RungOf(int8, "cp.async").against(), ElementsAre("baseline"));
  for (const auto& name : RungOf(int8, "LDG").resolved())
    EXPECT_EQ(name.rfind("pipe_ldg_i8_", 0), 0u) << name;

  // The counters beside the rungs: ladder A's load instructions, ladder B's tensor pipe and
  // stalls (sets expanded to their concepts), the architecture table's occupancy.
  EXPECT_THAT(ToProto(*presets.Find("ladder-a"), registry).report().counters(),
              ElementsAre("shared_load_instructions", "ldmatrix_instructions",
                          "shared_load_bank_conflicts", "lsu_pipe_utilisation"));
  const auto& b_counters = b.report().counters();
  EXPECT_EQ(b_counters[0], "tensor_pipe_hmma_utilisation");
  EXPECT_THAT(std::vector<std::string>(b_counters.begin(), b_counters.end()),
              ::testing::Contains("stall_math_pipe_throttle"));
  EXPECT_THAT(arch.report().counters(), ElementsAre("achieved_occupancy"));

  const v1::Preset shapes = ToProto(*presets.Find("shapes"), registry);
  EXPECT_TRUE(shapes.report().per_shape());
  EXPECT_EQ(shapes.report().shapes_size(), 10);
  // Presets without rungs are no section.
  EXPECT_FALSE(ToProto(*presets.Find("nightly"), registry).has_report());
}

TEST(PresetReport, AMadeUpLadderWithDefaults) {
  Presets presets;
  Status st = presets.LoadText(R"(
[tiny]
description = "d"
variants = ["abl_L0_R1_bl0_s1_sw1", "abl_L1_R1_bl0_s1_sw1", "cublas_bf16"]
notes = ["one"]
  [[tiny.rung]]
  id = "T0"
  variant = "abl_L0_R1_bl0_s1_sw1"
  [[tiny.rung]]
  id = "T1"
  label = "cp.async"
  variant = "abl_L1_*"
)",
                               "tiny.toml");
  ASSERT_TRUE(st.ok()) << st.message();
  const Preset& p = *presets.Find("tiny");
  EXPECT_EQ(p.report.title, "tiny");
  EXPECT_THAT(p.report.dtypes, ElementsAre("bf16"));
  EXPECT_THAT(p.report.notes, ElementsAre("one"));
  ASSERT_EQ(p.report.rungs.size(), 2u);
  EXPECT_THAT(p.report.rungs[0].against, ElementsAre());
  EXPECT_THAT(p.report.rungs[1].against, ElementsAre("T0"));
  EXPECT_EQ(p.report.rungs[1].label, "cp.async");
  // The variants the preset runs are its lists, as before.
  EXPECT_THAT(p.groups[0].variants,
              ElementsAre("abl_L0_R1_bl0_s1_sw1", "abl_L1_R1_bl0_s1_sw1", "cublas_bf16"));
}

struct BadCase {
  std::string text;
  std::string expected;  // the message names the line and the key
};

class BadPresetFile : public ::testing::TestWithParam<BadCase> {};

// A section of one rung (lines 1-9), for the cases to add a second rung to (from line 10).
const std::string kLadder =
    "[p]\ndescription = \"d\"\nvariants = [\"abl_L1_R1_bl0_s3_sw1\", \"cublas_bf16\"]\n"
    "title = \"P\"\n\n"
    "  [[p.rung]]\n  id = \"R1\"\n  variant = \"abl_L1_R1_bl0_s3_sw1\"\n\n";

TEST_P(BadPresetFile, ErrorNamesLineAndKey) {
  Presets presets;
  ASSERT_TRUE(presets.LoadText("[keep]\ndescription = \"k\"\nvariants = [\"x\"]\n", "a").ok());
  Status st = presets.LoadText(GetParam().text, "bad.toml");
  ASSERT_FALSE(st.ok());
  EXPECT_THAT(st.message(), HasSubstr(GetParam().expected));
  EXPECT_NE(presets.Find("keep"), nullptr);  // a failed load changes nothing
  EXPECT_EQ(presets.All().size(), 1u);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, BadPresetFile,
    ::testing::Values(
        BadCase{"[p]\ndescription = \"d\"\nvariants = [\"a\"\n", "bad.toml:"},
        BadCase{"[p]\ndescription = \"d\"\nvariants = [\"a\", 3]\n",
                "bad.toml:3: p.variants[1]: expected a string"},
        BadCase{"[p]\ndescription = \"d\"\nvariants = [\"a\"]\nshapes = [\"4096x0x1\"]\n",
                "bad.toml:4: p.shapes[0]: '4096x0x1': sizes must be positive"},
        BadCase{"[p]\ndescription = \"d\"\nvariants = [\"a\"]\nshapes = [\"big\"]\n",
                "bad.toml:4: p.shapes[0]: 'big' is not a shape"},
        BadCase{"[p]\ndescription = \"d\"\nvariants = [\"a\"]\ndtype = \"fp4\"\n",
                "bad.toml:4: p.dtype: unknown dtype 'fp4'"},
        BadCase{"[p]\ndescription = \"d\"\nvariant = [\"a\"]\n",
                "bad.toml:3: p.variant: unknown key"},
        BadCase{"[p]\nvariants = [\"a\"]\n", "bad.toml:1: p.description: missing"},
        BadCase{"[p]\ndescription = \"d\"\n", "p.variants: missing"},
        BadCase{"[p]\ndescription = \"d\"\n[[p.group]]\ndtype = \"fp16\"\n",
                "bad.toml:3: p.group[0].variants: missing"},
        BadCase{"[p]\ndescription = \"d\"\nvariants = []\n",
                "bad.toml:3: p.variants: must not be empty"},
        BadCase{"[P q]\ndescription = \"d\"\n", "bad.toml:"},
        // Report sections.
        BadCase{kLadder + "  [[p.rung]]\n  id = \"R2\"\n  variant = \"cublas_bf16\"\n"
                          "  against = \"R9\"\n",
                "bad.toml:10: p.rung[1].against: unknown rung 'R9' (the rungs: R1, "
                "R2)"},
        BadCase{kLadder + "  [[p.rung]]\n  id = \"R2\"\n  variant = \"abl_x\"\n",
                "bad.toml:10: p.rung[1].variant: 'abl_x' is not one of the preset's "
                "bf16 variants, nor a glob matching one"},
        BadCase{kLadder + "  [[p.rung]]\n  id = \"R1\"\n  variant = \"cublas_bf16\"\n",
                "bad.toml:10: p.rung[1].id: duplicate rung id 'R1' (also rung[0], in "
                "the bf16 block)"},
        BadCase{kLadder + "  [[p.rung]]\n  id = \"R2\"\n  variant = \"cublas_bf16\"\n"
                          "  against = [\"R1\", \"R2\"]\n",
                "bad.toml:10: p.rung[1].against: a rung is not compared with itself "
                "('R2')"},
        BadCase{kLadder + "  [[p.rung]]\n  variant = \"cublas_bf16\"\n",
                "bad.toml:10: p.rung[1].id: missing (required in a rung)"},
        BadCase{kLadder + "  [[p.rung]]\n  id = \"R2\"\n  variant = \"cublas_fp16\"\n"
                          "  dtype = \"fp16\"\n",
                "bad.toml:10: p.rung[1].dtype: the preset has no variants of dtype "
                "fp16 to find 'cublas_fp16' in"},
        BadCase{kLadder + "  [[p.rung]]\n  id = \"R2\"\n  variant = \"cublas_bf16\"\n"
                          "  colour = \"red\"\n",
                "bad.toml:13: p.rung[1].colour: unknown key"},
        BadCase{"[p]\ndescription = \"d\"\nvariants = [\"a\"]\ntitle = \"T\"\n",
                "bad.toml:4: p.title: a report key, but the preset has no [[p.rung]] "
                "tables"},
        BadCase{"[p]\ndescription = \"d\"\nvariants = [\"a\"]\nper_dtype = true\n"
                "per_shape = true\n[[p.rung]]\nid = \"R\"\nvariant = \"a\"\n",
                "bad.toml:5: p.per_shape: a section is per_dtype or per_shape, not "
                "both"},
        BadCase{"[p]\ndescription = \"d\"\nvariants = [\"a\"]\n"
                "counters = [\"lsu\", \"ld_shared\"]\n[[p.rung]]\nid = \"R\"\nvariant = \"a\"\n",
                "bad.toml:4: p.counters[1]: unknown counter 'ld_shared'"},
        BadCase{"[p]\ndescription = \"d\"\nvariants = [\"a\"]\nper_shape = true\n"
                "[[p.rung]]\nid = \"R\"\nvariant = \"a\"\nper_tile = true\n",
                "bad.toml:5: p.rung[0].per_tile: a per_shape section has one row per rung: no "
                "per_tile rungs"}));

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

namespace ablation::core {
namespace {

// The sm90 family is absent from a preset's run on a GPU that is not compute capability 9.0: the
// shape sweep runs without its Hopper rung there, and ladder-h (nothing but sm90 and cuBLAS) is
// refused with the reason.
TEST(Presets, Sm90RungsAreAbsentOnOtherGpus) {
  kernels::Registry registry = Catalog();
  Presets presets;
  ASSERT_TRUE(presets.LoadText(BuiltinPresetsToml(), "presets.toml").ok());
  DeviceLimits ampere;
  ampere.known = true;
  ampere.memory_bytes = int64_t(80) << 30;
  ampere.l2_bytes = int64_t(40) << 20;
  ampere.compute_capability = "8.0";
  DeviceLimits hopper = ampere;
  hopper.compute_capability = "9.0";
  auto has = [](const RunPlan& p, const std::string& name) {
    for (const auto* v : p.variants)
      if (v->name == name) return true;
    return false;
  };
  v1::RunRequest shapes;
  shapes.set_preset("shapes");
  RunPlan on_ampere, on_hopper;
  ASSERT_TRUE(PlanPresetRun(shapes, presets, registry, ampere, {}, &on_ampere).ok());
  ASSERT_TRUE(PlanPresetRun(shapes, presets, registry, hopper, {}, &on_hopper).ok());
  EXPECT_FALSE(has(on_ampere, "sm90_h12_fitted_unclustered"));
  EXPECT_TRUE(has(on_hopper, "sm90_h12_fitted_unclustered"));
  EXPECT_TRUE(has(on_ampere, "abl_L1_R1_bl0_s4_sw1_rb1"));

  v1::RunRequest ladder;
  ladder.set_preset("ladder-h");
  RunPlan refused;
  const Status st = PlanPresetRun(ladder, presets, registry, ampere, {}, &refused);
  EXPECT_EQ(st.code(), Code::kFailedPrecondition);
  EXPECT_THAT(st.message(), HasSubstr("runs on compute capability 9.0 only"));
  RunPlan ok;
  ASSERT_TRUE(PlanPresetRun(ladder, presets, registry, hopper, {}, &ok).ok());
  EXPECT_EQ(ok.variants.size(), 14u);
  EXPECT_EQ(ok.items.size(), 28u);  // 13 rungs and cuBLAS x 2 shapes
}

}  // namespace
}  // namespace ablation::core
