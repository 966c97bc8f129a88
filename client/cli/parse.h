// Parsing of the values users type: shapes and points in time. Pure, so they are unit-tested;
// the CLI validators in validators.h wrap them, and CLI11 prefixes the option's name.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "ablation/v1/ablation.pb.h"

namespace ablation::client {

// "MxNxK" (also with 'X'), or "N" for NxNxN. Every dimension a positive decimal integer.
// Returns an empty string on success, else what is wrong with `text`.
std::string ParseShape(std::string_view text, ablation::v1::Shape* shape);

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
