// Runs, the per-GPU FIFO queue and each GPU's thread. A run executes on its GPU's own thread
// (run_job.h); its progress reaches an observer, and every result is committed before the observer
// hears of it (run_recorder.h). No gRPC here: server/rpc adapts observers to streams.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "ablation/v1/ablation.pb.h"
#include "db/store.h"
#include "kernels/registry.h"
#include "server/core/base/status.h"
#include "server/core/gpu/clock_lock.h"
#include "server/core/gpu/nvml.h"
#include "server/core/plan/run_plan.h"
#include "server/core/runs/run_job.h"
#include "server/core/runs/run_observer.h"
#include "server/core/setup/presets.h"
#include "server/core/workers/gpu_worker.h"
#include "server/core/workers/worker.h"

namespace ablation::core {

struct RunManagerOptions {
  /// Hears the runs' and the workers' events (the daemon's metrics); null: NoEvents(). Outlives
  /// the manager.
  DaemonEvents* events = nullptr;
  /// Makes each GPU's worker; by default a WorkerProcess of worker_path.
  WorkerFactory worker_factory;
  std::string worker_path;
  TimingDefaults timing;
  int max_queued_per_gpu = 256;
  /// Most measurements (items x rounds) one run may plan; 0: no limit.
  int max_measurements_per_run = 0;
  /// Most samples one measurement may ask for (timing.min_samples, max_samples); 0: no limit.
  int max_samples_per_measurement = 0;
  /// Most bytes one run may plan to store (CheckPlanBytes); 0: no limit.
  int64_t max_stored_bytes_per_run = 0;
  /// What RunRequest.preset names; null: no presets.
  std::shared_ptr<const Presets> presets;
  /// The presets of the moment (`presets` and the user kernels' ladders); unset: `presets`.
  std::function<std::shared_ptr<const Presets>()> presets_now;
  /// Extra time a worker gets beyond twice a task's own time cap before it is considered hung.
  std::chrono::seconds hang_margin{5};
  /// NVML (telemetry, clocks); null where it could not be loaded, nvml_unavailable says why.
  Nvml* nvml = nullptr;
  std::string nvml_unavailable = "NVML is not loaded";
  /// Where clock locks are recorded before they are taken (required for clocks.mode=lock).
  ClockLockJournal* clock_journal = nullptr;
  /// Reads counters for run --profile (item_profiler.h); null: such runs note that there is none.
  ItemProfiler* profiler = nullptr;
  /// What a run may name now: the built-in registry and the user kernels' variants
  /// (UserKernels::Catalog). A run is planned against the snapshot it gets and keeps it to its
  /// end. Unset: the registry given to the constructor.
  std::function<std::shared_ptr<const kernels::Registry>()> catalog;
  /// Provenance stamped on every run: the daemon's host and its node labels ("k=v,..." sorted).
  std::string host_name;
  std::string node_labels;
};

struct DeviceSnapshot {
  bool available = false;
  std::string unavailable_reason;
  v1::DeviceIdentity identity;
  int device_count = 0;
  int queued = 0;
  int64_t running_run_id = 0;
  v1::Telemetry live;                        ///< NVML's current values (or why there are none)
  std::vector<int> supported_sm_clocks_mhz;  ///< at the highest memory clock
  std::vector<int> supported_mem_clocks_mhz;
};

class RunManager {
 public:
  RunManager(RunManagerOptions options, db::Store* store, const kernels::Registry* registry);
  ~RunManager();

  /// Starts the worker of GPU 0 (and of every further GPU it reports) and their threads.
  /// Never fails for want of a GPU: the daemon then serves everything but runs.
  void Start();
  /// Cancels everything, tells queued runs' observers, stops the workers.
  void Shutdown();

  /// Validates, stores the run as queued and queues it. On error nothing is written and the
  /// observer hears nothing.
  Status SubmitRun(const v1::RunRequest& request, const std::string& peer,
                   std::shared_ptr<RunObserver> observer, int64_t* run_id);
  /// The same for a verification run; the observer hears each result (OnVerified) and the end.
  Status SubmitVerify(const v1::VerifyRequest& request, const std::string& peer,
                      std::shared_ptr<RunObserver> observer);

