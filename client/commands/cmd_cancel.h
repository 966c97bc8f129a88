// `cancel RUN_ID`: asks the daemon to stop a queued or running run (CancelRun).
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "client/cli/options.h"

namespace ablation::client {

struct CancelOptions {
  std::string run_id;
};

CLI::App* SetupCancel(CLI::App& app, CancelOptions& options);
int ExecuteCancel(const CancelOptions& options, const CommandContext& context);

}  // namespace ablation::client
