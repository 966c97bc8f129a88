#include "server/core/plan/variant_names.h"

#include <gtest/gtest.h>

#include "common/variant_names.h"
#include "kernels/names.h"
#include "kernels/user/manifest.h"

namespace ablation::core {
namespace {

TEST(ParseAblationName, ShortFormsTakeTheDocumentedDefaults) {
  auto n = ParseAblationName("L1_R1_s3");
  ASSERT_TRUE(n);
  EXPECT_EQ(n->Canonical(), "abl_L1_R1_bl0_s3_sw1");
  EXPECT_EQ(ParseAblationName("l0_r1_s1")->Canonical(), "abl_L0_R1_bl0_s1_sw1");
  EXPECT_EQ(ParseAblationName("L1_R1_s4_rb1")->Canonical(), "abl_L1_R1_bl0_s4_sw1_rb1");
  EXPECT_EQ(ParseAblationName("s2_R0_L1_bl1_sw0")->Canonical(), "abl_L1_R0_bl1_s2_sw0");
  EXPECT_EQ(ParseAblationName("abl_L1_R1_bl1_s2_sw0")->Canonical(), "abl_L1_R1_bl1_s2_sw0");
}

TEST(ParseAblationName, RejectsWhatIsNotAnAblationName) {
  EXPECT_FALSE(ParseAblationName("cublas_bf16"));
  EXPECT_FALSE(ParseAblationName("L1_R1"));        // stages missing
  EXPECT_FALSE(ParseAblationName("L1_L0_R1_s3"));  // a field twice
  EXPECT_FALSE(ParseAblationName("L1_R1_s3_x2"));  // unknown field
  EXPECT_FALSE(ParseAblationName("L1_R1_sx"));
  EXPECT_FALSE(ParseAblationName(""));
}

// The fleet's reads resolve names with common/variant_names.h (no daemon there): it must take
// every name the daemon takes, as the daemon takes it, and refuse what the daemon refuses.
TEST(ParseAblationName, AgreesWithTheCommonParserTheFleetReadsUse) {
  int checked = 0;
  for (const kernels::AblationConfig& c : kernels::AllAblationConfigs()) {
    const std::string canonical = kernels::AblationVariantName(c);
    const std::string fields[] = {
        "L" + std::to_string(c.load_mode), "R" + std::to_string(c.read_mode),
        "bl" + std::to_string(c.b_layout), "s" + std::to_string(c.stages),
        "sw" + std::to_string(c.swizzle),  c.rb ? "rb1" : "rb0"};
    for (const std::string& text : {canonical, fields[0] + "_" + fields[1] + "_" + fields[3],
                                    fields[5] + "_" + fields[3] + "_" + fields[4] + "_" +
                                        fields[2] + "_" + fields[1] + "_" + fields[0]}) {
      const auto daemon = ParseAblationName(text);
      const auto common = common::CanonicalAblationName(text);
      ASSERT_TRUE(daemon.has_value()) << text;
      EXPECT_EQ(common, daemon->Canonical()) << text;
      ++checked;
    }
  }
  EXPECT_EQ(checked, 3 * 128);
  for (const char* text : {"cublas_bf16", "L1_R1", "L1_L0_R1_s3", "L1_R1_s3_x2", "L1_R1_sx", "",
                           "L1__R1_s3", "L1_R1_s1234"}) {
    EXPECT_EQ(ParseAblationName(text).has_value(), common::CanonicalAblationName(text).has_value())
        << text;
  }
}

TEST(Glob, MatchesLikeAShell) {
  EXPECT_TRUE(GlobMatch("abl_*_s3_*", "abl_L1_R1_bl0_s3_sw1"));
  EXPECT_FALSE(GlobMatch("abl_*_s3_*", "abl_L1_R1_bl0_s2_sw1"));
  EXPECT_TRUE(GlobMatch("abl_L?_R1_*", "abl_L0_R1_bl1_s1_sw0"));
  EXPECT_TRUE(GlobMatch("abl_L[01]_R1_bl0_s1_sw1", "abl_L1_R1_bl0_s1_sw1"));
  EXPECT_TRUE(IsGlob("abl_*"));
  EXPECT_FALSE(IsGlob("L1_R1_s3"));
}

TEST(EditDistance, CountsEdits) {
  EXPECT_EQ(EditDistance("kitten", "sitting"), 3u);
  EXPECT_EQ(EditDistance("", "abc"), 3u);
  EXPECT_EQ(EditDistance("same", "same"), 0u);
}

class ResolveTest : public ::testing::Test {
 protected:
  void SetUp() override { kernels::RegisterCatalog(registry_); }
  kernels::Registry registry_;
};

TEST_F(ResolveTest, ResolvesCanonicalShortAndGlob) {
  std::vector<const kernels::Variant*> out;
  ASSERT_TRUE(Resolve(registry_, "abl_L0_R1_bl0_s1_sw1", "variants[0]", &out).ok());
  ASSERT_TRUE(Resolve(registry_, "L1_R1_s3", "variants[1]", &out).ok());
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0]->name, "abl_L0_R1_bl0_s1_sw1");
  EXPECT_EQ(out[1]->name, "abl_L1_R1_bl0_s3_sw1");
  out.clear();
  ASSERT_TRUE(Resolve(registry_, "abl_*_s3_*", "v", &out).ok());
  EXPECT_EQ(out.size(), 32u);  // 2 load x 2 read x 2 layout x 2 swizzle x 2 rb
  for (const auto* v : out) EXPECT_NE(v->name.find("_s3_"), std::string::npos);
}

