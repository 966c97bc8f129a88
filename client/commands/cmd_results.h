// `results [filters]`: stored measurements across runs (QueryMeasurements, all pages).
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "client/cli/options.h"

namespace ablation::client {

struct ResultsOptions {
  std::string variant;
  std::string dtype;
  std::string shape;
  std::string run_id;  // as typed: "7" or "latest"; empty: every run
  std::string tag;
  std::string since;
  std::string until;
  ablation::v1::MeasurementStatus status = ablation::v1::MEASUREMENT_STATUS_UNSPECIFIED;  // any
  int limit = 100;                                                                        // 0: all
  bool oldest_first = false;  // default: newest first
  bool samples = false;
  bool metrics = false;  // the hardware counters of each measurement, as columns
  std::string node;      // --fleet-db only: one daemon's measurements (client/fleet.h)
};

CLI::App* SetupResults(CLI::App& app, ResultsOptions& options);
// The first page's request; exposed for tests.
ablation::v1::QueryMeasurementsRequest BuildResultsRequest(const ResultsOptions& options);
int ExecuteResults(const ResultsOptions& options, const CommandContext& context);

}  // namespace ablation::client
