// `runs [--tag T] [--state S] [--limit N]`: recent runs, newest first: the daemon's (ListRuns, all
// pages), or with --fleet-db every daemon's, each naming its node.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "client/cli/options.h"

namespace ablation::client {

struct RunsOptions {
  std::string tag;
  ablation::v1::RunState state = ablation::v1::RUN_STATE_UNSPECIFIED;  // unspecified: any
  int limit = 50;                                                      // 0: all
  std::string node;  // with --fleet-db: one daemon's runs
};

CLI::App* SetupRuns(CLI::App& app, RunsOptions& options);
int ExecuteRuns(const RunsOptions& options, const CommandContext& context);

}  // namespace ablation::client
