// The shared statistics and enum words (common/): the definitions every process relies on to give
// the same figure and the same word for the same thing.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <vector>

#include <gtest/gtest.h>

#include "ablation/v1/ablation.pb.h"
#include "common/enum_words.h"
#include "common/limits.h"
#include "common/stats.h"
#include "common/time.h"

namespace ablation::common {
namespace {

TEST(Stats, QuantileIsType7AndClampsItsProbability) {
  const std::vector<double> sorted = {1, 2, 4, 8};
  EXPECT_DOUBLE_EQ(Quantile(sorted, 0.5), 3);      // between the middle two
  EXPECT_DOUBLE_EQ(Quantile(sorted, 0.25), 1.75);  // numpy.quantile([1,2,4,8], .25)
  EXPECT_DOUBLE_EQ(Quantile(sorted, 0.9), 6.8);    // numpy.quantile([1,2,4,8], .9)
  EXPECT_DOUBLE_EQ(Quantile(sorted, -1), 1);
  EXPECT_DOUBLE_EQ(Quantile(sorted, 2), 8);
  EXPECT_DOUBLE_EQ(Quantile({5}, 0.3), 5);
  EXPECT_TRUE(std::isnan(Quantile({}, 0.5)));
}

TEST(Stats, MedianOfAnyOrderAgreesWithTheSortedQuantile) {
  EXPECT_DOUBLE_EQ(Median({9, 1, 5}), 5);
  EXPECT_DOUBLE_EQ(Median({9, 1, 5, 3}), 4);
  EXPECT_TRUE(std::isnan(Median({})));
  std::vector<double> v = {0.31, 0.2, 0.27, 0.25, 0.29, 0.22, 0.3, 0.24};
  std::vector<double> sorted = v;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_DOUBLE_EQ(Median(v), Quantile(sorted, 0.5));
}

TEST(EnumWords, ValuesLoseTheirTypesPrefixAndTheZeroValueSaysNothing) {
  EXPECT_EQ(EnumWord(v1::RUN_STATE_SUCCEEDED), "succeeded");
  EXPECT_EQ(EnumWord(v1::RUN_STATE_UNSPECIFIED), "");
  EXPECT_EQ(EnumWord(v1::REGIME_SUSTAINED), "sustained");
  EXPECT_EQ(EnumWord(v1::MEASUREMENT_STATUS_OK), "ok");
  // A digit ends a word: L2Mode's values start L2_MODE_.
  EXPECT_EQ(EnumTypeWords(v1::L2Mode_descriptor()), (std::vector<std::string>{"l2", "mode"}));
  EXPECT_EQ(EnumWord(v1::L2Mode_descriptor(), 12345), "12345");  // open enums: a number stays one
  const std::vector<std::string> states = EnumWords(v1::RunState_descriptor());
  ASSERT_FALSE(states.empty());
  EXPECT_EQ(states.front(), "queued");
}

TEST(EnumWords, ParsingNamesTheFlagAndTheAlternatives) {
  v1::RunState state = v1::RUN_STATE_UNSPECIFIED;
  EXPECT_EQ(ParseEnumWord("--state", "SUCCEEDED", &state), "");
  EXPECT_EQ(state, v1::RUN_STATE_SUCCEEDED);
  const std::string error = ParseEnumWord("--state", "done", &state);
  EXPECT_EQ(error.rfind("--state: 'done' is not a run state; use queued, ", 0), 0u) << error;
  EXPECT_NE(error.find(" or cancelled"), std::string::npos) << error;
  v1::Regime regime = v1::REGIME_UNSPECIFIED;
  EXPECT_EQ(ParseEnumWord("", "unspecified", &regime).rfind("'unspecified' is not a regime", 0),
            0u);
}

TEST(EnumWords, AReferenceReadsAsItsWordItsVariantOrUnspecified) {
  EXPECT_EQ(ReferenceWord(v1::REFERENCE_CPU, ""), "cpu");
  EXPECT_EQ(ReferenceWord(v1::REFERENCE_GPU, ""), "gpu");
  EXPECT_EQ(ReferenceWord(v1::REFERENCE_CUBLAS, "ignored"), "cublas");
  EXPECT_EQ(ReferenceWord(v1::REFERENCE_VARIANT, "abl_L1_R1_bl0_s1_sw1"), "abl_L1_R1_bl0_s1_sw1");
  EXPECT_EQ(ReferenceWord(v1::REFERENCE_UNSPECIFIED, ""), "unspecified");
}

TEST(Limits, TheCpuReferenceStopsAtTwoToTheThirtyThree) {
  EXPECT_EQ(kCpuReferenceMaxWork, 8589934592.0);
  EXPECT_GT(2048.0 * 2048 * 2048, 0);
  EXPECT_LE(2048.0 * 2048 * 2048, kCpuReferenceMaxWork);
  EXPECT_GT(2048.0 * 2048 * 2049, kCpuReferenceMaxWork);
}

TEST(Time, NowIsEpochMillisecondsAndElapsedSecondsAreSteady) {
  const int64_t now = NowMs();
  EXPECT_GT(now, 1'700'000'000'000);  // after November 2023
  const auto start = std::chrono::steady_clock::now() - std::chrono::milliseconds(1500);
  const double elapsed = SecondsSince(start);
  EXPECT_GE(elapsed, 1.5);
  EXPECT_LT(elapsed, 60);
}

}  // namespace
}  // namespace ablation::common
