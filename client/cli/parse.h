// Parsing of the values users type: shapes and points in time. Pure, so they are unit-tested;
// the CLI validators in validators.h wrap them, and CLI11 prefixes the option's name.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "ablation/v1/ablation.pb.h"

namespace ablation::client {

// "MxNxK" (also with 'X'), or "N" for NxNxN. Every dimension a positive decimal integer.
// Returns an empty string on success, else what is wrong with `text` (another separator, as
// "4096*4096*4096", is named).
std::string ParseShape(std::string_view text, ablation::v1::Shape* shape);

// "" when `text` is a whole number from `low` to `high`, else what is wrong with it: "'abc' is
// not a number", "'1.5' is not a whole number", "'0' is below 1", "'200' is out of range: 1 to
// 100".
std::string CheckWholeNumber(std::string_view text, std::int64_t low, std::int64_t high);

// "" when `text` is a number (decimal, 0.5 or 2e-3) above 0, or from 0 when `zero_ok`, else what
// is wrong with it.
std::string CheckRealNumber(std::string_view text, bool zero_ok);

// ISO 8601 in UTC ("2026-11-30T12:00:00Z", "2026-11-30T12:00Z", "2026-11-30T12:00:00.250Z",
// an explicit offset "+02:00", or a date alone meaning its midnight UTC), or an integer count of
// milliseconds since the Unix epoch. Returns an empty string on success, else what is wrong.
std::string ParseTimeMs(std::string_view text, std::int64_t* unix_ms);

// "5" or "latest" (0, which GetRun reads as the latest run). Empty string on success.
std::string ParseRunId(std::string_view text, std::int64_t* run_id, bool allow_latest);

}  // namespace ablation::client

namespace ablation::client {

// For text a validator has already accepted; throws std::invalid_argument otherwise.
ablation::v1::Shape ParseShapeOrThrow(std::string_view text);
std::int64_t ParseTimeMsOrThrow(std::string_view text);

// Splits "NODE:ID", a fleet database's run (ID a positive number, NODE a host name,
// HOST/ID-PREFIX or a daemon id's prefix); "" on success, else what is wrong.
std::string ParseNodeRun(const std::string& text, std::string* node, std::int64_t* run_id);

}  // namespace ablation::client
