#include "client/output/format.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <ctime>

namespace ablation::client {

std::string FormatFixed(double value, int decimals) {
  if (!std::isfinite(value)) return FormatExact(value);
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", decimals, value);
  return buffer;
}

std::string FormatMs(double ms) { return FormatSignificant(ms, 4); }

std::string Int(std::int64_t value) { return std::to_string(value); }

std::string Dash() { return "-"; }

std::string FormatSignificant(double value, int digits) {
  if (!std::isfinite(value)) return FormatExact(value);
  if (value == 0) return "0";
  const int magnitude = static_cast<int>(std::floor(std::log10(std::fabs(value)))) + 1;
  int decimals = std::max(0, digits - magnitude);
  std::string text = FormatFixed(value, decimals);
  // Rounding can carry into one more integer digit (9.9996 -> 10.000): drop a decimal then.
  if (decimals > 0 && std::fabs(std::strtod(text.c_str(), nullptr)) >= std::pow(10.0, magnitude)) {
    text = FormatFixed(value, decimals - 1);
  }
  return text;
}

std::string FormatExact(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  char buffer[64];
  auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, value);
  return std::string(buffer, end);
}

std::string FormatShape(const v1::Shape& shape) {
  return std::to_string(shape.m()) + "x" + std::to_string(shape.n()) + "x" +
         std::to_string(shape.k());
}

std::string FormatTimeMs(std::int64_t unix_ms) {
  if (unix_ms <= 0) return "-";
  std::time_t seconds = static_cast<std::time_t>(unix_ms / 1000);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return buffer;
}

std::string FormatBytes(std::int64_t bytes) {
  if (bytes < 1024) return std::to_string(bytes) + " B";
  const char* units[] = {"KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes) / 1024;
  int unit = 0;
  while (value >= 1024 && unit < 3) {
    value /= 1024;
    ++unit;
  }
  std::string number = value == std::floor(value) ? FormatFixed(value, 0) : FormatFixed(value, 1);
  return number + " " + units[unit];
}

std::string Join(const std::vector<std::string>& items, std::string_view separator) {
  std::string text;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i > 0) text += separator;
    text += items[i];
  }
  return text;
}

std::string FormatScientific(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.3e", value);
  return buffer;
}

std::string FormatDuration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) seconds = 0;
  const long s = std::lround(seconds);
  char buffer[32];
  if (s < 60) {
    std::snprintf(buffer, sizeof buffer, "%lds", s);
  } else if (s < 3600) {
    std::snprintf(buffer, sizeof buffer, "%ldm%02lds", s / 60, s % 60);
  } else {
    std::snprintf(buffer, sizeof buffer, "%ldh%02ldm", s / 3600, (s % 3600) / 60);
  }
  return buffer;
}

}  // namespace ablation::client
