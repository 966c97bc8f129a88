#include "client/table.h"

#include <algorithm>

#include "client/escape.h"

namespace ablation::client {
namespace {

// Columns are measured in code points, so UTF-8 in error texts does not skew alignment.
std::size_t DisplayWidth(std::string_view text) {
  std::size_t width = 0;
  for (unsigned char c : text) width += (c & 0xC0) != 0x80;
  return width;
}

}  // namespace

std::string RenderText(const Table& table) {
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
  std::vector<std::size_t> widths(n, 0);
  for (const auto& line : lines) {
    for (std::size_t i = 0; i < n; ++i) widths[i] = std::max(widths[i], DisplayWidth(line[i]));
  }
  std::string text;
  auto emit = [&](const std::vector<std::string>& line) {
    std::string out;
    for (std::size_t i = 0; i < n; ++i) {
      if (i > 0) out += "  ";
      std::string pad(widths[i] - DisplayWidth(line[i]), ' ');
      out += table.columns[i].align == Align::kRight ? pad + line[i] : line[i] + pad;
    }
    out.erase(out.find_last_not_of(' ') + 1);
    text += out;
    text += '\n';
  };
  emit(lines[0]);
  std::vector<std::string> rule;
  for (std::size_t i = 0; i < n; ++i) rule.emplace_back(widths[i], '-');
  emit(rule);
  for (std::size_t r = 1; r < lines.size(); ++r) emit(lines[r]);
  return text;
}

std::string RenderMarkdown(const Table& table) {
  std::string text = "|";
  for (const Column& column : table.columns) text += " " + MarkdownCell(column.title) + " |";
  text += "\n|";
  for (const Column& column : table.columns) {
    text += column.align == Align::kRight ? " ---: |" : " --- |";
  }
  text += '\n';
  for (const auto& row : table.rows) {
    text += "|";
    for (std::size_t i = 0; i < table.columns.size(); ++i) {
      text += " " + (i < row.size() ? MarkdownCell(row[i].text) : std::string()) + " |";
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
      break;
  }
  return RenderText(table);
}
}  // namespace ablation::client
