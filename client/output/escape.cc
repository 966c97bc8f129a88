#include "client/output/escape.h"

#include <cstdio>

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

// Written by hand, not with a Unicode library: the set is a fixed handful of code points (the
// bidirectional overrides, embeddings, isolates and marks, which reorder what a terminal or a
// spreadsheet shows so that a tag can read as another, "Trojan Source"; the C1 controls; the
// line and paragraph separators), each a fixed UTF-8 sequence. Returns the bytes of the one at
// `i` (appending it to `out` as \u{XXXX}), or 0 when there is none.
size_t AppendUnicodeControl(std::string& out, std::string_view text, size_t i) {
  const auto byte = [&](size_t k) {
    return k < text.size() ? static_cast<unsigned char>(text[k]) : 0;
  };
  unsigned code = 0;
  size_t length = 0;
  const unsigned char b0 = byte(i), b1 = byte(i + 1), b2 = byte(i + 2);
  if (b0 == 0xC2 && b1 >= 0x80 && b1 <= 0x9F) {
    code = b1, length = 2;  // C1 controls U+0080..U+009F
  } else if (b0 == 0xD8 && b1 == 0x9C) {
    code = 0x061C, length = 2;  // arabic letter mark
  } else if (b0 == 0xE2 && b1 == 0x80 && (b2 == 0x8E || b2 == 0x8F || (b2 >= 0xA8 && b2 <= 0xAE))) {
    code = 0x2000 + (b2 - 0x80), length = 3;  // LRM, RLM, U+2028..U+202E
  } else if (b0 == 0xE2 && b1 == 0x81 && b2 >= 0xA6 && b2 <= 0xA9) {
    code = 0x2040 + (b2 - 0x80), length = 3;  // isolates U+2066..U+2069
  }
  if (length == 0) return 0;
  char buf[16];
  std::snprintf(buf, sizeof buf, "\\u{%04X}", code);
  out += buf;
  return length;
}

}  // namespace

namespace {

// `text` with every control character escaped (\x1B, \u{202E}) except those `keep` says how to
// write: `keep(c, &out)` appends c its own way and returns true, or returns false to escape it.
template <class Keep>
std::string EscapeControls(std::string_view text, Keep keep) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (const size_t n = AppendUnicodeControl(out, text, i)) {
      i += n - 1;
      continue;
    }
    const char c = text[i];
    if (!IsControl(static_cast<unsigned char>(c)))
      out += c;
    else if (!keep(c, &out))
      AppendEscaped(out, static_cast<unsigned char>(c));
  }
  return out;
}

}  // namespace

std::string OneLine(std::string_view text) {
  // A carriage return is dropped, a newline or tab becomes a space.
  return EscapeControls(text, [](char c, std::string* out) {
    if (c == '\n' || c == '\t') *out += ' ';
    return c == '\r' || c == '\n' || c == '\t';
  });
}

std::string Printable(std::string_view text) {
  // Newlines and tabs stay.
  return EscapeControls(text, [](char c, std::string* out) {
    if (c == '\n' || c == '\t') *out += c;
    return c == '\n' || c == '\t';
  });
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
  for (size_t i = 0; i < raw.size(); ++i) {
    if (const size_t n = AppendUnicodeControl(text, raw, i)) {
      i += n - 1;
      continue;
    }
    const char c = raw[i];
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
