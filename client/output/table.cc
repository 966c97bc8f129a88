#include "client/output/table.h"

#include <algorithm>
#include <atomic>

#include "client/output/escape.h"

namespace ablation::client {
namespace {

std::atomic<std::size_t> g_text_width{0};

// Columns are measured in code points, so UTF-8 in error texts does not skew alignment.
std::size_t DisplayWidth(std::string_view text) {
  std::size_t width = 0;
  for (unsigned char c : text) width += (c & 0xC0) != 0x80;
  return width;
}

// The byte offset of code point `n` of `text` (its size when it has no more).
std::size_t CodePointOffset(std::string_view text, std::size_t n) {
  std::size_t count = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if ((static_cast<unsigned char>(text[i]) & 0xC0) == 0x80) continue;
    if (count++ == n) return i;
  }
  return text.size();
}

std::string_view Trim(std::string_view text) {
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
  return text;
}

// Lines of at most `width` code points, broken at spaces where there is one, else mid-word.
std::vector<std::string> Wrap(std::string_view text, std::size_t width) {
  std::vector<std::string> lines;
  while (width > 0 && DisplayWidth(text) > width) {
    const std::size_t cut = CodePointOffset(text, width);
    const std::size_t space = text.rfind(' ', cut);
    const bool at_space = space != std::string_view::npos && space > 0;
    const std::size_t take = at_space ? space : cut;
    lines.emplace_back(Trim(text.substr(0, take)));
    text = Trim(text.substr(take));
  }
  lines.emplace_back(text);
  return lines;
}

// The width of a row of `columns` (two spaces between them).
std::size_t RowWidth(const std::vector<std::size_t>& widths,
                     const std::vector<std::size_t>& columns) {
  std::size_t total = columns.empty() ? 0 : 2 * (columns.size() - 1);
  for (std::size_t i : columns) total += widths[i];
  return total;
}

// Narrows `columns` until the row fits `max_width`: text columns (`prose`) first, then the other
// left-aligned ones, the widest first, none below its floor; numbers keep their width. Returns
// whether it fits.
bool FitWidths(const Table& table, const std::vector<std::size_t>& columns,
               const std::vector<std::size_t>& floors, const std::vector<bool>& prose,
               std::size_t max_width, std::vector<std::size_t>* widths) {
  std::size_t total = RowWidth(*widths, columns);
  for (int pass = 0; pass < 2 && total > max_width; ++pass) {
    while (total > max_width) {
      std::size_t widest = widths->size();
      for (std::size_t i : columns) {
        const bool eligible = table.columns[i].align == Align::kLeft && prose[i] == (pass == 0) &&
                              (*widths)[i] > floors[i];
        if (eligible && (widest == widths->size() || (*widths)[i] > (*widths)[widest])) widest = i;
      }
      if (widest == widths->size()) break;
      --(*widths)[widest];
      --total;
    }
  }
  return total <= max_width;
}

}  // namespace

void SetTextWidth(std::size_t columns) { g_text_width.store(columns); }
std::size_t TextWidth() { return g_text_width.load(); }

std::string RenderText(const Table& table) { return RenderText(table, TextWidth()); }

