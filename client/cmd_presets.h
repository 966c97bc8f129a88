// `presets [NAME]`: the daemon's presets (ListPresets): what each runs, and which of its entries
// this daemon cannot resolve yet.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "client/options.h"
#include "client/render.h"

namespace ablation::client {

struct PresetsOptions {
  std::string name;  // empty: all
};

CLI::App* SetupPresets(CLI::App& app, PresetsOptions& options);
int ExecutePresets(const PresetsOptions& options, const CommandContext& context);

// The table of all presets, and the entries of one (group, dtype, entry, resolves to, status).
Table PresetsTable(const std::vector<ablation::v1::Preset>& presets);
Table PresetEntriesTable(const ablation::v1::Preset& preset);
// "pipe_ldg_f16_* (fp16), ..." for every missing entry; empty if none.
std::vector<std::string> MissingEntries(const ablation::v1::Preset& preset);

}  // namespace ablation::client
