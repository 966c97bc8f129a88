#include <gtest/gtest.h>

#include "server/core/queries/advise.h"

namespace ablation::core {
namespace {

// The ablation kernel's tile: 128x128x32 bf16, 8 KB of A + 8 KB of B = 16 KB per stage.
Status AblationBudget(int stages, std::string_view arch, VariantBudget* out) {
  return BudgetForVariant("abl_L1_R1_bl0_s" + std::to_string(stages) + "_sw1", 128, 128, 32, 2,
                          stages, int64_t(stages) * 16384, arch, out);
}

TEST(Budget, SharedMemoryTableOnA100) {
  VariantBudget b;
  ASSERT_TRUE(AblationBudget(3, "sm_80", &b).ok());
  ASSERT_EQ(b.rows.size(), 4u);
  EXPECT_EQ(b.rows[0].bytes, 16 * 1024);
  EXPECT_EQ(b.rows[1].bytes, 32 * 1024);
  EXPECT_EQ(b.rows[2].bytes, 48 * 1024);
  EXPECT_EQ(b.rows[3].bytes, 64 * 1024);
  EXPECT_TRUE(b.rows[2].this_variant);
  EXPECT_EQ(b.rows[2].blocks_per_sm, 3);  // 164 KB / 48 KB
  EXPECT_FALSE(b.rows[2].over_cliff);     // cliff at 82 KB
  // 48 KB is exactly the default limit: allowed without the opt-in, with no room to spare.
  EXPECT_NE(b.verdict.find("at the 48 KB default limit"), std::string::npos) << b.verdict;
  VariantBudget four;
  ASSERT_TRUE(AblationBudget(4, "sm_80", &four).ok());
  EXPECT_NE(four.verdict.find("must opt in"), std::string::npos) << four.verdict;
}

TEST(Budget, Ga104CliffIsCrossedAboveFiftyKb) {
  VariantBudget b;
  ASSERT_TRUE(AblationBudget(4, "sm_86", &b).ok());
  EXPECT_EQ(b.cliff_bytes, 50 * 1024);
  EXPECT_FALSE(b.rows[2].over_cliff);  // 48 KB: 2 blocks
  EXPECT_EQ(b.rows[2].blocks_per_sm, 2);
  EXPECT_TRUE(b.rows[3].over_cliff);  // 64 KB: 1 block
  EXPECT_EQ(b.rows[3].blocks_per_sm, 1);
  EXPECT_NE(b.verdict.find("cliff"), std::string::npos) << b.verdict;
}

TEST(Budget, H200HasRoomForMore) {
  VariantBudget b;
  ASSERT_TRUE(AblationBudget(4, "sm_90", &b).ok());
  EXPECT_EQ(b.rows[3].blocks_per_sm, 3);  // 228 KB / 64 KB
  EXPECT_FALSE(b.rows[3].over_cliff);
}

TEST(Budget, RefusesUnknownArchAndLibraryEntries) {
  VariantBudget b;
  Status st = AblationBudget(2, "sm_75", &b);
  EXPECT_EQ(st.code(), Code::kInvalidArgument);
  EXPECT_NE(st.message().find("arch: unknown architecture 'sm_75'"), std::string::npos);
  st = BudgetForVariant("cublas_bf16", 0, 0, 0, 2, 0, 0, "sm_90", &b);
  EXPECT_NE(st.message().find("no budget"), std::string::npos) << st.message();
}

}  // namespace
}  // namespace ablation::core
