// `report [RUN|latest] [--format md|html|csv|json] [-o FILE]`: the result tables of a stored run
// (client/report/), from GetRun with the raw samples, the daemon's presets (their rungs are the
// tables) and its variants. --format and -o are the global options (html is report's alone).
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>

#include "client/cli/options.h"

namespace ablation::client {

struct ReportOptions {
  std::string run_id = "latest";  // the format and -o FILE are the global options
};

CLI::App* SetupReport(CLI::App& app, ReportOptions& options);
int ExecuteReport(const ReportOptions& options, const CommandContext& context);

}  // namespace ablation::client
