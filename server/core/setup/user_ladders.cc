#include "server/core/setup/user_ladders.h"

#include "server/core/plan/counters.h"

namespace ablation::core {

namespace ku = ::ablation::kernels::user;

Preset UserLadderPreset(const ku::Manifest& m) {
  const std::string dtype(kernels::ToString(m.dtype));
  Preset p;
  p.name = "user." + m.name;
  p.source = "user kernel " + m.name;
  p.description = "The ladder of user kernel " + m.name +
                  (m.description.empty() ? std::string() : " (" + m.description + ")") +
                  ": one knob per rung, in the manifest's order, then cuBLAS.";
  PresetGroup group;
  group.dtype = dtype;
  v1::Shape shape;
  shape.set_m(4096);
  shape.set_n(4096);
  shape.set_k(4096);
  group.shapes.push_back(shape);
  PresetReport& report = p.report;
  report.title = "User kernel " + m.name + ": its knobs one at a time";
  report.scope = "{dtype}, {shape}";
  report.order = 100;
  report.dtypes = {dtype};
  // Beside the rungs where the run read counters (sweep --profile): what the knobs of a GEMM
  // usually move, the tensor pipes and the stall reasons.
  for (const CounterConcept& c : CounterConcepts())
    if (c.group == "tensor" || c.group == "stalls") report.counters.push_back(std::string(c.name));
  for (const ku::Rung& rung : ku::Ladder(m)) {
    const std::string variant = ku::VariantName(m, rung.knobs);
    group.variants.push_back(variant);
    PresetRung r;
    r.id = rung.id;
    r.label = rung.label + " (" + ku::ShortName(m, rung.knobs) + ")";
    r.variant = variant;
    if (!report.rungs.empty()) r.against = {report.rungs.back().id};  // each rung one knob
    report.rungs.push_back(std::move(r));
  }
  if (m.general) {
    // A kernel of its own contract: its default sizes (sweep --size for others), no cuBLAS (it
    // is checked against its own reference), and its roofline beside each rung.
    group.shapes.clear();
    report.scope = "{dtype}, its default sizes";
    report.counters.clear();
    p.groups.push_back(std::move(group));
    return p;
  }
  group.variants.push_back("cublas_" + dtype);
  PresetRung cublas;
  cublas.id = "cuBLAS";
  cublas.label = "cuBLAS {dtype} (reference)";
  cublas.variant = "cublas_{dtype}";
  cublas.against = {};
  report.rungs.push_back(std::move(cublas));
  p.groups.push_back(std::move(group));
  return p;
}

Preset VersionLadderPreset(const VersionLadderSpec& spec) {
  Preset p;
  p.name = "user." + spec.kernel + ".versions";
  p.source = "user kernel " + spec.kernel;
  std::string listed;
  for (const auto& [version, variants] : spec.versions)
    listed += (listed.empty() ? "" : " -> ") + std::string("v") + std::to_string(version);
  p.description = "The versions of user kernel " + spec.kernel + " (" + listed +
                  "), each at every knob set it has, measured paired: the change each edit made.";
  PresetGroup group;
  group.dtype = spec.dtype;
  v1::Shape shape;
  shape.set_m(4096);
  shape.set_n(4096);
  shape.set_k(4096);
  group.shapes.push_back(shape);
  for (const auto& [version, variants] : spec.versions)
    for (const std::string& v : variants) group.variants.push_back(v);
  group.variants.push_back("cublas_" + spec.dtype);
  p.groups.push_back(std::move(group));
  return p;
}

std::shared_ptr<const Presets> WithUserLadders(
    const Presets* base, const std::vector<std::shared_ptr<const ku::Manifest>>& kernels,
    const std::vector<VersionLadderSpec>& versions) {
  auto out = std::make_shared<Presets>(base ? *base : Presets());
  for (const auto& m : kernels) out->Add(UserLadderPreset(*m));
  for (const VersionLadderSpec& v : versions) out->Add(VersionLadderPreset(v));
  return out;
}

}  // namespace ablation::core
