// Presets: named sets of variants x shapes x dtypes (deploy/presets.toml, built in; more from the
// config's `presets` file). A run may name one instead of listing variants; the daemon expands it
// here into one plan, whose groups may each have their own dtype.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "ablation/v1/ablation.pb.h"
#include "kernels/registry.h"
#include "server/core/base/status.h"
#include "server/core/plan/run_plan.h"
#include "server/core/setup/preset.h"

namespace ablation::core {

/// A group's selectors checked against a registry.
struct ResolvedGroup {
  std::vector<std::string> resolved;  ///< canonical names, deduplicated, in selector order
  std::vector<std::string> missing;   ///< selectors that select nothing with the group's dtype
};

class Presets {
 public:
  /// Parses TOML presets; each one adds to the set or replaces one of the same name. On error
  /// nothing is added and the message names the origin, the line and the key.
  Status LoadText(const std::string& text, const std::string& origin);
  Status LoadFile(const std::string& path);

  /// Adds one made in code (a user kernel's ladder), replacing one of the same name.
  void Add(Preset preset) { presets_[preset.name] = std::move(preset); }

  const Preset* Find(const std::string& name) const;
  /// In name order.
  std::vector<const Preset*> All() const;

 private:
  std::map<std::string, Preset> presets_;
};

/// The presets built into the daemon (deploy/presets.toml at build time).
const char* BuiltinPresetsToml();

/// The rungs of a report section as shown in the block of `dtype`: every rung's dtype set and
/// "{dtype}" filled in.
std::vector<PresetRung> RungsInBlock(const PresetReport& report, const std::string& dtype);

/// Resolves a group against the registry, never failing: what does not resolve is `missing`.
ResolvedGroup ResolvePresetGroup(const PresetGroup& group, const kernels::Registry& registry);

/// The public form, with what resolves and what is missing in this registry, and the report
/// section (rungs per block, each with the canonical names it selects here).
v1::Preset ToProto(const Preset& preset, const kernels::Registry& registry);

/// Plans a run of request.preset(): every group resolved and planned (PlanRun's checks apply to
/// each), concatenated into one plan. Missing entries are an InvalidArgument naming them unless
/// request.allow_missing(); a preset of which nothing resolves is refused either way.
Status PlanPresetRun(const v1::RunRequest& request, const Presets& presets,
                     const kernels::Registry& registry, const DeviceLimits& device,
                     const TimingDefaults& defaults, RunPlan* plan);

}  // namespace ablation::core
