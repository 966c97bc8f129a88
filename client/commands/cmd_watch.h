// `watch RUN_ID`: follows a queued or running run again (WatchRun), after `run --detach` or from
// another terminal: progress as it happens, then the run's measurements. Ctrl-C cancels the run,
// as it does for `run`; a watch that merely disconnects leaves it running.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "client/cli/options.h"

namespace ablation::client {

struct WatchOptions {
  std::string run_id;
};

CLI::App* SetupWatch(CLI::App& app, WatchOptions& options);
int ExecuteWatch(const WatchOptions& options, const CommandContext& context);

}  // namespace ablation::client
