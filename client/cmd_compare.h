// `compare RUN_A RUN_B [--threshold 3%]`: per variant x dtype x shape in both runs, the change of
// B against A and whether it is real (Welch's t-test on log sample times). Exit 1 when some
// change is a significant slowdown beyond the threshold, 0 otherwise (2: usage or RPC error).
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "client/options.h"

namespace ablation::client {

struct CompareOptions {
  std::string run_a;
  std::string run_b;
  std::string threshold = "3%";
};

CLI::App* SetupCompare(CLI::App& app, CompareOptions& options);
int ExecuteCompare(const CompareOptions& options, const CommandContext& context);

}  // namespace ablation::client
