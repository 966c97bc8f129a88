// How a run measures, as `run` and `sweep` take it on the command line: timing, L2, clocks, the
// regime, rounds, the device, profiling; and those options into a RunRequest.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "client/cli/options.h"
#include "client/cli/selection.h"

namespace ablation::client {

// The selection (variants, shapes: empty is 4096^3, dtype: empty is inferred by ExecuteRun)
// is selection.h's, as verify's and profile's.
struct RunOptions : Selection {
  std::vector<std::string> tags;
  bool verify = false;
  bool hot_l2 = false;
  int min_samples = 0;      // 0: the daemon's default
  double max_seconds = 0;   // 0: the daemon's default
  double target_noise = 0;  // 0: the daemon's default
  int device = 0;
  std::string lock_sm_clock;   // empty: observe clocks; else MHz, "base" or "max"
  std::string lock_mem_clock;  // same, for the memory clock
  bool flush_l2 = false;       // L2 cold by a flush per sample instead of rotating inputs
  bool fresh_inputs = false;   // each round on inputs allocated anew
  int rounds = 0;              // 0: the daemon's default (1; 3 for a preset)
  uint64_t order_seed = 0;     // 0: the daemon picks one
  bool detach = false;         // print the run id once queued and exit; the run goes on
  bool profile = false;        // each item's hardware counters after its timing
  std::vector<std::string> profile_metrics;  // sets, concepts or ncu names; empty: default
  std::string regime;             // sustained, burst or locked; empty: the daemon's default
  bool unpaired = false;          // each item in a window of its own
  double window_seconds = 0;      // 0: the daemon's default
  double burst_seconds = 0;       // 0: the daemon's default
  double settle_max_seconds = 0;  // 0: the daemon's default
  bool no_solo = false;           // no solo spans (the variants alone at the cap)
  double solo_seconds = 0;        // 0: the daemon's default
};

// The options of how to measure (timing, L2, clocks, rounds, device) that run and sweep share.
void AddMeasureOptions(CLI::App* sub, RunOptions& options);
// Those options into a request (everything but the variants, shapes, dtype and tags).
void ApplyMeasureOptions(const RunOptions& options, ablation::v1::RunRequest* request);
// The whole request: the selection (variants, shapes, dtype), the tags and those options.
ablation::v1::RunRequest BuildRunRequest(const RunOptions& options);

}  // namespace ablation::client
