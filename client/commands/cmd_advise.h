// `advise --bm --bn --bk --dtype --arch`: the compute/load ratio of a block tile, the pipelining
// rule, the shared memory budget against the architecture's cliff, and what this GPU measured.
#pragma once

#include <CLI/CLI.hpp>

#include "client/cli/options.h"

namespace ablation::client {

struct AdviseOptions {
  int bm = 0;
  int bn = 0;
  int bk = 0;
  std::string dtype;
  std::string arch;
  int device = 0;
};

CLI::App* SetupAdvise(CLI::App& app, AdviseOptions& options);
int ExecuteAdvise(const AdviseOptions& options, const CommandContext& context);

}  // namespace ablation::client
