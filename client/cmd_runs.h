// `runs [--tag T] [--state S] [--limit N]`: recent runs, newest first (ListRuns, all pages).
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "client/options.h"

namespace ablation::client {

struct RunsOptions {
  std::string tag;
  ablation::v1::RunState state = ablation::v1::RUN_STATE_UNSPECIFIED;  // unspecified: any
  int limit = 50;                                                      // 0: all
};

CLI::App* SetupRuns(CLI::App& app, RunsOptions& options);
int ExecuteRuns(const RunsOptions& options, const CommandContext& context);

}  // namespace ablation::client
