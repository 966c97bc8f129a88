// EnumText, the one place an enum becomes the text that dashboards read, and IsFinalRunState.
#include "db/records.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "db/error.h"
#include "tests/db/testdata/row_mapping_test.pb.h"

namespace ablation::db {
namespace {

using ::testing::UnorderedElementsAre;

// Every value's text of an enum, by number.
std::map<int, std::string> TextsOf(const google::protobuf::EnumDescriptor* type) {
  std::map<int, std::string> texts;
  for (int i = 0; i < type->value_count(); ++i) {
    texts[type->value(i)->number()] = EnumText(type->value(i));
  }
  return texts;
}

TEST(EnumTextTest, IsTheValueNameWithoutItsTypePrefixInLowerCase) {
  EXPECT_EQ(EnumText(v1::RUN_STATE_QUEUED), "queued");
  EXPECT_EQ(EnumText(v1::RUN_STATE_CANCELLED), "cancelled");
  EXPECT_EQ(EnumText(v1::RUN_KIND_VERIFY), "verify");
  EXPECT_EQ(EnumText(v1::MEASUREMENT_STATUS_SKIPPED), "skipped");
  EXPECT_EQ(EnumText(v1::L2_MODE_COLD), "cold");  // "L2Mode": the digit ends a word
  EXPECT_EQ(EnumText(v1::L2_MODE_HOT), "hot");
  EXPECT_EQ(EnumText(v1::REFERENCE_CUBLAS), "cublas");
  EXPECT_EQ(EnumText(v1::VERIFICATION_OUTCOME_NOT_CHECKED), "not_checked");
  EXPECT_EQ(EnumText(v1::CLOCK_MODE_LOCK), "lock");
  EXPECT_EQ(EnumText(testdata::FLAVOUR_SWEET_AND_SOUR), "sweet_and_sour");
}

TEST(EnumTextTest, UnspecifiedIsEmpty) {
  EXPECT_EQ(EnumText(v1::RUN_STATE_UNSPECIFIED), "");
  EXPECT_EQ(EnumText(v1::RUN_KIND_UNSPECIFIED), "");
  EXPECT_EQ(EnumText(v1::MEASUREMENT_STATUS_UNSPECIFIED), "");
  EXPECT_EQ(EnumText(v1::L2_MODE_UNSPECIFIED), "");
  EXPECT_EQ(EnumText(v1::REFERENCE_UNSPECIFIED), "");
  EXPECT_EQ(EnumText(v1::VERIFICATION_OUTCOME_UNSPECIFIED), "");
  EXPECT_EQ(EnumText(testdata::FLAVOUR_UNSPECIFIED), "");
}

// The texts that the tables' CHECK constraints and the dashboard views have always used: the
// enums must keep producing exactly these.
TEST(EnumTextTest, MatchesTheTextTheSchemaHasAlwaysHeld) {
  auto texts = [](const google::protobuf::EnumDescriptor* type) {
    std::vector<std::string> out;
    for (const auto& [number, text] : TextsOf(type)) out.push_back(text);
    return out;
  };
  EXPECT_THAT(
      texts(v1::RunState_descriptor()),
      UnorderedElementsAre("", "queued", "running", "succeeded", "partial", "failed", "cancelled"));
  EXPECT_THAT(texts(v1::RunKind_descriptor()), UnorderedElementsAre("", "ablation", "verify"));
  EXPECT_THAT(texts(v1::MeasurementStatus_descriptor()),
              UnorderedElementsAre("", "ok", "failed", "skipped"));
  EXPECT_THAT(texts(v1::L2Mode_descriptor()),
              UnorderedElementsAre("", "cold", "hot", "cold_rotated"));
  EXPECT_THAT(texts(v1::Reference_descriptor()),
              UnorderedElementsAre("", "cpu", "cublas", "variant", "gpu", "own"));
  EXPECT_THAT(texts(v1::VerificationOutcome_descriptor()),
              UnorderedElementsAre("", "passed", "failed", "not_checked"));
}

// Text back to the value, for every enum of the API: no two values share a text.
TEST(EnumTextTest, EveryEnumOfTheApiRoundTrips) {
  const auto* file = v1::RunState_descriptor()->file();
  ASSERT_GE(file->enum_type_count(), 7);
  for (int e = 0; e < file->enum_type_count(); ++e) {
    const auto* type = file->enum_type(e);
    std::map<std::string, int> back;
    for (const auto& [number, text] : TextsOf(type)) {
      EXPECT_TRUE(back.emplace(text, number).second) << type->name() << ": '" << text << "' twice";
      EXPECT_EQ(text.find_first_of("ABCDEFGHIJKLMNOPQRSTUVWXYZ"), std::string::npos) << text;
    }
    for (int i = 0; i < type->value_count(); ++i) {
      EXPECT_EQ(back.at(EnumText(type->value(i))), type->value(i)->number()) << type->name();
    }
  }
}

TEST(EnumTextTest, ANumberNoValueHasIsRefused) {
  EXPECT_THROW(EnumText(static_cast<v1::RunState>(42)), Error);
  try {
    EnumText(static_cast<const google::protobuf::EnumValueDescriptor*>(nullptr));
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Error::Code::kInvalidArgument);
  }
}

TEST(IsFinalRunStateTest, OnlyTheFourEndStates) {
  std::set<v1::RunState> final_states;
  for (int i = 0; i < v1::RunState_descriptor()->value_count(); ++i) {
    const auto state = static_cast<v1::RunState>(v1::RunState_descriptor()->value(i)->number());
    if (IsFinalRunState(state)) final_states.insert(state);
  }
  EXPECT_EQ(final_states, (std::set<v1::RunState>{v1::RUN_STATE_SUCCEEDED, v1::RUN_STATE_PARTIAL,
                                                  v1::RUN_STATE_FAILED, v1::RUN_STATE_CANCELLED}));
  EXPECT_FALSE(IsFinalRunState(static_cast<v1::RunState>(42)));
}

}  // namespace
}  // namespace ablation::db