TEST_F(ResolveTest, UnknownNamesAreRefusedWithTheClosestKnownOnes) {
  std::vector<const kernels::Variant*> out;
  Status st = Resolve(registry_, "L1_R1_s5", "variants[2]", &out);
  EXPECT_EQ(st.code(), Code::kInvalidArgument);
  EXPECT_NE(st.message().find("variants[2]: unknown variant 'L1_R1_s5'"), std::string::npos);
  EXPECT_NE(st.message().find("closest known: abl_L1_R1_bl0_s"), std::string::npos) << st.message();
  st = Resolve(registry_, "cublas_bf17", "variants[0]", &out);
  EXPECT_NE(st.message().find("cublas_bf16"), std::string::npos) << st.message();
  st = Resolve(registry_, "zzz_*", "variants[0]", &out);
  EXPECT_NE(st.message().find("matches no variant"), std::string::npos);
  EXPECT_TRUE(out.empty());
}

// A user kernel's versions: the newest under its plain names, also as @latest and @<its number>
// (canonical or short); an older one under its own; a version not held is named as such.
TEST_F(ResolveTest, AUserKernelsVersionsResolveByNumberAndLatest) {
  auto manifest = std::make_shared<kernels::user::Manifest>();
  ASSERT_EQ(kernels::user::ParseManifest(R"toml(
name = "rowblk"
entry = "rowblk"
[contract]
dtype = "bf16"
[launch]
block = "256"
grid = "ceil(M / TM)"
[[knob]]
name = "TM"
values = [2, 4]
)toml",
                                         "rowblk.toml", {}, manifest.get()),
            "");
  for (auto& v : kernels::user::Variants(manifest, 1, true)) registry_.Add(std::move(v));
  for (auto& v : kernels::user::Variants(manifest, 3, false)) registry_.Add(std::move(v));
  const auto one = [&](const std::string& name) -> std::string {
    std::vector<const kernels::Variant*> out;
    const Status st = Resolve(registry_, name, "variants[0]", &out);
    return st.ok() ? out.at(0)->name + " v" + out.at(0)->Param("version") : st.message();
  };
  EXPECT_EQ(one("user.rowblk.tm=4"), "user.rowblk.tm=4 v3");
  EXPECT_EQ(one("user.rowblk@latest.tm=4"), "user.rowblk.tm=4 v3");
  EXPECT_EQ(one("user.rowblk@3.tm=4"), "user.rowblk.tm=4 v3");
  EXPECT_EQ(one("rowblk@latest_tm4"), "user.rowblk.tm=4 v3");
  EXPECT_EQ(one("user.rowblk@1.tm=4"), "user.rowblk@1.tm=4 v1");
  EXPECT_EQ(one("rowblk@1_tm2"), "user.rowblk@1.tm=2 v1");
  EXPECT_EQ(one("user.rowblk@2.tm=4"),
            "variants[0]: 'user.rowblk@2.tm=4' names version '2' of user kernel rowblk, which is "
            "not held (its versions: 1, 3; or @latest)");
  std::vector<const kernels::Variant*> out;
  ASSERT_TRUE(Resolve(registry_, "user.rowblk.*", "v", &out).ok());
  EXPECT_EQ(out.size(), 2u);  // the newest's names: a glob of them takes no older version
}

}  // namespace
}  // namespace ablation::core