  using DescribeDone =
      std::function<void(const Status&, const std::vector<worker::v1::DescribeResult>&)>;
  /// A kernel to name: a variant in a dtype, and the problem whose build is meant (the sm90
  /// family runs other builds off its tile or without clusters); no shape: its own build.
  struct DescribeItem {
    std::string variant;
    std::string dtype;
    std::optional<v1::Shape> shape;
  };
  /// Asks GPU `device`'s worker which kernel each item launches. Served on the GPU's thread
  /// between measurements (a run in progress pauses for it, it never waits for a whole run);
  /// `done` is called from that thread, with one result per item in order.
  Status Describe(int device, const std::vector<DescribeItem>& items, DescribeDone done);
  /// What GPU `device` holds of a persistent grid at once, as its worker reported (zeros where
  /// there is no such GPU or it is not known).
  kernels::Residency DeviceResidency(int device);

  /// Cancels a queued run at once or a running one at its next measurement boundary.
  /// `who` (the caller's identity) is stored with the run (runs.cancelled_by) when it is one to
  /// cancel; empty: the daemon itself (its client left).
  Status Cancel(int64_t run_id, v1::CancelRunResponse* response, const std::string& who = "");

  DeviceSnapshot Device(int index);

  /// What a run may name now (RunManagerOptions::catalog, else the registry given).
  std::shared_ptr<const kernels::Registry> Catalog() const;

  /// The plan limits of runs submitted from now on (SIGHUP): measurements per run, samples per
  /// measurement, bytes per run; 0: no limit. Runs already queued keep theirs.
  /// The timing defaults (config [timing]) of runs planned from now on (SIGHUP); runs already
  /// planned keep theirs.
  void SetTimingDefaults(const TimingDefaults& timing);
  void SetPlanLimits(int max_measurements_per_run, int max_samples_per_measurement,
                     int64_t max_stored_bytes_per_run);

  /// Adds an observer to a queued or running run (WatchRun): it hears the run's position or its
  /// Started event, then everything after. NotFound when the run is neither (it ended, or never
  /// existed): the store has what became of it.
  Status Watch(int64_t run_id, std::shared_ptr<RunObserver> observer);

 private:
  struct DescribeJob {
    std::vector<DescribeItem> items;
    DescribeDone done;
  };
  struct Gpu {
    Gpu(int index, std::unique_ptr<Worker> w, DaemonEvents* events)
        : worker(index, std::move(w), events) {}
    GpuWorker worker;
    std::mutex mu;
    std::condition_variable cv;
    std::deque<std::shared_ptr<Job>> queue;  ///< guarded by mu
    /// Places taken by submissions between the check and the push (the run's row is written in
    /// between, outside mu): counted with the queue, so 300 at once cannot overfill it.
    int admitting = 0;                  ///< guarded by mu
    std::deque<DescribeJob> describes;  ///< guarded by mu; served before the next item
    std::shared_ptr<Job> running;       ///< guarded by mu
    std::thread thread;
  };

  Status Admit(std::shared_ptr<Job> job, const std::string& request_json,
               const std::string& requested_by, const std::vector<std::string>& tags);
  /// The GPU of that index, or why there is none.
  Status LookUpGpu(int index, const std::string& no_gpu_prefix, Gpu** out);
  std::vector<Gpu*> Gpus();
  DeviceLimits Limits(int index);
  void GpuLoop(Gpu* gpu);
  void ServeDescribes(Gpu* gpu);
  void BroadcastPositions(Gpu* gpu);
  std::unique_ptr<Worker> MakeWorker(int index);

  /// The plan limits of options_ as they are now (SetPlanLimits).
  struct PlanLimits {
    int measurements = 0;
    int samples = 0;
    int64_t bytes = 0;
  };
  PlanLimits CurrentPlanLimits() const;
  TimingDefaults CurrentTiming() const;

  RunManagerOptions options_;  ///< its plan limits and timing guarded by plan_limits_mu_
  mutable std::mutex plan_limits_mu_;
  db::Store* store_;
  const kernels::Registry* registry_;
  ExecutionContext execution_;
  std::mutex gpus_mu_;
  std::vector<std::unique_ptr<Gpu>> gpus_;
  std::atomic<bool> stopping_{false};
  std::atomic<uint64_t> next_task_{1};
};

}  // namespace ablation::core
