// CLI11 validators around parse.h, so bad values are refused before any call and the message
// names the option ("--shape: '4096x0x1': K must be positive").
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <limits>

namespace ablation::client {

CLI::Validator ShapeValidator();
CLI::Validator TimeValidator();
CLI::Validator RunIdValidator(bool allow_latest);
// A checked transformer for --format: case-insensitive name to Format, with a plain message.
CLI::Validator FormatTransformer();
// A fraction strictly between 0 and 1 (--target-noise).
CLI::Validator FractionValidator();
// A whole number from `low` to `high`: "--rounds: 'abc' is not a number", not CLI11's "not in
// range" for what is no number at all.
CLI::Validator WholeNumber(std::int64_t low,
                           std::int64_t high = std::numeric_limits<std::int64_t>::max());
// A number above 0 (seconds), or from 0 with `zero_ok`.
CLI::Validator RealNumber(bool zero_ok = false);

}  // namespace ablation::client
