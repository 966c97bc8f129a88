// The API's enums as words (client/enum_words.h): what tables print and flags parse.
#include "client/output/enum_words.h"

#include <gtest/gtest.h>

#include "ablation/v1/report.pb.h"

namespace ablation::client {
namespace {

namespace v1 = ::ablation::v1;

TEST(EnumWordsTest, TheValueNameWithoutItsPrefixInLowerCase) {
  EXPECT_EQ(EnumWord(v1::RUN_STATE_SUCCEEDED), "succeeded");
  EXPECT_EQ(EnumWord(v1::RUN_STATE_QUEUED), "queued");
  EXPECT_EQ(EnumWord(v1::MEASUREMENT_STATUS_OK), "ok");
  EXPECT_EQ(EnumWord(v1::L2_MODE_COLD), "cold");
  EXPECT_EQ(EnumWord(v1::REFERENCE_CPU), "cpu");
  EXPECT_EQ(EnumWord(v1::CLOCK_MODE_LOCK), "lock");
  EXPECT_EQ(EnumWord(v1::VERIFICATION_OUTCOME_NOT_CHECKED), "not_checked");
  EXPECT_EQ(EnumWord(v1::ROW_STATUS_MISSING), "missing");
  EXPECT_EQ(EnumWord(v1::RUN_KIND_VERIFY), "verify");
  // The zero value says nothing; a number the descriptor does not know is shown as it is.
  EXPECT_EQ(EnumWord(v1::RUN_STATE_UNSPECIFIED), "");
  EXPECT_EQ(EnumWord(static_cast<v1::RunState>(42)), "42");
}

TEST(EnumWordsTest, WordsAreEveryValueButTheZeroOne) {
  EXPECT_EQ(EnumWords(v1::RunState_descriptor()),
            (std::vector<std::string>{"queued", "running", "succeeded", "partial", "failed",
                                      "cancelled"}));
  EXPECT_EQ(EnumWords(v1::MeasurementStatus_descriptor()),
            (std::vector<std::string>{"ok", "failed", "skipped"}));
}

TEST(EnumWordsTest, ParsesAWordIntoItsValue) {
  v1::RunState state = v1::RUN_STATE_UNSPECIFIED;
  EXPECT_EQ(ParseEnumWord("--state", "succeeded", &state), "");
  EXPECT_EQ(state, v1::RUN_STATE_SUCCEEDED);
  EXPECT_EQ(ParseEnumWord("--state", "Cancelled", &state), "");
  EXPECT_EQ(state, v1::RUN_STATE_CANCELLED);
  v1::MeasurementStatus status = v1::MEASUREMENT_STATUS_UNSPECIFIED;
  EXPECT_EQ(ParseEnumWord("--status", "failed", &status), "");
  EXPECT_EQ(status, v1::MEASUREMENT_STATUS_FAILED);
}

TEST(EnumWordsTest, AnUnknownWordNamesTheFlagAndTheWords) {
  v1::RunState state = v1::RUN_STATE_QUEUED;
  EXPECT_EQ(ParseEnumWord("--state", "succeded", &state),
            "--state: 'succeded' is not a run state; use queued, running, succeeded, partial, "
            "failed or cancelled");
  EXPECT_EQ(state, v1::RUN_STATE_QUEUED);  // untouched
  EXPECT_EQ(ParseEnumWord("--state", "unspecified", &state),
            "--state: 'unspecified' is not a run state; use queued, running, succeeded, partial, "
            "failed or cancelled");
  v1::MeasurementStatus status;
  EXPECT_EQ(ParseEnumWord("--status", "", &status),
            "--status: '' is not a measurement status; use ok, failed or skipped");
  // Without a flag (CLI11 puts the option's name in front).
  EXPECT_EQ(ParseEnumWord("", "x", &status),
            "'x' is not a measurement status; use ok, failed or skipped");
}

TEST(EnumWordsTest, AgainstIsCpuCublasOrAVariant) {
  v1::Reference reference;
  std::string variant;
  EXPECT_EQ(ParseReference("--against", "cpu", &reference, &variant), "");
  EXPECT_EQ(reference, v1::REFERENCE_CPU);
  EXPECT_EQ(variant, "");
  EXPECT_EQ(ParseReference("--against", "cublas", &reference, &variant), "");
  EXPECT_EQ(reference, v1::REFERENCE_CUBLAS);
  EXPECT_EQ(ParseReference("--against", "L1_R1_s3", &reference, &variant), "");
  EXPECT_EQ(reference, v1::REFERENCE_VARIANT);
  EXPECT_EQ(variant, "L1_R1_s3");
  EXPECT_EQ(ParseReference("--against", "", &reference, &variant), "");
  EXPECT_EQ(reference, v1::REFERENCE_UNSPECIFIED);  // the daemon's default
  EXPECT_EQ(ParseReference("--against", "variant", &reference, &variant),
            "--against: name the variant itself; use cpu, cublas, gpu, own or a variant name");
  EXPECT_EQ(ReferenceWord(v1::REFERENCE_CUBLAS, ""), "cublas");
  EXPECT_EQ(ReferenceWord(v1::REFERENCE_VARIANT, "abl_L1_R1_bl0_s3_sw1"), "abl_L1_R1_bl0_s3_sw1");
}

}  // namespace
}  // namespace ablation::client
