// Values as people read them: numbers, shapes, times, sizes.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ablation/v1/ablation.pb.h"

namespace ablation::client {

namespace v1 = ::ablation::v1;

std::string FormatSignificant(double value, int digits);  // 4 -> 1.235, 12.35, 1235, 12346
std::string FormatFixed(double value, int decimals);
std::string FormatExact(double value);       // shortest text that reads back to the same double
std::string FormatScientific(double value);  // 1.500e-03
std::string FormatShape(const ablation::v1::Shape& shape);  // 4096x4096x4096
std::string FormatTimeMs(std::int64_t unix_ms);             // 2026-11-30T12:00:00Z, "-" for 0
std::string FormatBytes(std::int64_t bytes);                // 48 KiB, 99.5 KiB, 512 B
std::string Join(const std::vector<std::string>& items, std::string_view separator);
std::string FormatMs(double ms);      // 4 significant digits: 0.2066, 12.35
std::string Int(std::int64_t value);  // 4096
std::string Dash();                   // "-": a table's cell with no value

// A duration for progress lines: "42s", "3m07s", "1h05m" (rounded to the second).
std::string FormatDuration(double seconds);

}  // namespace ablation::client
