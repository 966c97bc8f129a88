// Tables for people fitted to a width: text columns wrap first, no line is ever wider.
#include "client/output/table.h"

#include <gtest/gtest.h>

#include <sstream>

namespace ablation::client {
namespace {

std::size_t Width(const std::string& line) {
  std::size_t w = 0;
  for (unsigned char c : line) w += (c & 0xC0) != 0x80;
  return w;
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

Table Measurements() {
  Table t;
  t.columns = {{"variant", "variant"},
               {"median_ms", "median ms", Align::kRight},
               {"status", "status"},
               {"error", "error"}};
  t.rows.push_back({"abl_L1_R1_bl0_s3_sw1", "1.250", "ok", ""});
  t.rows.push_back({"abl_L0_R0_bl0_s1_sw0", "-", "failed",
                    "worker died: illegal memory access at 0x7f00 (the kernel read past its "
                    "shared memory); the worker was restarted and the run went on"});
  return t;
}

TEST(TableTest, NoLimitKeepsOneLinePerRow) {
  const std::string text = RenderText(Measurements(), 0);
  EXPECT_EQ(Lines(text).size(), 4u);
  EXPECT_NE(text.find("the worker was restarted and the run went on"), std::string::npos);
}

TEST(TableTest, TheErrorColumnWrapsToTheWidth) {
  const std::string text = RenderText(Measurements(), 70);
  const std::vector<std::string> lines = Lines(text);
  ASSERT_GT(lines.size(), 4u) << text;  // the error took several lines
  for (const std::string& line : lines) EXPECT_LE(Width(line), 70u) << line;
  // Names and numbers are whole; the error's words all there, in order, broken at spaces.
  EXPECT_EQ(lines[3], "abl_L0_R0_bl0_s1_sw0          -  failed  worker died: illegal memory")
      << text;
  std::string error;
  for (std::size_t i = 3; i < lines.size(); ++i) error += lines[i].substr(41) + " ";
  EXPECT_EQ(error,
            "worker died: illegal memory access at 0x7f00 (the kernel read past its shared "
            "memory); the worker was restarted and the run went on ")
      << text;
}

TEST(TableTest, AnErrorWithNoRoomBesideTheRowGoesBelowIt) {
  // Under 20 columns left for the error: it leaves the table and follows its row, indented.
  const std::string text = RenderText(Measurements(), 56);
  for (const std::string& line : Lines(text)) EXPECT_LE(Width(line), 56u) << line;
  EXPECT_EQ(text,
            "variant               median ms  status\n"
            "--------------------  ---------  ------\n"
            "abl_L1_R1_bl0_s3_sw1      1.250  ok\n"
            "abl_L0_R0_bl0_s1_sw0          -  failed\n"
            "  error: worker died: illegal memory access at 0x7f00\n"
            "  (the kernel read past its shared memory); the worker\n"
            "  was restarted and the run went on\n");
}

TEST(TableTest, AFitThatCannotBeIsCutAtTheWidth) {
  // Below what the numbers need: the lines are cut, and say so.
  const std::string text = RenderText(Measurements(), 20);
  for (const std::string& line : Lines(text)) EXPECT_LE(Width(line), 20u) << line;
  EXPECT_NE(text.find("\u2026"), std::string::npos) << text;
}

TEST(TableTest, TheProcessWidthIsTheDefault) {
  SetTextWidth(50);
  for (const std::string& line : Lines(RenderText(Measurements()))) EXPECT_LE(Width(line), 50u);
  SetTextWidth(0);
  EXPECT_EQ(Lines(RenderText(Measurements())).size(), 4u);
}

TEST(TableTest, AWideTableThatFitsIsUntouched) {
  EXPECT_EQ(RenderText(Measurements(), 500), RenderText(Measurements(), 0));
}

}  // namespace
}  // namespace ablation::client
