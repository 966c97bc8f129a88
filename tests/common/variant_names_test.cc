#include "common/variant_names.h"

#include <gtest/gtest.h>

namespace ablation::common {
namespace {

TEST(CanonicalAblationName, ShortFormsTakeTheDocumentedDefaults) {
  EXPECT_EQ(CanonicalAblationName("L1_R1_s3"), "abl_L1_R1_bl0_s3_sw1");
  EXPECT_EQ(CanonicalAblationName("l0_r1_s1"), "abl_L0_R1_bl0_s1_sw1");
  EXPECT_EQ(CanonicalAblationName("L1_R1_s4_rb1"), "abl_L1_R1_bl0_s4_sw1_rb1");
  EXPECT_EQ(CanonicalAblationName("s2_R0_L1_bl1_sw0"), "abl_L1_R0_bl1_s2_sw0");
  EXPECT_EQ(CanonicalAblationName("abl_L1_R1_bl1_s2_sw0"), "abl_L1_R1_bl1_s2_sw0");
}

TEST(CanonicalAblationName, RefusesWhatIsNotAnAblationName) {
  for (const char* text : {"cublas_bf16", "L1_R1", "L1_L0_R1_s3", "L1_R1_s3_x2", "L1_R1_sx", "",
                           "abl_", "L1__R1_s3", "L1_R1_s3_", "L1_R1_s1234", "tiled_s3_sw1"}) {
    EXPECT_EQ(CanonicalAblationName(text), std::nullopt) << text;
  }
}

TEST(CanonicalVariantSelector, ResolvesShortNamesAndLeavesGlobsAndOtherNames) {
  EXPECT_EQ(CanonicalVariantSelector("L1_R1_s3"), "abl_L1_R1_bl0_s3_sw1");
  EXPECT_EQ(CanonicalVariantSelector("abl_L1_*"), "abl_L1_*");
  EXPECT_EQ(CanonicalVariantSelector("L1_R1_s?"), "L1_R1_s?");
  EXPECT_EQ(CanonicalVariantSelector("cublas_bf16"), "cublas_bf16");
  EXPECT_EQ(CanonicalVariantSelector("user.tiled.tile=16"), "user.tiled.tile=16");
}

TEST(ClosestNames, RanksByEditsToTheCanonicalSpelling) {
  const std::vector<std::string> known = {"cublas_bf16", "abl_L1_R1_bl0_s3_sw1",
                                          "abl_L1_R1_bl0_s4_sw1", "abl_L0_R0_bl0_s1_sw1"};
  // One field off: its neighbours first, then the rest.
  const std::vector<std::string> near = ClosestNames(known, "L1_R1_s2", 2);
  ASSERT_EQ(near.size(), 2u);
  EXPECT_EQ(near[0], "abl_L1_R1_bl0_s3_sw1");
  EXPECT_EQ(near[1], "abl_L1_R1_bl0_s4_sw1");
  EXPECT_EQ(ClosestNames(known, "cublas_bf61", 1), std::vector<std::string>{"cublas_bf16"});
  EXPECT_EQ(EditDistance("kitten", "sitting"), 3u);
}

}  // namespace
}  // namespace ablation::common
