// `history VARIANT [filters]`: a variant's series over the stored runs, one per hardware
// fingerprint, dtype, shape and regime, with the change points the daemon found (GetHistory).
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "client/cli/options.h"

namespace ablation::client {

struct HistoryOptions {
  std::string variant;  // a name, short name or glob
  std::string dtype;
  std::string shape;
  std::string device;  // a GPU index or UUID
  std::string regime;  // sustained, burst, locked; empty: any
  std::string since;
  std::string tag;
  std::int64_t run_id = 0;  // only the series with a point in this run
  std::string node;         // --fleet-db only: one daemon's points (client/fleet.h)
};

CLI::App* SetupHistory(CLI::App& app, HistoryOptions& options);
// Exposed for tests.
ablation::v1::HistoryRequest BuildHistoryRequest(const HistoryOptions& options);
// The CSV: one row per point, fixed columns.
std::string HistoryCsv(const ablation::v1::HistoryResponse& history);
// The request in words, the HTML page's title: "L1_R1_s3, shape 4096, tag nightly".
std::string HistoryTitle(const HistoryOptions& options);
int ExecuteHistory(const HistoryOptions& options, const CommandContext& context);

}  // namespace ablation::client
