// What `run` and `sweep` print at their end: RenderAnswerMarkdown of the run's report model
// (client/report/report.h), on made-up models.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "client/report/report.h"
#include "client/report/text.h"

namespace ablation::client::report {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

v1::ReportRow* AddAnswerRow(v1::ReportSection* s, const std::string& rung,
                            const std::string& variant, double tflops) {
  v1::ReportRow* r = s->add_rows();
  r->set_rung(rung);
  r->set_variant(variant);
  r->set_dtype("bf16");
  r->mutable_shape()->set_m(16);
  r->mutable_shape()->set_n(4096);
  r->mutable_shape()->set_k(14336);
  r->set_status(v1::ROW_STATUS_OK);
  r->set_tflops(tflops);
  return r;
}

void SetAnswerApart(v1::ReportRow* r, double low, double high) {
  v1::RoundsApart* a = r->mutable_rounds_apart();
  a->set_spread((high - low) / low);
  a->set_within(0.011);
  a->set_basis("cycles");
  a->add_round_tflops(low);
  a->add_round_tflops(high);
}

v1::ReportSection* AddAnswerSection(v1::Report* report, const std::string& id,
                                    const std::string& title, v1::SectionLayout layout) {
  v1::ReportSection* s = report->add_sections();
  s->set_id(id);
  s->set_title(title);
  s->set_scope("scope of " + id);
  s->set_layout(layout);
  return s;
}

// A run of one ladder (rungs A0 and A1) and the table of all its measurements.
v1::Report AnswerRun() {
  v1::Report report;
  report.mutable_run()->set_id(7);
  v1::ReportSection* ladder =
      AddAnswerSection(&report, "ladder-a", "Ladder A", v1::SECTION_LAYOUT_LADDER);
  AddAnswerRow(ladder, "A0", "a0", 30.0);
  AddAnswerRow(ladder, "A1", "a1", 33.0);
  v1::ReportSection* all =
      AddAnswerSection(&report, "all", "All measurements of the run", v1::SECTION_LAYOUT_ALL);
  AddAnswerRow(all, "1", "a0", 30.0);
  AddAnswerRow(all, "2", "a1", 33.0);
  AddAnswerRow(all, "3", "other", 41.0);
  return report;
}

TEST(Answer, TheLadderSectionsAndTheMethodWithoutTheTableOfAllMeasurements) {
  const v1::Report report = AnswerRun();
  const std::string answer = RenderAnswerMarkdown(report);
  EXPECT_THAT(answer, HasSubstr("## 1. Ladder A\n"));
  EXPECT_THAT(answer, HasSubstr("`a1`"));
  EXPECT_THAT(answer, HasSubstr("## How the figures were computed\n"));
  EXPECT_THAT(answer, Not(HasSubstr("All measurements")));
  EXPECT_THAT(answer, Not(HasSubstr("`other`")));
  EXPECT_THAT(answer, Not(HasSubstr(kRoundsApartNote)));
  EXPECT_THAT(answer, Not(HasSubstr("# Ablation report")));
  // The ladder's section reads as in the report, number and all.
  const std::string md = RenderReportMarkdown(report);
  const std::string section = answer.substr(0, answer.find("\n## How the figures"));
  EXPECT_THAT(md, HasSubstr(section));
}

TEST(Answer, ARunOutsideAnyLadderStillSaysWhoseRoundsAreApart) {
  v1::Report report = AnswerRun();
  report.mutable_sections()->DeleteSubrange(0, 1);  // no ladder: the table of all only
  EXPECT_EQ(RenderAnswerMarkdown(report), "");
  SetAnswerApart(report.mutable_sections(0)->mutable_rows(2), 35.1, 40.6);
  const std::string answer = RenderAnswerMarkdown(report);
  EXPECT_EQ(answer, std::string("\n") + kRoundsApartNote +
                        "\n\n- 3 `other` bf16 16x4096x14336: rounds at 35.1 / 40.6 TFLOPS, 15.7% "
                        "apart on SM cycles where a round's own spread is 1.1%\n");
  // The same list the report draws under its table of all measurements.
  EXPECT_THAT(RenderReportMarkdown(report), HasSubstr(answer));
}

TEST(Answer, AnItemALadderNamesIsNotRepeatedAndTheOthersAre) {
  v1::Report report = AnswerRun();
  SetAnswerApart(report.mutable_sections(0)->mutable_rows(1), 30.0, 33.0);  // A1 in the ladder
  SetAnswerApart(report.mutable_sections(1)->mutable_rows(1), 30.0, 33.0);  // the same item in all
  const std::string answer = RenderAnswerMarkdown(report);
  EXPECT_EQ(answer.find(kRoundsApartNote), answer.rfind(kRoundsApartNote));
  EXPECT_THAT(answer, HasSubstr("- A1 `a1` bf16"));
  EXPECT_THAT(answer, Not(HasSubstr("- 2 `a1`")));
  // An item apart outside the ladder is listed after the ladder's sections, once.
  SetAnswerApart(report.mutable_sections(1)->mutable_rows(2), 35.1, 40.6);
  const std::string both = RenderAnswerMarkdown(report);
  const size_t ladder = both.find("- A1 `a1`"), other = both.find("- 3 `other`");
  ASSERT_NE(other, std::string::npos) << both;
  EXPECT_LT(ladder, other);
  EXPECT_LT(other, both.find("## How the figures were computed"));
  EXPECT_THAT(both, Not(HasSubstr("- 2 `a1`")));
}

}  // namespace
}  // namespace ablation::client::report
