// `show RUN_ID|latest`: one run's header and its measurements (GetRun).
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "client/cli/options.h"

namespace ablation::client {

struct ShowOptions {
  std::string run_id = "latest";
  bool samples = false;
  bool metrics = false;  // the hardware counters of each measurement, as columns
};

CLI::App* SetupShow(CLI::App& app, ShowOptions& options);
int ExecuteShow(const ShowOptions& options, const CommandContext& context);

}  // namespace ablation::client
