#include "server/core/daemon/daemon_core.h"

#include <spdlog/spdlog.h>

#include "server/core/runs/run_recorder.h"
#include "server/core/setup/user_ladders.h"

namespace ablation::core {

Status DaemonCore::Open(CoreOptions options, const kernels::Registry* registry,
                        std::unique_ptr<DaemonCore>* out) {
  std::unique_ptr<DaemonCore> core(new DaemonCore());
  core->registry_ = registry;
  core->presets_ = options.runs.presets;
  try {
    core->store_ = db::Store::Open(options.db_path);
    auto interrupted = core->store_->MarkInterruptedRuns(
        NowMs(), "interrupted: the daemon stopped while the run was unfinished");
    if (!interrupted.empty())
      spdlog::warn("marked {} unfinished run(s) of an earlier daemon as failed",
                   interrupted.size());
    core->readers_ = std::make_unique<ReaderPool>(options.db_path, options.readers);
  } catch (const std::exception& e) {
    return FailedPrecondition(std::string("cannot open the result database: ") + e.what());
  }
  core->user_kernels_ =
      std::make_unique<UserKernels>(core->store_.get(), options.user_kernels, registry);
  std::vector<std::string> problems;
  core->user_kernels_->Load(&problems);
  for (const std::string& p : problems) spdlog::warn("{}", p);
  // Every start says what user kernels' compiles run in (an unsandboxed one is among the
  // problems above, a warning).
  if (const std::string state = core->user_kernels_->SandboxState();
      state.rfind("compiles are sandboxed", 0) == 0)
    spdlog::info("user kernels: {}", state);
  core->profiler_ = std::make_unique<Profiler>(options.profiler, registry, core->store_.get());
  options.runs.profiler = core->profiler_.get();
  // Runs name user variants beside the built-in ones: each is planned against the catalog of
  // the moment (UserKernels::Catalog), and a user kernel's ladder is a preset.
  options.runs.catalog = [uk = core->user_kernels_.get()] { return uk->Catalog(); };
  options.runs.presets_now = [c = core.get()] { return c->presets(); };
  options.runs.events = options.events;
  core->runs_ = std::make_unique<RunManager>(options.runs, core->store_.get(), registry);
  core->queries_ = std::make_unique<Queries>(core->readers_.get(), core->runs_.get());
  core->sass_ = std::make_unique<SassInspector>(options.sass, core->runs_.get(), registry);
  core->runs_->Start();
  if (!options.fleet.conninfo.empty()) {
    try {
      core->fleet_ =
          std::make_unique<FleetExporter>(options.fleet, core->store_.get(), options.events);
    } catch (const std::exception& e) {
      return FailedPrecondition(std::string("cannot start the fleet export: ") + e.what());
    }
  }
  *out = std::move(core);
  return Status::Ok();
}

DaemonCore::~DaemonCore() { Shutdown(); }

std::shared_ptr<const Presets> DaemonCore::presets() const {
  return WithUserLadders(presets_.get(), user_kernels_->Manifests(),
                         user_kernels_->VersionLadders());
}

v1::UserKernel ToProto(const KernelSummary& s) {
  v1::UserKernel k;
  k.set_name(s.name);
  k.set_owner(s.owner);
  k.set_entry(s.entry);
  k.set_description(s.description);
  k.set_dtype(s.dtype);
  k.set_source_sha256(s.source_sha256);
  k.set_manifest_sha256(s.manifest_sha256);
  k.set_created_at_ms(s.created_at_ms);
  for (const std::string& v : s.variants) k.add_variants(v);
  for (const db::UserKernelBuild& b : s.builds) {
    v1::KernelBuild* out = k.add_builds();
    out->set_variant(b.variant);
    out->set_arch(b.arch);
    out->set_compiler(b.compiler);
    out->set_options(b.options);
    out->set_cubin_sha256(b.cubin_sha256);
    out->set_registers(b.registers);
    out->set_stack_bytes(b.stack_bytes);
    out->set_spill_store_bytes(b.spill_store_bytes);
    out->set_spill_load_bytes(b.spill_load_bytes);
    out->set_static_smem_bytes(b.static_smem_bytes);
    out->set_created_at_ms(b.created_at_ms);
  }
  k.set_source(s.source);
  k.set_manifest(s.manifest);
  k.set_source_withheld(s.source_withheld);
  k.set_version(s.version);
  for (const KernelVersionSummary& v : s.versions) {
    v1::KernelVersion* out = k.add_versions();
    out->set_version(v.version);
    out->set_owner(v.owner);
    out->set_source_sha256(v.source_sha256);
    out->set_manifest_sha256(v.manifest_sha256);
    out->set_created_at_ms(v.created_at_ms);
    for (const std::string& name : v.variants) out->add_variants(name);
  }
  return k;
}

void DaemonCore::AddKernel(const KernelCaller& caller, const v1::AddKernelRequest& request,
                           KernelAdded done) {
  std::string arch = request.arch();
  if (!arch.empty() && !request.check_only())
    return done(InvalidArgument("arch: an added kernel is compiled for GPU 0's architecture; "
                                "arch is for a check (check_only)"),
                {});
  if (!arch.empty() && !kernels::user::IsCompileArch(arch))
    return done(InvalidArgument("arch: '" + arch.substr(0, 32) +
                                "' is not an architecture NVRTC compiles for here (sm_80, sm_86, "
                                "sm_89, sm_90a, sm_100a, ...)"),
                {});
  if (arch.empty()) {
    const DeviceSnapshot device = runs_->Device(0);
    arch = kernels::user::CompileArch(device.identity.compute_capability());
    if (arch.empty())
      return done(
          FailedPrecondition(
              "user kernels are compiled for the GPU's architecture, and GPU 0's is not known" +
              (device.unavailable_reason.empty() ? std::string()
                                                 : " (" + device.unavailable_reason + ")") +
              (request.check_only() ? "; a check can name one (arch)" : "")),
          {});
  }
  UserKernels::AddOptions how;
  how.source_name = request.source_name();
  how.manifest_name = request.manifest_name();
  how.check_only = request.check_only();
  user_kernels_->Add(
      caller, request.source(), request.manifest(), arch,
      [done = std::move(done)](const Status& st, const KernelSummary& added) {
        v1::AddKernelResponse response;
        if (st.ok()) *response.mutable_kernel() = ToProto(added);
        done(st, response);
      },
      how);
}

Status DaemonCore::ListKernels(const v1::ListKernelsRequest&, v1::ListKernelsResponse* response) {
  for (const KernelSummary& s : user_kernels_->List()) *response->add_kernels() = ToProto(s);
  return Status::Ok();
}

Status DaemonCore::GetKernel(const KernelCaller& caller, const v1::GetKernelRequest& request,
                             v1::GetKernelResponse* response) {
  KernelSummary s;
  if (Status st = user_kernels_->Show(caller, request.name(), &s); !st.ok()) return st;
  *response->mutable_kernel() = ToProto(s);
  return Status::Ok();
}

Status DaemonCore::RemoveKernel(const KernelCaller& caller,
                                const v1::RemoveKernelRequest& request) {
  if (request.name().empty()) return InvalidArgument("name: empty");
  return user_kernels_->Remove(caller, request.name());
}

void DaemonCore::Shutdown() {
  // The compiles queued finish and store what they made before the store closes.
  if (user_kernels_) user_kernels_->Stop();
  if (runs_) runs_->Shutdown();
  // After the runs: a run finished while shutting down is exported now if the database answers,
  // else it waits in the outbox for the next start.
  if (fleet_) fleet_->Stop();
  if (readers_) readers_->Stop();
}

}  // namespace ablation::core
