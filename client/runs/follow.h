// Following a run: its RunAblation (or WatchRun) stream read to the end with progress lines, the
// first Ctrl-C turned into CancelRun, the measurements printed and the exit code it comes to; and
// a run queued and left running (--detach). What `run`, `sweep` and `watch` share.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "client/cli/exit_codes.h"
#include "client/cli/options.h"

namespace ablation::client {

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
