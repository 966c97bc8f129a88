// Escaping for the text formats the client writes, in one place so that the tables, the report
// and anything else agree: a Markdown table cell, a CSV field (RFC 4180), HTML text.
#pragma once

#include <string>
#include <string_view>

namespace ablation::client {

// One line: newlines and tabs become spaces, carriage returns go, other control characters
// (what a hostile name could use to drive the terminal) become \xNN, and Unicode's
// bidirectional overrides, isolates and marks, C1 controls and line separators (which reorder
// or break what is shown) \u{XXXX}. Printable and CsvField escape those the same way.
std::string OneLine(std::string_view text);
// Text from the daemon for the terminal: lines kept, other control characters as \xNN.
std::string Printable(std::string_view text);
// A cell of a GitHub-flavoured pipe table: one line, '|' escaped.
std::string MarkdownCell(std::string_view text);
// Quoted when it holds a comma, a quote or a line break; quotes doubled.
std::string CsvField(std::string_view text);
// Text or an attribute value in HTML: & < > " ' as entities.
std::string HtmlEscape(std::string_view text);

}  // namespace ablation::client