std::string RenderText(const Table& table, std::size_t max_width) {
  const std::size_t n = table.columns.size();
  std::vector<std::vector<std::string>> lines;
  lines.reserve(table.rows.size() + 1);
  std::vector<std::string> header;
  for (const Column& column : table.columns) header.push_back(column.title);
  lines.push_back(std::move(header));
  for (const auto& row : table.rows) {
    std::vector<std::string> line;
    for (std::size_t i = 0; i < n; ++i) line.push_back(i < row.size() ? OneLine(row[i].text) : "");
    lines.push_back(std::move(line));
  }
  std::vector<std::size_t> widths(n, 0), floors(n, 0);
  std::vector<bool> prose(n, false);
  for (std::size_t r = 0; r < lines.size(); ++r) {
    for (std::size_t i = 0; i < n; ++i) {
      widths[i] = std::max(widths[i], DisplayWidth(lines[r][i]));
      if (r > 0 && lines[r][i].find(' ') != std::string::npos) prose[i] = true;
    }
  }
  for (std::size_t i = 0; i < n; ++i) {
    floors[i] = std::min(widths[i], std::max<std::size_t>(DisplayWidth(lines[0][i]), 10));
  }
  // Every column in place, the text columns wrapped to at least 20; else the text columns leave
  // the table, each row followed by them as indented "title: text" lines the full width, and
  // the other left-aligned columns wrap if still needed.
  std::vector<std::size_t> shown(n);
  for (std::size_t i = 0; i < n; ++i) shown[i] = i;
  std::vector<std::size_t> below;  // the text columns that left the table
  if (max_width > 0) {
    // In place, only the text columns narrow (names and numbers whole).
    std::vector<std::size_t> in_place = widths;
    for (std::size_t i = 0; i < n; ++i)
      if (prose[i]) in_place[i] = std::min(widths[i], std::max<std::size_t>(floors[i], 20));
    std::vector<std::size_t> fitted = widths;
    const bool some_prose = std::find(prose.begin(), prose.end(), true) != prose.end();
    const bool all_prose = std::find(prose.begin(), prose.end(), false) == prose.end();
    if (FitWidths(table, shown, in_place, prose, max_width, &fitted)) {
      widths = fitted;
    } else if (some_prose && !all_prose) {
      std::vector<std::size_t> kept;
      for (std::size_t i = 0; i < n; ++i) (prose[i] ? below : kept).push_back(i);
      shown = kept;
      FitWidths(table, shown, floors, prose, max_width, &widths);
    } else {  // nothing to take out (field / value tables): narrower text columns, else cut
      FitWidths(table, shown, floors, prose, max_width, &widths);
    }
  }
  std::string text;
  auto emit = [&](const std::vector<std::string>& line) {
    std::string out;
    for (std::size_t i : shown) {
      if (i != shown.front()) out += "  ";
      const std::size_t w = DisplayWidth(line[i]);
      std::string pad(widths[i] > w ? widths[i] - w : 0, ' ');
      out += table.columns[i].align == Align::kRight ? pad + line[i] : line[i] + pad;
    }
    out.erase(out.find_last_not_of(' ') + 1);
    if (max_width > 0 && DisplayWidth(out) > max_width) {
      out.erase(CodePointOffset(out, max_width - 1));
      out += "\u2026";  // …: the line went on
    }
    text += out;
    text += '\n';
  };
  // A row whose cells wrap takes several lines; the other cells are blank on the extra ones.
  auto emit_row = [&](const std::vector<std::string>& row) {
    std::vector<std::vector<std::string>> cells(n);
    std::size_t height = 1;
    for (std::size_t i : shown) {
      cells[i] = Wrap(row[i], widths[i]);
      height = std::max(height, cells[i].size());
    }
    for (std::size_t k = 0; k < height; ++k) {
      std::vector<std::string> line(n);
      for (std::size_t i = 0; i < n; ++i)
        if (k < cells[i].size()) line[i] = cells[i][k];
      emit(line);
    }
    for (std::size_t i : below) {
      if (row[i].empty()) continue;
      const std::size_t room = max_width > 4 ? max_width - 2 : max_width;
      for (const std::string& part : Wrap(lines[0][i] + ": " + row[i], room))
        text += "  " + part + '\n';
    }
  };
  emit(lines[0]);
  std::vector<std::string> rule;
  for (std::size_t i = 0; i < n; ++i) rule.emplace_back(widths[i], '-');
  emit(rule);
  for (std::size_t r = 1; r < lines.size(); ++r) emit_row(lines[r]);
  return text;
}

std::string RenderMarkdown(const Table& table) {
  std::string text = "|";
  // Appended piece by piece: GCC 12 warns (-Wstringop-overflow, a false positive) on
  // " " + std::string&& here.
  for (const Column& column : table.columns) {
    text += ' ';
    text += MarkdownCell(column.title);
    text += " |";
  }
  text += "\n|";
  for (const Column& column : table.columns) {
    text += column.align == Align::kRight ? " ---: |" : " --- |";
  }
  text += '\n';
  for (const auto& row : table.rows) {
    text += "|";
    for (std::size_t i = 0; i < table.columns.size(); ++i) {
      text += ' ';
      if (i < row.size()) text += MarkdownCell(row[i].text);
      text += " |";
    }
    text += '\n';
  }
  return text;
}
std::string RenderCsv(const Table& table) {
  std::string text;
  for (std::size_t i = 0; i < table.columns.size(); ++i) {
    if (i > 0) text += ',';
    text += CsvField(table.columns[i].key);
  }
  text += "\r\n";
  for (const auto& row : table.rows) {
    for (std::size_t i = 0; i < table.columns.size(); ++i) {
      if (i > 0) text += ',';
      if (i < row.size()) text += CsvField(row[i].Exact());
    }
    text += "\r\n";
  }
  return text;
}

void AddField(Table& table, std::string key, std::string title, std::string value) {
  table.rows.push_back({Cell(std::move(title), std::move(key)), Cell(std::move(value))});
}

std::string RenderTableAs(Format format, const Table& table) {
  switch (format) {
    case Format::kCsv:
      return RenderCsv(table);
    case Format::kMarkdown:
      return RenderMarkdown(table);
    case Format::kTable:
    case Format::kJson:
    case Format::kHtml:
      break;
  }
  return RenderText(table);
}
}  // namespace ablation::client
