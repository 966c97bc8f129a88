// The one escaping of the client's text formats (client/escape.h): the tables and the report
// print through it, so these cases hold for both.
#include "client/escape.h"

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
  EXPECT_EQ(CsvField(""), "");
}

TEST(EscapeTest, HtmlEscapesMarkupAndQuotes) {
  EXPECT_EQ(HtmlEscape("<a & \"b\">"), "&lt;a &amp; &quot;b&quot;&gt;");
  EXPECT_EQ(HtmlEscape("it's"), "it&#39;s");
  EXPECT_EQ(HtmlEscape("cp.async: +12.1% [+11.9, +12.7]"), "cp.async: +12.1% [+11.9, +12.7]");
  EXPECT_EQ(HtmlEscape("</script>"), "&lt;/script&gt;");
}

}  // namespace
}  // namespace ablation::client
