// What a daemon serves of its presets (ListPresets) and variants (ListVariants), made with the
// daemon's own code (server/core/setup/presets.cc over the kernel catalog), so that the report's
// tests read the sections deploy/presets.toml defines, as a client gets them.
#pragma once

#include <string>
#include <vector>

#include "ablation/v1/ablation.pb.h"

namespace ablation::testing {

// The presets of `toml` (default: the built-in deploy/presets.toml) as ListPresets gives them.
// A parse error fails the calling test and gives none.
std::vector<ablation::v1::Preset> ServedPresets(const std::string& toml = "");
// Every registered variant as ListVariants gives it.
std::vector<ablation::v1::Variant> ServedVariants();

}  // namespace ablation::testing
