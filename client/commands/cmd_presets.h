// `presets [NAME]`: the daemon's presets (ListPresets): what each runs, and which of its entries
// this daemon cannot resolve yet.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "client/cli/options.h"

namespace ablation::client {

struct PresetsOptions {
  std::string name;  // empty: all
};

CLI::App* SetupPresets(CLI::App& app, PresetsOptions& options);
int ExecutePresets(const PresetsOptions& options, const CommandContext& context);

// The table of all presets, and the entries of one (group, dtype, entry, resolves to, status).
}  // namespace ablation::client
