// The one escaping of the client's text formats (client/escape.h): the tables and the report
// print through it, so these cases hold for both.
#include "client/output/escape.h"

#include <gtest/gtest.h>

namespace ablation::client {
namespace {

TEST(EscapeTest, OneLineTurnsLineBreaksAndTabsIntoSpaces) {
  EXPECT_EQ(OneLine("a\nb\tc\r\nd"), "a b c d");
  EXPECT_EQ(OneLine(""), "");
}

TEST(EscapeTest, MarkdownCellIsOneLineWithPipesEscaped) {
  EXPECT_EQ(MarkdownCell("x|y"), "x\\|y");
  EXPECT_EQ(MarkdownCell("error: a | b\r\nnext\tline"), "error: a \\| b next line");
  EXPECT_EQ(MarkdownCell("plain `code`"), "plain `code`");
}

TEST(EscapeTest, CsvFieldQuotesCommasQuotesAndLineBreaks) {
  EXPECT_EQ(CsvField("plain"), "plain");
  EXPECT_EQ(CsvField("a,b"), "\"a,b\"");
  EXPECT_EQ(CsvField("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(CsvField("two\nlines"), "\"two\nlines\"");
  EXPECT_EQ(CsvField("cr\r"), "\"cr\r\"");
  EXPECT_EQ(CsvField("esc\x1b[2J"), "esc\\x1b[2J");
  EXPECT_EQ(CsvField(""), "");
}

TEST(EscapeTest, HtmlEscapesMarkupAndQuotes) {
  EXPECT_EQ(HtmlEscape("<a & \"b\">"), "&lt;a &amp; &quot;b&quot;&gt;");
  EXPECT_EQ(HtmlEscape("it's"), "it&#39;s");
  EXPECT_EQ(HtmlEscape("cp.async: +12.1% [+11.9, +12.7]"), "cp.async: +12.1% [+11.9, +12.7]");
  EXPECT_EQ(HtmlEscape("</script>"), "&lt;/script&gt;");
}

TEST(EscapeTest, ControlCharactersFromTheDaemonNeverReachTheTerminalRaw) {
  // A tag or name that would set the terminal's title, clear it, or ring its bell.
  EXPECT_EQ(OneLine("a\x1b]0;x\x07"
                    "b"),
            "a\\x1b]0;x\\x07b");
  EXPECT_EQ(Printable("line\nnext\x1b[2J\x7f"), "line\nnext\\x1b[2J\\x7f");
  EXPECT_EQ(MarkdownCell("\x1b"), "\\x1b");
}

// A tag with a right-to-left override reads as another in a table or a spreadsheet ("Trojan
// Source"); every one of the reordering characters is shown as its code point instead.
TEST(EscapeTest, BidirectionalOverridesAndOtherUnicodeControlsAreShownAsCodePoints) {
  const std::string rlo = "nightly\xE2\x80\xAEgnp.exe";  // U+202E RIGHT-TO-LEFT OVERRIDE
  EXPECT_EQ(OneLine(rlo), "nightly\\u{202E}gnp.exe");
  EXPECT_EQ(MarkdownCell(rlo), "nightly\\u{202E}gnp.exe");
  EXPECT_EQ(CsvField(rlo), "nightly\\u{202E}gnp.exe");
  EXPECT_EQ(Printable(rlo), "nightly\\u{202E}gnp.exe");
  EXPECT_EQ(OneLine("a\xE2\x81\xA6"
                    "b\xE2\x81\xA9"),
            "a\\u{2066}b\\u{2069}");  // isolates
  EXPECT_EQ(OneLine("\xE2\x80\x8F"
                    "x\xD8\x9C"),
            "\\u{200F}x\\u{061C}");  // marks
  EXPECT_EQ(OneLine("c1\xC2\x9B"
                    "2J"),
            "c1\\u{009B}2J");  // C1 CSI: a terminal escape too
  EXPECT_EQ(OneLine("line\xE2\x80\xA8sep"), "line\\u{2028}sep");
  // Ordinary non-ASCII text is left alone.
  EXPECT_EQ(OneLine("caf\xC3\xA9 \xE2\x80\x94 \xE2\x82\xAC"),
            "caf\xC3\xA9 \xE2\x80\x94 \xE2\x82\xAC");
  // A sequence cut short at the end of the text is not read past it.
  EXPECT_EQ(OneLine("x\xE2\x80"), "x\xE2\x80");
}

}  // namespace
}  // namespace ablation::client
