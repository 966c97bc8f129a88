// `budget VARIANT --arch sm_80|sm_86|sm_90`: the shared memory budget table of a variant
// (one stage up to its pipeline depth: bytes, blocks per SM, the occupancy cliff) (GetBudget).
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "client/cli/options.h"

namespace ablation::client {

struct BudgetOptions {
  std::string variant;
  std::string arch = "sm_80";
};

CLI::App* SetupBudget(CLI::App& app, BudgetOptions& options);
int ExecuteBudget(const BudgetOptions& options, const CommandContext& context);

}  // namespace ablation::client
