// CLI11 validators around parse.h, so bad values are refused before any call and the message
// names the option ("--shape: '4096x0x1': K must be positive").
#pragma once

#include <CLI/CLI.hpp>

namespace ablation::client {

CLI::Validator ShapeValidator();
CLI::Validator TimeValidator();
CLI::Validator RunIdValidator(bool allow_latest);
// A checked transformer for --format: case-insensitive name to Format, with a plain message.
CLI::Validator FormatTransformer();
// A fraction strictly between 0 and 1 (--target-noise).
CLI::Validator FractionValidator();

}  // namespace ablation::client
