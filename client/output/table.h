// Tables for people (aligned text, Markdown) and spreadsheets (CSV), and the list renderer that
// gives JSON from the messages themselves instead.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "client/output/formats.h"
#include "client/output/json.h"

namespace ablation::client {

enum class Align { kLeft, kRight };

struct Column {
  std::string key;    // CSV header and JSON-like name: snake_case, stable
  std::string title;  // table and markdown header, for people
  Align align = Align::kLeft;
};

// One value, as people read it and as machines want it: "1.235" ms in a table, full precision in
// CSV; "-" for a missing value in a table, an empty field in CSV.
struct Cell {
  std::string text;
  std::optional<std::string> exact;  // unset: the text is exact already

  Cell() = default;
  Cell(std::string t) : text(std::move(t)) {}  // NOLINT: strings are cells
  Cell(const char* t) : text(t) {}             // NOLINT
  Cell(std::string t, std::string e) : text(std::move(t)), exact(std::move(e)) {}
  const std::string& Exact() const { return exact ? *exact : text; }
};

struct Table {
  std::vector<Column> columns;
  std::vector<std::vector<Cell>> rows;
};

// Aligned columns; numbers right-aligned. A table wider than `max_width` (0: no limit) wraps
// its text columns (left-aligned ones with spaces in them: errors, descriptions, verdicts) to
// at least 20; when that is not enough they leave the table and follow each row as indented
// "title: text" lines, and the other left-aligned columns wrap down to their titles (at least
// 10). One that still does not fit is cut at the width, each cut line ending in "…".
std::string RenderText(const Table& table, std::size_t max_width);
std::string RenderText(const Table& table);  // at TextWidth()
// How wide RenderText(table) makes tables: the terminal's, set once by RunApp (client/output.h);
// 0, the start, is no limit. Process-wide, so every command's tables fit without passing it on.
void SetTextWidth(std::size_t columns);
std::size_t TextWidth();
std::string RenderMarkdown(const Table& table);  // GitHub-flavoured pipe table
std::string RenderCsv(const Table& table);       // RFC 4180: CRLF, quoted where needed
// The table in a non-JSON format (kJson is the caller's business: it renders messages).
std::string RenderTableAs(Format format, const Table& table);

// A row of a two-column field / value table.
void AddField(Table& table, std::string key, std::string title, std::string value);

// Renders items as JSON from the messages (the envelope of `kind`, with `fields` beside the
// items), or in any other format through `to_table`.
template <class M>
std::string RenderList(Format format, std::string_view kind, const std::vector<M>& items,
                       Table (*to_table)(const std::vector<M>&),
                       const std::vector<JsonField>& fields = {}) {
  if (format == Format::kJson) return JsonEnvelope(kind, items, fields);
  return RenderTableAs(format, to_table(items));
}

}  // namespace ablation::client
