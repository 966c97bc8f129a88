// `sass VARIANT [--dtype D]`: the daemon disassembles the variant's kernel and checks its main
// loop (loads overlapping the compute, a barrier after it, compute count, spills).
#pragma once

#include <CLI/CLI.hpp>

#include "client/cli/options.h"

namespace ablation::client {

struct SassOptions {
  std::string variant;
  std::string dtype;
  int device = 0;
  std::string shape;  ///< MxNxK: the build that runs this problem (default: the variant's own)
};

CLI::App* SetupSass(CLI::App& app, SassOptions& options);
int ExecuteSass(const SassOptions& options, const CommandContext& context);

}  // namespace ablation::client
