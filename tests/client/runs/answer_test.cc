// What `run` and `sweep` print at their end from the run's report (client/runs/answer.h).
#include "client/runs/answer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "client/report/text.h"

namespace ablation::client {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

const std::string kApart = std::string(report::kRoundsApartNote) +
                           "\n\n- 3 `x` bf16 16x4096x14336: rounds at 35.1 / 40.6 TFLOPS\n"
                           "- 4 `y` bf16 16x4096x14336: rounds at 40.2 / 42.3 TFLOPS\n";

TEST(Answer, TheLadderSectionsWithoutTheTableOfAllMeasurements) {
  const std::string md =
      "# Ablation report: run 1\n\nheader\n\n## 1. Ladder\n\n| A1 | +3.0% |\n"
      "\n## 2. All measurements of the run\n\n| 1 | x |\n"
      "\n## How the figures were computed\n\nmethod\n";
  const std::string answer = AnswerOfReport(md);
  EXPECT_THAT(answer, HasSubstr("## 1. Ladder\n\n| A1 | +3.0% |\n"));
  EXPECT_THAT(answer, Not(HasSubstr("All measurements")));
  EXPECT_THAT(answer, Not(HasSubstr("| 1 | x |")));
  EXPECT_THAT(answer, Not(HasSubstr("Rounds apart")));
}

TEST(Answer, ARunOutsideAnyLadderStillSaysWhoseRoundsAreApart) {
  const std::string md =
      "# Ablation report: run 2\n\nheader\n"
      "\n## 1. All measurements of the run\n\n| 1 | x |\n\n" +
      kApart + "\nHow each row ran:\n\n| conditions |\n";
  EXPECT_EQ(AnswerOfReport(md), kApart);
  // At the very end of the report too (no line after the list).
  EXPECT_EQ(AnswerOfReport("# r\n\n## 1. All measurements of the run\n\n" + kApart), kApart);
}

TEST(Answer, ALadderThatNamesTheItemsAlreadyIsNotRepeated) {
  const std::string ladder = "## 1. Ladder\n\n| A1 |\n\n" + kApart + "\n";
  const std::string md = "# r\n\n" + ladder + "## 2. All measurements of the run\n\n| 1 |\n\n" +
                         kApart + "\nHow each row ran:\n";
  const std::string answer = AnswerOfReport(md);
  EXPECT_EQ(answer.find(report::kRoundsApartNote), answer.rfind(report::kRoundsApartNote));
  EXPECT_THAT(answer, HasSubstr(ladder));
}

}  // namespace
}  // namespace ablation::client
