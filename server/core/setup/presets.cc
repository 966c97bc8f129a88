#include "server/core/setup/presets.h"

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>
#include <tuple>

#include <toml++/toml.h>

#include "common/toml_doc.h"
#include "server/core/plan/variant_names.h"
#include "server/core/setup/config.h"
#include "server/core/setup/presets_parse.h"

namespace ablation::core {

Status Presets::LoadText(const std::string& text, const std::string& origin) {
  toml::table root;
  if (std::string why = common::ParseToml(text, origin, {kMaxConfigBytes, kMaxConfigDepth}, &root);
      !why.empty())
    return InvalidArgument(why);
  std::map<std::string, Preset> loaded;
  for (const auto& [key, node] : root) {
    std::string name(key.str());
    if (name.empty() ||
        name.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789-_") != std::string::npos)
      return ErrorAt(origin, node, name,
                     "a preset name has lower-case letters, digits, '-' and '_' only");
    Preset preset;
    Status st = ReadPreset(name, node, origin, &preset);
    if (!st.ok()) return st;
    loaded[name] = std::move(preset);
  }
  for (auto& [name, preset] : loaded) presets_[name] = std::move(preset);
  return Status::Ok();
}

Status Presets::LoadFile(const std::string& path) {
  std::string text;
  if (Status st = ReadTomlFile(path, "presets", &text); !st.ok()) return st;
  return LoadText(text, path);
}

const Preset* Presets::Find(const std::string& name) const {
  auto it = presets_.find(name);
  return it == presets_.end() ? nullptr : &it->second;
}

std::vector<const Preset*> Presets::All() const {
  std::vector<const Preset*> out;
  for (const auto& [name, preset] : presets_) out.push_back(&preset);
  return out;
}

std::vector<PresetRung> RungsInBlock(const PresetReport& report, const std::string& dtype) {
  std::vector<PresetRung> out;
  for (PresetRung rung : report.rungs) {
    if (rung.dtype.empty()) rung.dtype = dtype;
    rung.id = Fill(rung.id, rung.dtype);
    rung.label = Fill(rung.label, rung.dtype);
    rung.variant = Fill(rung.variant, rung.dtype);
    for (std::string& a : rung.against) a = Fill(a, rung.dtype);
    out.push_back(std::move(rung));
  }
  return out;
}

ResolvedGroup ResolvePresetGroup(const PresetGroup& group, const kernels::Registry& registry) {
  ResolvedGroup out;
  auto dtype = kernels::ParseDType(group.dtype);
  std::set<std::string> seen;
  for (const std::string& selector : group.variants) {
    std::vector<const kernels::Variant*> found;
    bool any = false;
    if (dtype && Resolve(registry, selector, "variants", &found).ok()) {
      for (const auto* v : found) {
        if (!v->Supports(*dtype)) continue;
        any = true;
        if (seen.insert(v->name).second) out.resolved.push_back(v->name);
      }
    }
    if (!any) out.missing.push_back(selector);
  }
  return out;
}

namespace {

// A glob that matches exactly one of the preset's entries of its dtype reads as that entry
// ("pipe_baseline_*" in the int8 block is "pipe_baseline_i8_*").
std::string Narrowed(const Preset& preset, const PresetRung& rung) {
  if (!IsGlob(rung.variant)) return rung.variant;
  std::vector<std::string> matches;
  for (const PresetGroup& g : preset.groups)
    if (g.dtype == rung.dtype)
      for (const std::string& entry : g.variants)
        if (GlobMatch(rung.variant, entry)) matches.push_back(entry);
  return matches.size() == 1 ? matches[0] : rung.variant;
}

v1::PresetReport ReportToProto(const Preset& preset, const kernels::Registry& registry) {
  const PresetReport& report = preset.report;
  v1::PresetReport out;
  out.set_title(report.title);
  out.set_scope(report.scope);
  for (const auto& note : report.notes) out.add_notes(note);
  out.set_order(report.order);
  out.set_per_dtype(report.per_dtype);
  out.set_per_shape(report.per_shape);
  for (const auto& c : report.counters) out.add_counters(c);
  std::set<std::tuple<int64_t, int64_t, int64_t>> shapes;
  for (const PresetGroup& g : preset.groups)
    for (const v1::Shape& s : g.shapes)
      if (shapes.insert({s.m(), s.n(), s.k()}).second) *out.add_shapes() = s;
  for (const std::string& dtype : report.dtypes) {
    v1::PresetBlock* block = out.add_blocks();
    block->set_dtype(dtype);
    for (const PresetRung& rung : RungsInBlock(report, dtype)) {
      v1::PresetRung* r = block->add_rungs();
      r->set_id(rung.id);
      r->set_label(rung.label);
      r->set_variant(Narrowed(preset, rung));
      r->set_dtype(rung.dtype);
      for (const auto& a : rung.against) r->add_against(a);
      r->set_per_tile(rung.per_tile);
      PresetGroup selector;
      selector.dtype = rung.dtype;
      selector.variants = {r->variant()};
      for (const auto& name : ResolvePresetGroup(selector, registry).resolved)
        r->add_resolved(name);
    }
  }
  return out;
}

}  // namespace

v1::Preset ToProto(const Preset& preset, const kernels::Registry& registry) {
  v1::Preset p;
  p.set_name(preset.name);
  p.set_description(preset.description);
  p.set_source(preset.source);
  int planned = 0;
  for (const PresetGroup& g : preset.groups) {
    v1::PresetGroup* out = p.add_groups();
    out->set_dtype(g.dtype);
    for (const auto& v : g.variants) out->add_variants(v);
    for (const auto& s : g.shapes) *out->add_shapes() = s;
    ResolvedGroup r = ResolvePresetGroup(g, registry);
    for (const auto& v : r.missing) out->add_missing(v);
    for (const auto& v : r.resolved) out->add_resolved(v);
    // A group of kernels of their own contract has no shapes: one problem each, its default
    // sizes, unless a sweep gives others.
    planned += int(r.resolved.size() * std::max<size_t>(g.shapes.size(), 1));
  }
  p.set_planned(planned);
  if (!preset.report.rungs.empty()) *p.mutable_report() = ReportToProto(preset, registry);
  return p;
}

Status PlanPresetRun(const v1::RunRequest& request, const Presets& presets,
                     const kernels::Registry& registry, const DeviceLimits& device,
                     const TimingDefaults& defaults, RunPlan* plan) {
  if (request.variants_size() > 0)
    return InvalidArgument("variants: give either variants or a preset, not both");
  if (!request.dtype().empty())
    return InvalidArgument("dtype: preset '" + request.preset() +
                           "' sets the dtype of each of its groups; leave dtype empty");
  const Preset* preset = presets.Find(request.preset());
  if (!preset) {
    std::string known;
    for (const Preset* p : presets.All()) known += (known.empty() ? "" : ", ") + p->name;
    return InvalidArgument("preset: unknown preset '" + request.preset() + "'; known: " + known);
  }
  std::vector<std::string> missing;
  std::vector<std::pair<const PresetGroup*, ResolvedGroup>> groups;
  // A family built for another GPU (the sm90 family on a GPU that is not compute capability
  // 9.0) is absent from a preset's run there: the rest of the preset runs.
  std::vector<std::string> absent;
  for (const PresetGroup& g : preset->groups) {
    ResolvedGroup r = ResolvePresetGroup(g, registry);
    for (const auto& m : r.missing) missing.push_back(m + " (" + g.dtype + ")");
    std::erase_if(r.resolved, [&](const std::string& name) {
      const kernels::Variant* v = registry.Find(name);
      std::string why = v == nullptr ? "" : ArchRefusal(*v, device);
      if (why.empty()) return false;
      absent.push_back(std::move(why));
      return true;
    });
    groups.emplace_back(&g, std::move(r));
  }
  bool any_kernel = false;
  for (const auto& [g, r] : groups)
    for (const auto& name : r.resolved)
      if (const kernels::Variant* v = registry.Find(name); v && v->family != "cublas")
        any_kernel = true;
  if (!absent.empty() && !any_kernel) {
    return FailedPrecondition("preset: nothing of preset '" + preset->name +
                              "' but cuBLAS runs on this GPU: " + absent.front());
  }
  if (!missing.empty() && !request.allow_missing()) {
    std::string list;
    for (const auto& m : missing) list += (list.empty() ? "" : ", ") + m;
    return InvalidArgument("preset: " + std::to_string(missing.size()) + " of preset '" +
                           preset->name + "' do not resolve in this daemon: " + list +
                           "; set allow_missing (sweep --allow-missing) to run the rest");
  }
  bool first = true;
  std::set<std::tuple<std::string, int64_t, int64_t, int64_t>> problems;
  for (size_t i = 0; i < groups.size(); ++i) {
    const auto& [group, resolved] = groups[i];
    if (resolved.resolved.empty()) continue;
    v1::RunRequest sub = request;
    sub.clear_preset();
    sub.clear_allow_missing();
    for (const auto& v : resolved.resolved) sub.add_variants(v);
    sub.set_dtype(group->dtype);
    if (request.shapes_size() == 0)
      for (const auto& s : group->shapes) *sub.add_shapes() = s;
    RunPlan part;
    Status st = PlanRun(sub, registry, device, defaults, &part);
    if (!st.ok()) {
      return Status(st.code(), "preset " + preset->name + ", group " + std::to_string(i) + " (" +
                                   group->dtype + "): " + st.message());
    }
    if (first) {
      plan->timing = part.timing;
      plan->dtype = part.dtype;
      plan->device = part.device;
      plan->verify = part.verify;
      plan->clocks = part.clocks;
      plan->regime = part.regime;
      plan->regime_params = part.regime_params;
      plan->paired = part.paired;
      first = false;
    }
    plan->variants.insert(plan->variants.end(), part.variants.begin(), part.variants.end());
    for (const auto& p : part.problems) {
      if (problems.insert({std::string(kernels::ToString(p.dtype)), p.m, p.n, p.k}).second)
        plan->problems.push_back(p);
    }
    plan->items.insert(plan->items.end(), part.items.begin(), part.items.end());
  }
  if (plan->items.empty()) {
    return InvalidArgument("preset: nothing of preset '" + preset->name +
                           "' resolves in this daemon; nothing to run");
  }
  return Status::Ok();
}

}  // namespace ablation::core
