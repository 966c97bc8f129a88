// `report [RUN|latest] [--format md|html|csv|json] [-o FILE]`: the result tables of a stored run
// (client/report/), from GetRun with the raw samples, the daemon's presets (their rungs are the
// tables) and its variants. --format and -o are the global options (html is report's alone).
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>

#include "client/options.h"

namespace ablation::client {

struct ReportOptions {
  std::string run_id = "latest";  // the format and -o FILE are the global options
};

CLI::App* SetupReport(CLI::App& app, ReportOptions& options);
int ExecuteReport(const ReportOptions& options, const CommandContext& context);

/// The ladder sections of run `run_id`'s report (markdown, as `report` renders them), for the
/// end of `run` and `sweep`: what the run answers. "" when the run matches no ladder or cannot be
/// read (the command's own output has said what happened).
std::string LadderAnswer(std::int64_t run_id, const CommandContext& context);

// GetRun with the raw samples (and the hardware counters, when asked); `run_id` as typed ("5",
// "latest"). Reports its own errors.
int FetchRunWithSamples(const std::string& run_id, const CommandContext& context,
                        ablation::v1::GetRunResponse* response, bool include_counters = false);

}  // namespace ablation::client
