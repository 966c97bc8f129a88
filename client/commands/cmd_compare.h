// `compare RUN_A RUN_B [--threshold 3%] [--strict] [--allow-different-device]
// [--allow-different-regime]`: per variant x dtype x shape in both runs, the time change of B
// against A over their rounds and whether it is real, beside the clocks of each
// (client/report/compare.h). Exit 1 on a slowdown beyond the threshold that is not within noise
// (one the clocks explain only with --strict), or when either run is not complete (failed,
// partial, ...); 2 on runs from different devices, drivers or cuBLAS
// versions without --allow-different-device, on runs of different power regimes without
// --allow-different-regime, on bad usage or an RPC error; else 0.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "client/cli/options.h"

namespace ablation::client {

struct CompareOptions {
  std::string run_a;
  std::string run_b;
  std::string threshold = "3%";
  bool strict = false;                  // a slowdown the clocks explain is a regression too
  bool allow_different_device = false;  // compare runs whose setups differ, with a warning
  bool allow_different_regime = false;  // compare runs of different regimes, with a warning
};

CLI::App* SetupCompare(CLI::App& app, CompareOptions& options);
int ExecuteCompare(const CompareOptions& options, const CommandContext& context);

}  // namespace ablation::client
