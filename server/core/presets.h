// Presets: named sets of variants x shapes x dtypes (deploy/presets.toml, built in; more from the
// config's `presets` file). A run may name one instead of listing variants; the daemon expands it
// here into one plan, whose groups may each have their own dtype.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "ablation/v1/ablation.pb.h"
#include "kernels/registry.h"
#include "server/core/run_plan.h"
#include "server/core/status.h"

namespace ablation::core {

/// Variants of one dtype at a set of shapes.
struct PresetGroup {
  std::string dtype = "bf16";
  std::vector<std::string> variants;  ///< selectors as written: names, short names, globs
  std::vector<v1::Shape> shapes;
};

/// One row of a preset's report section ([[name.rung]]). Text may hold "{dtype}": the dtype of
/// the rung where it is shown.
struct PresetRung {
  std::string id;       ///< "A1"
  std::string label;    ///< "ld.shared, B as [k][n]"
  std::string variant;  ///< a selector, written as one of the preset's entries or a glob of them
  std::string dtype;    ///< empty: the dtype of the block it is shown in
  std::vector<std::string>
      against;  ///< rung ids; by default the previous rung (none for the first)
  bool per_tile = false;
};

/// How a preset with rungs reads as a section of the report (presets.toml documents the keys).
struct PresetReport {
  std::string title;
  std::string scope;
  std::vector<std::string> notes;
  int order = 0;
  std::vector<std::string> dtypes;  ///< report_dtypes: one block each, preferred first
  bool per_dtype = false;
  bool per_shape = false;
  std::vector<PresetRung> rungs;
  std::vector<std::string> counters;  ///< counter concepts shown beside the rungs (sets expanded)
};

struct Preset {
  std::string name;
  std::string description;
  std::vector<PresetGroup> groups;
  std::string source;   ///< "built-in" or "file:line"
  PresetReport report;  ///< no rungs: not a report section
};

/// A group's selectors checked against a registry.
struct ResolvedGroup {
  std::vector<std::string> resolved;  ///< canonical names, deduplicated, in selector order
  std::vector<std::string> missing;   ///< selectors that select nothing with the group's dtype
};

class PresetCatalog {
 public:
  /// Parses TOML presets; each one adds to the catalog or replaces one of the same name. On error
  /// nothing is added and the message names the origin, the line and the key.
  Status LoadText(const std::string& text, const std::string& origin);
  Status LoadFile(const std::string& path);

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
Status PlanPresetRun(const v1::RunRequest& request, const PresetCatalog& presets,
                     const kernels::Registry& registry, const DeviceLimits& device,
                     const TimingDefaults& defaults, RunPlan* plan);

}  // namespace ablation::core
