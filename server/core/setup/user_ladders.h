// A user kernel's ladder as a preset: what `sweep --preset user.<kernel>` runs and `report` draws
// like the built-in ladders. Rung U0 has every knob at its first value; each next rung sets one
// more knob, in the manifest's order, to its last value (kernels/user/manifest.h Ladder); cuBLAS of
// the kernel's dtype is the reference rung. Shapes: 4096^3 unless the run gives its own.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "kernels/user/manifest.h"
#include "server/core/setup/presets.h"

namespace ablation::core {

/// "user.<kernel>": a name no presets file can give (a '.' is not allowed there).
Preset UserLadderPreset(const kernels::user::Manifest& manifest);

/// "user.<kernel>.versions": every version of a kernel held in two or more, each at every knob
/// set it has, oldest first (a run of them measures the versions paired, window by window; the
/// client's report draws their change from the run's own builds, so the preset has no report).
using VersionLadderSpec = kernels::user::VersionLadder;
Preset VersionLadderPreset(const VersionLadderSpec& spec);

/// `base`, one ladder preset per manifest and one versions preset per kernel of two versions.
std::shared_ptr<const Presets> WithUserLadders(
    const Presets* base, const std::vector<std::shared_ptr<const kernels::user::Manifest>>& kernels,
    const std::vector<VersionLadderSpec>& versions = {});

}  // namespace ablation::core
