#include "client/cli/parse.h"

#include <charconv>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

namespace ablation::client {
namespace {

std::string Quote(std::string_view text) { return "'" + std::string(text) + "'"; }

bool AllDigits(std::string_view text) {
  if (text.empty()) return false;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

// A positive dimension; `what` names it in the message ("M").
std::string ParseDimension(std::string_view whole, std::string_view part, std::string_view what,
                           std::int64_t* value) {
  std::string prefix = Quote(whole) + ": " + std::string(what);
  if (part.empty()) return prefix + " is missing";
  if (part.front() == '-' && AllDigits(part.substr(1))) return prefix + " must be positive";
  if (!AllDigits(part)) return prefix + " is not a number (" + Quote(part) + ")";
  auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), *value);
  if (ec == std::errc::result_out_of_range) return prefix + " is too large";
  if (ec != std::errc() || end != part.data() + part.size()) {
    return prefix + " is not a number (" + Quote(part) + ")";
  }
  if (*value <= 0) return prefix + " must be positive";
  return {};
}

// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil).
std::int64_t DaysFromCivil(std::int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

bool IsLeap(int y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

int DaysInMonth(int y, int m) {
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return m == 2 && IsLeap(y) ? 29 : kDays[m - 1];
}

// Reads exactly `width` digits at `pos`.
bool ReadFixed(std::string_view s, std::size_t pos, std::size_t width, int* value) {
  if (pos + width > s.size()) return false;
  std::string_view digits = s.substr(pos, width);
  if (!AllDigits(digits)) return false;
  std::from_chars(digits.data(), digits.data() + width, *value);
  return true;
}

// The separator of "4096*4096*4096" (or "4096,4096,4096", "4096×4096×4096"): the first run of
// characters between two digits that is neither a digit nor 'x'; "" when there is none. A '.'
// belongs to a number ("1.5x2x3" is a dimension that is not a whole number, no separator).
std::string ForeignSeparator(std::string_view text) {
  const auto digit = [](char c) { return (c >= '0' && c <= '9') || c == '.'; };
  for (std::size_t i = 1; i < text.size(); ++i) {
    if (!digit(text[i - 1]) || digit(text[i]) || text[i] == 'x' || text[i] == 'X') continue;
    std::size_t end = i;
    while (end < text.size() && !digit(text[end]) && text[end] != 'x' && text[end] != 'X') ++end;
    if (end < text.size() && digit(text[end])) return std::string(text.substr(i, end - i));
  }
  return "";
}

}  // namespace

std::string ParseShape(std::string_view text, ablation::v1::Shape* shape) {
  if (text.empty()) return "empty shape; expected MxNxK (e.g. 4096x4096x4096) or N for NxNxN";
  if (std::string separator = ForeignSeparator(text); !separator.empty())
    return Quote(text) + ": separate M, N and K with 'x', not " + Quote(separator) +
           " (e.g. 4096x4096x4096)";
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= text.size(); ++i) {
    if (i == text.size() || text[i] == 'x' || text[i] == 'X') {
      parts.push_back(text.substr(start, i - start));
      start = i + 1;
    }
  }
  if (parts.size() != 1 && parts.size() != 3) {
    return Quote(text) + ": expected MxNxK (e.g. 4096x4096x4096) or N for NxNxN";
  }
  std::int64_t dims[3];
  static constexpr std::string_view kNames[] = {"M", "N", "K"};
  for (std::size_t i = 0; i < parts.size(); ++i) {
    std::string_view what = parts.size() == 1 ? std::string_view("the size") : kNames[i];
    if (std::string error = ParseDimension(text, parts[i], what, &dims[i]); !error.empty()) {
      return error;
    }
  }
  if (parts.size() == 1) dims[1] = dims[2] = dims[0];
  shape->set_m(dims[0]);
  shape->set_n(dims[1]);
  shape->set_k(dims[2]);
  return {};
}

std::string CheckWholeNumber(std::string_view text, std::int64_t low, std::int64_t high) {
  const std::string_view digits = !text.empty() && text.front() == '-' ? text.substr(1) : text;
  if (!AllDigits(digits)) {
    double real = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), real);
    if (ec == std::errc() && end == text.data() + text.size())
      return Quote(text) + " is not a whole number";
    return Quote(text) + " is not a number";
  }
  std::int64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  const bool too_large = ec == std::errc::result_out_of_range;
  if (!too_large && value >= low && value <= high) return {};
  if (high == std::numeric_limits<std::int64_t>::max())
    return Quote(text) + " is below " + std::to_string(low);
  return Quote(text) + " is out of range: " + std::to_string(low) + " to " + std::to_string(high);
}

std::string CheckRealNumber(std::string_view text, bool zero_ok) {
  double value = 0;
  const char* first = text.data() + (!text.empty() && text.front() == '+' ? 1 : 0);
  auto [end, ec] = std::from_chars(first, text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() ||
      !std::isfinite(value))
    return Quote(text) + " is not a number";
  if (value < 0 || (value == 0 && !zero_ok))
    return Quote(text) + (zero_ok ? " is below 0" : " must be more than 0");
  return {};
}

