#include "client/escape.h"

namespace ablation::client {

namespace {

// A control character the terminal would act on (ESC starts a sequence that can rewrite the
// screen or the title) shown as \xNN instead.
void AppendEscaped(std::string& out, unsigned char c) {
  static const char kHex[] = "0123456789abcdef";
  out += "\\x";
  out += kHex[c >> 4];
  out += kHex[c & 15];
}

bool IsControl(unsigned char c) { return c < 0x20 || c == 0x7f; }

}  // namespace

std::string OneLine(std::string_view text) {
  std::string line;
  line.reserve(text.size());
  for (char c : text) {
    if (c == '\r') continue;
    if (c == '\n' || c == '\t') {
      line += ' ';
    } else if (IsControl(static_cast<unsigned char>(c))) {
      AppendEscaped(line, static_cast<unsigned char>(c));
    } else {
      line += c;
    }
  }
  return line;
}

std::string Printable(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (c != '\n' && c != '\t' && IsControl(static_cast<unsigned char>(c)))
      AppendEscaped(out, static_cast<unsigned char>(c));
    else
      out += c;
  }
  return out;
}

std::string MarkdownCell(std::string_view text) {
  std::string out;
  for (char c : OneLine(text)) {
    if (c == '|') out += '\\';
    out += c;
  }
  return out;
}

std::string CsvField(std::string_view raw) {
  // Line breaks are CSV's own (quoted); other control characters are escaped as elsewhere.
  std::string text;
  for (char c : raw) {
    if (c != '\r' && c != '\n' && c != '\t' && IsControl(static_cast<unsigned char>(c)))
      AppendEscaped(text, static_cast<unsigned char>(c));
    else
      text += c;
  }
  if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
  std::string out = "\"";
  for (char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + '"';
}

std::string HtmlEscape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

}  // namespace ablation::client
