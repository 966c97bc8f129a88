// A user kernel's versions as a report section: where a run measured two or more versions of one
// kernel (user.tiled@1.stages=3 beside user.tiled.stages=3, its newest), a ladder v1 -> v2 -> ...
// at each knob set and shape, each version against the one before, paired where they shared
// windows, as a knob ladder is drawn. Which version a row ran is the run's own record (the
// builds its rows point at), not the daemon's names of today, so a report of an old run stays
// right after newer versions were added.
#pragma once

#include <vector>

#include "ablation/v1/ablation.pb.h"

namespace ablation::client::report {

/// A section's rungs as a preset (report only): one per kernel with two versions or more in
/// `run`, a rung per version (per_tile: repeated per knob set), each against the one before.
std::vector<v1::Preset> VersionPresets(const v1::GetRunResponse& run);

}  // namespace ablation::client::report
