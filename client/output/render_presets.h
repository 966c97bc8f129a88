// The daemon's presets as tables (ListPresets): one line each, or one preset's entries with what
// they resolve to; and the entries a daemon lacks. Pure functions of the API's messages.
#pragma once

#include <string>
#include <vector>

#include "ablation/v1/ablation.pb.h"
#include "client/output/table.h"

namespace ablation::client {

Table PresetsTable(const std::vector<ablation::v1::Preset>& presets);
Table PresetEntriesTable(const ablation::v1::Preset& preset);
// "pipe_ldg_f16_* (fp16), ..." for every missing entry; empty if none.
std::vector<std::string> MissingEntries(const ablation::v1::Preset& preset);

}  // namespace ablation::client
