// `profile VARIANT... [--shape S] [--dtype D] [--metrics SET|LIST]`: the hardware counters of one
// launch of each variant's own kernel at each shape (the Profile RPC: Nsight Compute on the
// daemon's GPU node, between measurements, clocks left alone). Stored by the daemon; `show` and
// `results --metrics` read them back beside the timings.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "client/cli/options.h"
#include "client/cli/selection.h"

namespace ablation::client {

struct ProfileOptions : Selection {  // variants, shapes and dtype as run's (selection.h)
  std::vector<std::string> metrics;  // sets, concepts or raw ncu names; empty: the default set
  int device = 0;
  int warmup = 0;  // 0: the daemon's default (3)
};

CLI::App* SetupProfile(CLI::App& app, ProfileOptions& options);
ablation::v1::ProfileRequest BuildProfileRequest(const ProfileOptions& options);
int ExecuteProfile(const ProfileOptions& options, const CommandContext& context);

}  // namespace ablation::client
