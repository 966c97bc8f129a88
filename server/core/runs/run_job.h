// One queued run and what executes it on its GPU: a job is a plan, its recorder and a cancel flag;
// ExecuteJob takes it from started to finished (verify runs and ablation runs), holding a clock
// lock for the whole run when the plan asks for one.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "ablation/v1/ablation.pb.h"
#include "server/core/gpu/clock_lock.h"
#include "server/core/gpu/nvml.h"
#include "server/core/plan/run_plan.h"
#include "server/core/runs/run_recorder.h"
#include "server/core/workers/gpu_worker.h"

namespace ablation::core {

class ItemProfiler;

struct Job {
  Job(v1::RunKind kind_, RunPlan plan_, db::Store* store, std::shared_ptr<RunObserver> observer,
      DaemonEvents* events = nullptr)
      : kind(kind_), plan(std::move(plan_)), recorder(store, std::move(observer), events) {}
  int64_t id() const { return recorder.run_id(); }

  const v1::RunKind kind;
  RunPlan plan;
  RunRecorder recorder;
  std::atomic<bool> cancel{false};
  /// The catalog the plan was made against (its items point into it); null: the context's.
  std::shared_ptr<const kernels::Registry> catalog;
};

/// What executing a job needs from the daemon.
struct ExecutionContext {
  Nvml* nvml = nullptr;
  std::string nvml_unavailable = "NVML is not loaded";
  ClockLockJournal* clock_journal = nullptr;
  std::chrono::seconds hang_margin{5};
  std::atomic<uint64_t>* next_task = nullptr;
  const kernels::Registry* registry = nullptr;
  /// True once the run must stop at its next measurement boundary (cancel, shutdown).
  std::function<bool()> stopping;
  /// Called between measurements (the run manager answers Describe requests there).
  std::function<void()> between_items;
  /// Reads an item's counters after its timing for run --profile (item_profiler.h); null: none.
  ItemProfiler* profiler = nullptr;
};

/// Runs the job to its end on `gpu`; every outcome is recorded through job.recorder, and an
/// exception from the store ends the run as failed with the reason.
void ExecuteJob(GpuWorker& gpu, Job& job, const ExecutionContext& context);

}  // namespace ablation::core
