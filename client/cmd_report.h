// `report [--run ID|latest] [--format md|html|csv|json] [-o FILE]`: the result tables of a stored
// run (client/report/), from GetRun with the raw samples, the daemon's presets (their rungs are
// the tables) and its variants.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "client/options.h"

namespace ablation::client {

struct ReportOptions {
  std::string run_id = "latest";
  std::string format;  // md, html, csv, json; empty: from the global --format (table: md)
  std::string output;  // empty: stdout
};

CLI::App* SetupReport(CLI::App& app, ReportOptions& options);
int ExecuteReport(const ReportOptions& options, const CommandContext& context);

// GetRun with the raw samples (and the hardware counters, when asked); `run_id` as typed ("5",
// "latest"). Reports its own errors.
int FetchRunWithSamples(const std::string& run_id, const CommandContext& context,
                        ablation::v1::GetRunResponse* response, bool include_counters = false);

}  // namespace ablation::client