std::string ParseTimeMs(std::string_view text, std::int64_t* unix_ms) {
  static constexpr std::string_view kExpected =
      "expected ISO 8601 UTC (2026-11-30, 2026-11-30T12:00:00Z) or milliseconds since the Unix "
      "epoch";
  if (text.empty()) return std::string("empty time; ") + std::string(kExpected);
  if (AllDigits(text)) {
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *unix_ms);
    if (ec != std::errc()) return Quote(text) + ": too large for milliseconds since the epoch";
    return {};
  }
  const std::string bad = Quote(text) + ": " + std::string(kExpected);
  int year, month, day;
  if (text.size() < 10 || !ReadFixed(text, 0, 4, &year) || text[4] != '-' ||
      !ReadFixed(text, 5, 2, &month) || text[7] != '-' || !ReadFixed(text, 8, 2, &day)) {
    return bad;
  }
  if (month < 1 || month > 12) return Quote(text) + ": month must be 01..12";
  if (day < 1 || day > DaysInMonth(year, month)) {
    return Quote(text) + ": day out of range for that month";
  }
  std::int64_t ms =
      DaysFromCivil(year, static_cast<unsigned>(month), static_cast<unsigned>(day)) * 86'400'000;
  if (text.size() == 10) {
    *unix_ms = ms;
    return {};
  }
  std::size_t pos = 10;
  if (text[pos] != 'T' && text[pos] != 't' && text[pos] != ' ') return bad;
  ++pos;
  int hour, minute, second = 0, millis = 0;
  if (!ReadFixed(text, pos, 2, &hour) || pos + 2 >= text.size() || text[pos + 2] != ':' ||
      !ReadFixed(text, pos + 3, 2, &minute)) {
    return bad;
  }
  pos += 5;
  if (pos < text.size() && text[pos] == ':') {
    if (!ReadFixed(text, pos + 1, 2, &second)) return bad;
    pos += 3;
    if (pos < text.size() && (text[pos] == '.' || text[pos] == ',')) {
      // Fractions of a second: milliseconds kept, finer digits dropped.
      ++pos;
      std::size_t digits = 0;
      int scale = 100;
      while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') {
        if (digits < 3) millis += (text[pos] - '0') * scale;
        scale /= 10;
        ++digits;
        ++pos;
      }
      if (digits == 0) return bad;
    }
  }
  if (hour > 23 || minute > 59 || second > 59) return Quote(text) + ": time of day out of range";
  ms += ((hour * 60LL + minute) * 60 + second) * 1000 + millis;
  if (pos == text.size()) {
    // A local time would be read differently on the daemon's machine and the user's.
    return Quote(text) + ": give the time zone: end with Z for UTC (or an offset such as +02:00)";
  }
  if (text[pos] == 'Z' || text[pos] == 'z') {
    if (pos + 1 != text.size()) return bad;
  } else if (text[pos] == '+' || text[pos] == '-') {
    int off_h, off_m;
    if (text.size() != pos + 6 || !ReadFixed(text, pos + 1, 2, &off_h) || text[pos + 3] != ':' ||
        !ReadFixed(text, pos + 4, 2, &off_m) || off_h > 23 || off_m > 59) {
      return bad;
    }
    const std::int64_t offset_ms = (off_h * 60LL + off_m) * 60'000;
    ms += text[pos] == '+' ? -offset_ms : offset_ms;
  } else {
    return bad;
  }
  *unix_ms = ms;
  return {};
}

std::string ParseRunId(std::string_view text, std::int64_t* run_id, bool allow_latest) {
  if (allow_latest && text == "latest") {
    *run_id = 0;
    return {};
  }
  std::string expected =
      allow_latest ? "a run id (a positive integer) or 'latest'" : "a run id (a positive integer)";
  if (!AllDigits(text)) return Quote(text) + ": expected " + expected;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *run_id);
  if (ec != std::errc() || *run_id <= 0) return Quote(text) + ": expected " + expected;
  return {};
}

}  // namespace ablation::client

namespace ablation::client {

ablation::v1::Shape ParseShapeOrThrow(std::string_view text) {
  ablation::v1::Shape shape;
  if (std::string error = ParseShape(text, &shape); !error.empty()) {
    throw std::invalid_argument(error);
  }
  return shape;
}

std::int64_t ParseTimeMsOrThrow(std::string_view text) {
  std::int64_t ms = 0;
  if (std::string error = ParseTimeMs(text, &ms); !error.empty()) {
    throw std::invalid_argument(error);
  }
  return ms;
}

std::string ParseNodeRun(const std::string& text, std::string* node, std::int64_t* run_id) {
  const size_t colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == text.size()) {
    return "'" + text + "' names no fleet run; use NODE:RUN_ID (a host name, HOST/ID-PREFIX or a " +
           "daemon id's prefix, then the run's id on that daemon)";
  }
  const std::string id = text.substr(colon + 1);
  if (id.find_first_not_of("0123456789") != std::string::npos || id.size() > 18 ||
      std::stoll(id) <= 0) {
    return "'" + id + "' in '" + text + "' is not a run id (a positive number)";
  }
  *node = text.substr(0, colon);
  *run_id = std::stoll(id);
  return "";
}

}  // namespace ablation::client
