// `run --variant NAME ...`: queues a run and follows it live (RunAblation). Progress lines go to
// stderr as events arrive; the result table goes to stdout at the end.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <string>
#include <vector>

#include "client/cli/options.h"
#include "client/runs/measure_options.h"

namespace ablation::client {

CLI::App* SetupRun(CLI::App& app, RunOptions& options);
int ExecuteRun(const RunOptions& options, const CommandContext& context);

}  // namespace ablation::client
