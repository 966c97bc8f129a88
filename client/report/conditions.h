// How an item's rounds ran, and what its profiled launch counted: the report's and compare's
// view of a row beyond its times. Clocks, power and throttling from NVML (over the rounds), the
// occupancy the worker computed, the hardware counters of the one profiled launch, and the smem
// -> register micro-benchmark of a GEMM rung.
#pragma once

#include <string>
#include <vector>

#include "ablation/v1/report.pb.h"
#include "client/report/run_index.h"

namespace ablation::client::report {

// Clocks (effective and NVML mean / lowest), throttled and low-clock shares, power and
// temperature over the item's successful rounds.
v1::RunConditions Conditions(const Item& item);

// The rest of a measured row: conditions, occupancy and, of `counters` (concept names), those
// the item's profiled launch has, in that order.
void FillConditions(const Item& item, const std::vector<std::string>& counters, v1::ReportRow* row);

// The comparisons between a section's rows that the counters allow: each row's shared-load
// instructions against the first rung that issues ldmatrix and no ld.shared, and each rung's
// micro-benchmark in the run (RunIndex::MicroBenchmark). Only where the section shows
// shared_load_instructions.
void CompareLoads(const RunIndex& index, v1::ReportSection* section);

// The request a run was made from, as the daemon stored it (Run.request_json, unknown fields
// ignored); empty where the run has none or it does not parse.
v1::RunRequest StoredRequest(const v1::Run& run);

// How the run's inputs met the L2 and its rounds (ReportRun.inputs): "L2 cold, rotated input
// copies; inputs kept from window to window", the L2 modes with their row counts where the rows
// differ; "" where no measurement names its L2 mode. `request`: StoredRequest(run.run()).
std::string InputsText(const v1::GetRunResponse& run, const v1::RunRequest& request);

// The profiler of any row's counters ("ncu 2025.3.1.0"), "" when none has any.
std::string CountersTool(const v1::Report& report);

}  // namespace ablation::client::report
