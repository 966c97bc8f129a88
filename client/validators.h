// CLI11 validators around parse.h, so bad values are refused before any call and the message
// names the option ("--shape: '4096x0x1': K must be positive").
#pragma once

#include <CLI/CLI.hpp>

namespace ablation::client {

CLI::Validator ShapeValidator();
CLI::Validator TimeValidator();
CLI::Validator RunIdValidator(bool allow_latest);

}  // namespace ablation::client
