// A user kernel's ladder as a preset (server/core/setup/user_ladders.h): its name, the variants of
// its rungs in the manifest's order with cuBLAS last, each rung against the one before, and what
// a registry holding the kernel's variants resolves of it.
#include "server/core/setup/user_ladders.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace ablation::core {
namespace {

using ::testing::ElementsAre;

constexpr const char* kPipe = R"toml(
name = "pipe"
entry = "pipe_gemm"
description = "double buffering"
[contract]
dtype = "fp16"
[launch]
block = "256"
grid = "ceil(M / 128) * ceil(N / 128)"
[[knob]]
name = "BUFFERS"
short = "buf"
label = "double buffering"
values = [1, 2]
[[knob]]
name = "CPASYNC"
short = "cp"
label = "cp.async"
values = [0, 1]
)toml";

std::shared_ptr<const kernels::user::Manifest> Pipe() {
  auto m = std::make_shared<kernels::user::Manifest>();
  EXPECT_EQ(kernels::user::ParseManifest(kPipe, "pipe.toml", {}, m.get()), "");
  return m;
}

TEST(UserLadders, TheManifestsLadderIsAPresetOfItsRungsAndCublas) {
  const Preset p = UserLadderPreset(*Pipe());
  EXPECT_EQ(p.name, "user.pipe");
  ASSERT_EQ(p.groups.size(), 1u);
  EXPECT_EQ(p.groups[0].dtype, "fp16");
  EXPECT_THAT(p.groups[0].variants,
              ElementsAre("user.pipe.buffers=1.cpasync=0", "user.pipe.buffers=2.cpasync=0",
                          "user.pipe.buffers=2.cpasync=1", "cublas_fp16"));
  ASSERT_EQ(p.groups[0].shapes.size(), 1u);
  EXPECT_EQ(p.groups[0].shapes[0].m(), 4096);
  ASSERT_EQ(p.report.rungs.size(), 4u);
  EXPECT_EQ(p.report.rungs[0].id, "U0");
  EXPECT_TRUE(p.report.rungs[0].against.empty());
  EXPECT_EQ(p.report.rungs[1].label, "BUFFERS 1 -> 2 (double buffering) (pipe_buf2_cp0)");
  EXPECT_THAT(p.report.rungs[1].against, ElementsAre("U0"));
  EXPECT_THAT(p.report.rungs[2].against, ElementsAre("U1"));
  EXPECT_FALSE(p.report.counters.empty()) << "counters shown beside the rungs where read";
  EXPECT_EQ(p.report.rungs[3].id, "cuBLAS");
  EXPECT_TRUE(p.report.rungs[3].against.empty());
}

TEST(UserLadders, AddedBesideTheConfiguredPresetsAndResolvedAgainstTheCatalog) {
  Presets base;
  ASSERT_TRUE(
      base.LoadText("[mine]\ndescription = \"mine\"\nvariants = [\"cublas_bf16\"]\n", "p.toml")
          .ok());
  const auto all = WithUserLadders(&base, {Pipe()});
  ASSERT_NE(all->Find("mine"), nullptr);
  const Preset* ladder = all->Find("user.pipe");
  ASSERT_NE(ladder, nullptr);
  kernels::Registry registry;
  for (kernels::Variant& v : kernels::user::Variants(Pipe())) registry.Add(std::move(v));
  const ResolvedGroup g = ResolvePresetGroup(ladder->groups[0], registry);
  EXPECT_EQ(g.resolved.size(), 3u);
  EXPECT_THAT(g.missing, ElementsAre("cublas_fp16"));  // this registry has no cuBLAS
  EXPECT_EQ(base.Find("user.pipe"), nullptr) << "the configured presets are not changed";
}

}  // namespace
}  // namespace ablation::core
