#include "server/core/daemon/daemon_core.h"

#include <spdlog/spdlog.h>

#include "server/core/runs/run_recorder.h"

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
  core->profiler_ = std::make_unique<Profiler>(options.profiler, registry, core->store_.get());
  options.runs.profiler = core->profiler_.get();
  core->runs_ = std::make_unique<RunManager>(options.runs, core->store_.get(), registry);
  core->queries_ = std::make_unique<Queries>(core->readers_.get(), core->runs_.get());
  core->sass_ = std::make_unique<SassInspector>(options.sass, core->runs_.get(), registry);
  core->runs_->Start();
  *out = std::move(core);
  return Status::Ok();
}

DaemonCore::~DaemonCore() { Shutdown(); }

void DaemonCore::Shutdown() {
  if (runs_) runs_->Shutdown();
  if (readers_) readers_->Stop();
}

}  // namespace ablation::core
