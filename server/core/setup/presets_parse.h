// The TOML side of presets (presets_parse.cc): one preset table read into a Preset, or a status
// naming the file, line and key that is wrong. Internal to presets.cc.
#pragma once

#include <string>

#include <toml++/toml.h>

#include "server/core/base/status.h"
#include "server/core/setup/preset.h"

namespace ablation::core {

/// "presets.toml:12: ladder-b.variants[3]: expected a string".
Status ErrorAt(const std::string& origin, const toml::node& node, const std::string& key,
               const std::string& what);
/// `text` with every "{dtype}" replaced by `dtype`.
std::string Fill(std::string text, const std::string& dtype);

Status ReadPreset(const std::string& name, const toml::node& node, const std::string& origin,
                  Preset* preset);

}  // namespace ablation::core
