#include "client/report/versions.h"

#include <cstdint>
#include <map>
#include <set>
#include <string>

namespace ablation::client::report {

std::vector<v1::Preset> VersionPresets(const v1::GetRunResponse& run) {
  struct Build {
    std::string kernel, source;
    int64_t version = 0;
  };
  std::map<int64_t, Build> builds;
  for (const v1::UserBuildIdentity& b : run.user_builds())
    builds[b.id()] = {b.kernel(), b.source_sha256(), b.version()};
  // kernel -> version -> the variants (as the run names them) and dtypes of its rows
  struct Version {
    std::set<std::string> variants;
    std::string source;
  };
  std::map<std::string, std::map<int64_t, Version>> kernels;
  std::map<std::string, std::string> dtype_of;  // kernel -> the dtype of its rows
  for (const v1::Measurement& m : run.measurements()) {
    auto it = builds.find(m.user_build_id());
    if (m.user_build_id() <= 0 || it == builds.end() || it->second.version <= 0) continue;
    Version& v = kernels[it->second.kernel][it->second.version];
    v.variants.insert(m.variant());
    v.source = it->second.source;
    dtype_of[it->second.kernel] = m.dtype();
  }
  std::vector<v1::Preset> out;
  for (const auto& [kernel, versions] : kernels) {
    if (versions.size() < 2) continue;
    v1::Preset p;
    p.set_name("user." + kernel + ".versions");
    v1::PresetReport* r = p.mutable_report();
    r->set_title("User kernel " + kernel + ": its versions, each against the one before");
    r->set_scope("{dtype}, {shape}, at each knob set");
    r->set_order(100);
    r->add_notes(
        "Each row is the version its measurements ran (the build they point at); a version is "
        "compared with the one before it at the same knob set, paired where they were "
        "interleaved in the same windows: the change an edit made.");
    v1::PresetBlock* block = r->add_blocks();
    block->set_dtype(dtype_of[kernel]);
    std::string previous;
    for (const auto& [version, v] : versions) {
      v1::PresetRung* rung = block->add_rungs();
      rung->set_id("v" + std::to_string(version));
      rung->set_label("version " + std::to_string(version) + " (source " + v.source.substr(0, 12) +
                      ")");
      rung->set_variant("user." + kernel + "@" + std::to_string(version));
      rung->set_dtype(dtype_of[kernel]);
      rung->set_per_tile(true);  // repeated per knob set (sections.cc: the user variants' group)
      for (const std::string& name : v.variants) rung->add_resolved(name);
      if (!previous.empty()) rung->add_against(previous);
      previous = rung->id();
    }
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace ablation::client::report
