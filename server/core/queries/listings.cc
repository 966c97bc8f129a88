#include "server/core/queries/listings.h"

#include <algorithm>
#include <optional>

#include "server/core/plan/variant_names.h"
#include "server/core/queries/advise.h"

namespace ablation::core {

v1::Variant ToProto(const kernels::Variant& v) {
  v1::Variant p;
  p.set_name(v.name);
  p.set_family(v.family);
  p.set_description(v.description);
  for (const auto& [k, val] : v.params) (*p.mutable_params())[k] = val.Text();
  for (auto d : v.dtypes) p.add_dtypes(std::string(kernels::ToString(d)));
  p.set_tile_m(v.tile.m);
  p.set_tile_n(v.tile.n);
  p.set_tile_k(v.tile.k);
  p.set_threads(v.threads);
  p.set_smem_bytes(v.smem_bytes);
  if (v.code) {
    p.set_registers(std::max(v.code->registers, 0));
    p.set_static_smem_bytes(v.code->static_smem_bytes);
  }
  return p;
}

namespace {

// The variant as listed; with a shape, the build that runs it (or why it cannot).
v1::Variant Listed(const kernels::Variant& v, const v1::ListVariantsRequest& request,
                   std::optional<kernels::DType> dtype, const kernels::Residency& device) {
  v1::Variant p = ToProto(v);
  if (!request.has_shape()) return p;
  kernels::Problem problem;
  problem.m = request.shape().m();
  problem.n = request.shape().n();
  problem.k = request.shape().k();
  problem.dtype = dtype ? *dtype : v.dtypes.empty() ? kernels::DType::kBF16 : v.dtypes.front();
  if (!v.Supports(problem.dtype)) {
    p.set_build_refused("no " + std::string(kernels::ToString(problem.dtype)) + " kernel");
  } else if (std::string e = v.can_implement ? v.can_implement(problem) : ""; !e.empty()) {
    p.set_build_refused(e);
  } else if (v.build) {
    p.set_build(v.build(problem, device));
  } else if (v.launch_at) {
    // A user variant: its launch at this problem, as the worker will plan it.
    const kernels::LaunchSize at = v.launch_at(problem);
    p.set_threads(int32_t(at.threads));
    p.set_smem_bytes(at.dynamic_smem_bytes);
  }
  return p;
}

}  // namespace

Status ListVariants(const kernels::Registry& registry, const std::vector<kernels::Variant>& user,
                    const v1::ListVariantsRequest& request, v1::ListVariantsResponse* response,
                    const kernels::Residency& device) {
  std::optional<kernels::DType> dtype;
  if (request.has_shape()) {
    const v1::Shape& s = request.shape();
    if (s.m() <= 0 || s.n() <= 0 || s.k() <= 0)
      return InvalidArgument("shape: m, n and k must be positive, got " + std::to_string(s.m()) +
                             "x" + std::to_string(s.n()) + "x" + std::to_string(s.k()));
  }
  if (!request.dtype().empty()) {
    dtype = kernels::ParseDType(request.dtype());
    if (!dtype) return InvalidArgument("dtype: unknown dtype '" + request.dtype() + "'");
  }
  if (request.glob().empty()) {
    for (const auto& v : registry.All())
      *response->add_variants() = Listed(v, request, dtype, device);
    for (const auto& v : user) *response->add_variants() = Listed(v, request, dtype, device);
    return Status::Ok();
  }
  std::vector<const kernels::Variant*> found, found_user;
  const Status built_in = Resolve(registry, request.glob(), "glob", &found);
  kernels::Registry users;
  for (const auto& v : user) users.Add(v);
  const bool any_user = !user.empty() && Resolve(users, request.glob(), "glob", &found_user).ok();
  if (!built_in.ok() && !any_user) return built_in;
  for (const auto* v : found) *response->add_variants() = Listed(*v, request, dtype, device);
  for (const auto* v : found_user) *response->add_variants() = Listed(*v, request, dtype, device);
  return Status::Ok();
}

Status GetBudget(const kernels::Registry& registry, const v1::BudgetRequest& request,
                 v1::BudgetResponse* response) {
  if (IsGlob(request.variant())) return InvalidArgument("variant: one variant, not a pattern");
  std::vector<const kernels::Variant*> found;
  if (Status st = Resolve(registry, request.variant(), "variant", &found); !st.ok()) return st;
  const kernels::Variant& v = *found.front();
  const int element_bytes = v.dtypes.empty() ? 2 : kernels::ElementBytes(v.dtypes.front());
  const int64_t stage_bytes =
      int64_t(v.tile.m) * v.tile.k * element_bytes + int64_t(v.tile.k) * v.tile.n * element_bytes;
  int stages = int(v.NumberParam("stages").value_or(0));
  // Families without a stages knob: as many stages as their allocation holds tiles.
  if (stages <= 0 && stage_bytes > 0)
    stages = int(std::max<int64_t>(1, (v.smem_bytes + stage_bytes / 2) / stage_bytes));
  VariantBudget budget;
  Status st = BudgetForVariant(v.name, v.tile.m, v.tile.n, v.tile.k, element_bytes, stages,
                               v.smem_bytes, request.arch(), &budget);
  if (!st.ok()) return st;
  response->set_variant(v.name);
  response->set_arch(std::string(budget.arch->arch));
  response->set_gpus(std::string(budget.arch->gpus));
  response->set_smem_per_sm(budget.arch->smem_per_sm);
  response->set_smem_per_block_max(budget.arch->smem_per_block_max);
  response->set_cliff_bytes(budget.cliff_bytes);
  for (const auto& r : budget.rows) {
    auto* row = response->add_rows();
    row->set_stages(r.stages);
    row->set_bytes(r.bytes);
    row->set_blocks_per_sm(r.blocks_per_sm);
    row->set_over_cliff(r.over_cliff);
    row->set_fits(r.fits);
    row->set_this_variant(r.this_variant);
  }
  response->set_verdict(budget.verdict);
  return Status::Ok();
}

namespace {

// A preset as served: `planned` counts what a run of it measures by default, every round.
v1::Preset Served(const Preset& preset, const kernels::Registry& registry) {
  v1::Preset p = ToProto(preset, registry);
  p.set_planned(p.planned() * kPresetDefaultRounds);
  return p;
}

}  // namespace

Status ListPresets(const Presets* presets, const kernels::Registry& registry,
                   const v1::ListPresetsRequest& request, v1::ListPresetsResponse* response) {
  static const Presets kNoPresets;
  const Presets& known_presets = presets ? *presets : kNoPresets;
  if (request.name().empty()) {
    for (const auto* p : known_presets.All()) *response->add_presets() = Served(*p, registry);
    return Status::Ok();
  }
  const Preset* preset = known_presets.Find(request.name());
  if (!preset) {
    std::string known;
    for (const auto* p : known_presets.All()) known += (known.empty() ? "" : ", ") + p->name;
    return NotFound("name: no preset '" + request.name() + "'; known: " + known);
  }
  *response->add_presets() = Served(*preset, registry);
  return Status::Ok();
}

Status GetDevice(RunManager& runs, const v1::GetDeviceRequest& request,
                 v1::GetDeviceResponse* response) {
  if (request.device() < 0) return InvalidArgument("device: must be 0 or more");
  DeviceSnapshot snap = runs.Device(request.device());
  response->set_available(snap.available);
  response->set_unavailable_reason(snap.unavailable_reason);
  *response->mutable_device() = snap.identity;
  response->mutable_device()->set_index(request.device());
  response->set_device_count(snap.device_count);
  response->set_queued_runs(snap.queued);
  response->set_running_run_id(snap.running_run_id);
  *response->mutable_live() = snap.live;
  for (int mhz : snap.supported_sm_clocks_mhz) response->add_supported_sm_clocks_mhz(mhz);
  for (int mhz : snap.supported_mem_clocks_mhz) response->add_supported_mem_clocks_mhz(mhz);
  return Status::Ok();
}

}  // namespace ablation::core
