// `sweep --preset NAME`: runs a preset in one run (RunAblation with RunRequest.preset; the daemon
// expands it, so groups of different dtypes share one run id, one tag and one report). Progress:
// one line redrawn in place on a terminal (done/total, the measurement in flight, ETA from the
// measured rate), plain lines when stderr is not a terminal. Exit codes as `run`.
#pragma once

#include "client/runs/measure_options.h"

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "client/cli/options.h"

namespace ablation::client {

struct SweepOptions {
  std::string preset;
  std::vector<std::string> tags;
  std::vector<std::string> shapes;  // empty: the preset's
  bool allow_missing = false;
  RunOptions measure;        // every timing, L2, clock, rounds and device option `run` takes
  bool all_devices = false;  // one run per GPU of the daemon, at once, tagged together
};

CLI::App* SetupSweep(CLI::App& app, SweepOptions& options);
ablation::v1::RunRequest BuildSweepRequest(const SweepOptions& options);
int ExecuteSweep(const SweepOptions& options, const CommandContext& context);

// "[12/40] abl_L1_R1_bl0_s3_sw1 bf16 4096x4096x4096 | 1m05s elapsed, ETA 2m31s"; `current` empty
// when nothing is in flight; ETA from elapsed / done (none before the first measurement).
std::string SweepProgressLine(int done, int total, const std::string& current, double elapsed_s);
// "42s", "3m05s", "1h02m".

}  // namespace ablation::client
