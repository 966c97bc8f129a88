// `run --variant NAME ...`: queues a run and follows it live (RunAblation). Progress lines go to
// stderr as events arrive; the result table goes to stdout at the end.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <string>
#include <vector>

#include "client/exit_codes.h"
#include "client/options.h"
#include "client/selection.h"

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

CLI::App* SetupRun(CLI::App& app, RunOptions& options);
// The options of how to measure (timing, L2, clocks, rounds, device) that run and sweep share.
void AddMeasureOptions(CLI::App* sub, RunOptions& options);
// Those options into a request (everything but the variants, shapes, dtype and tags).
void ApplyMeasureOptions(const RunOptions& options, ablation::v1::RunRequest* request);
ablation::v1::RunRequest BuildRunRequest(const RunOptions& options);
int ExecuteRun(const RunOptions& options, const CommandContext& context);

// Called for each event of the stream with the measurements seen so far and the planned total,
// and once more at its end with an empty event. Empty: `run`'s progress lines (unless --quiet).
using RunProgress = std::function<void(const ablation::v1::RunEvent&, int seen, int total)>;
// Streams a run request (RunAblation), prints its results, returns the exit code as `run` does.
int FollowRun(const ablation::v1::RunRequest& request, const CommandContext& context,
              const RunProgress& progress);
// Queues the run, prints its id on stdout and leaves it running (`run --detach`).
int DetachRun(const ablation::v1::RunRequest& request, const CommandContext& context);

// What a run's stream (RunAblation or WatchRun) delivered.
struct RunStreamResult {
  RunOutcome outcome;
  std::vector<ablation::v1::Measurement> measurements;
  std::int64_t run_id = 0;
  std::string failed_reason;
  grpc::Status status;
};
// Reads the stream to its end, with progress; Ctrl-C sends CancelRun for the run. `seen_before`:
// measurements the run had stored before the stream began (a watch that joins late counts on
// from there).
RunStreamResult ReadRunStream(grpc::ClientContext& call,
                              grpc::ClientReaderInterface<ablation::v1::RunEvent>& reader,
                              const CommandContext& context, const RunProgress& progress,
                              int seen_before = 0);
// Prints the measurements and what became of the run; returns the exit code.
int ReportRunStream(const RunStreamResult& result, const CommandContext& context);

}  // namespace ablation::client
