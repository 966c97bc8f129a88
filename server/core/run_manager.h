// Runs, the per-GPU FIFO queue and the per-GPU worker. A run executes on its GPU's own thread;
// progress goes to an observer as RunEvents and every measurement is committed to the store as
// soon as it is measured. No gRPC here: server/rpc adapts observers to streams.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "ablation/v1/ablation.pb.h"
#include "db/store.h"
#include "kernels/registry.h"
#include "server/core/clock_lock.h"
#include "server/core/nvml.h"
#include "server/core/presets.h"
#include "server/core/run_plan.h"
#include "server/core/status.h"
#include "server/core/worker_process.h"

namespace ablation::core {

/// Receives a run's events, from the GPU's thread. Must not block for long.
class RunObserver {
 public:
  virtual ~RunObserver() = default;
  virtual void OnEvent(const v1::RunEvent& event) = 0;
};

struct RunManagerOptions {
  std::string worker_path;
  TimingDefaults timing;
  int max_queued_per_gpu = 256;
  /// What RunRequest.preset names; null: no presets.
  std::shared_ptr<const PresetCatalog> presets;
  /// Extra time a worker gets beyond a task's own time cap before it is considered hung.
  std::chrono::seconds hang_margin{120};
  /// NVML (telemetry, clocks); null where it could not be loaded, nvml_unavailable says why.
  Nvml* nvml = nullptr;
  std::string nvml_unavailable = "NVML is not loaded";
  /// Where clock locks are recorded before they are taken (required for clocks.mode=lock).
  ClockLockJournal* clock_journal = nullptr;
};

struct DeviceSnapshot {
  bool available = false;
  std::string unavailable_reason;
  v1::DeviceIdentity identity;
  int device_count = 0;
  int queued = 0;
  int64_t running_run_id = 0;
  db::Telemetry live;                        ///< NVML's current values (or why there are none)
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
  /// Cancels everything, marks unfinished runs, stops the workers.
  void Shutdown();

  /// Validates, stores the run as queued and queues it. On error nothing is written.
  Status SubmitRun(const v1::RunRequest& request, const std::string& peer,
                   std::shared_ptr<RunObserver> observer, int64_t* run_id);

  using VerifyDone = std::function<void(const Status&, const v1::VerifyResponse&)>;
  /// Validates and queues a verification run; `done` is called from the GPU's thread.
  Status SubmitVerify(const v1::VerifyRequest& request, const std::string& peer, VerifyDone done);

  using DescribeDone =
      std::function<void(const Status&, const std::vector<worker::v1::DescribeResult>&)>;
  /// Asks GPU `device`'s worker which kernel each (variant, dtype) launches. Served on the GPU's
  /// thread between measurements (a run in progress pauses for it, it never waits for a whole
  /// run); `done` is called from that thread, with one result per item in order.
  Status Describe(int device, const std::vector<std::pair<std::string, std::string>>& items,
                  DescribeDone done);

  /// Cancels a queued run at once or a running one at its next measurement boundary.
  Status Cancel(int64_t run_id, std::string* state);

  DeviceSnapshot Device(int index);

  /// Converts a worker hello into the public identity.
  static v1::DeviceIdentity Identity(const worker::v1::Hello& hello);

 private:
  struct Job {
    int64_t id = 0;
    std::string kind;
    RunPlan plan;
    std::shared_ptr<RunObserver> observer;
    VerifyDone verify_done;
    std::atomic<bool> cancel{false};
  };
  struct DescribeJob {
    std::vector<std::pair<std::string, std::string>> items;  ///< (variant, dtype)
    DescribeDone done;
  };
  struct Gpu {
    int index = 0;
    std::unique_ptr<WorkerProcess> worker;
    Status worker_status;     ///< why the worker is not usable, when it is not
    worker::v1::Hello hello;  ///< the current worker's hello, guarded by mu
    std::mutex mu;
    std::condition_variable cv;
    std::deque<std::shared_ptr<Job>> queue;
    std::deque<DescribeJob> describes;  ///< guarded by mu; served before the next measurement
    std::shared_ptr<Job> running;
    std::thread thread;
  };

  Status Admit(const RunPlan& plan, const std::string& kind, const std::string& request_json,
               const std::string& peer, const std::vector<std::string>& tags,
               std::shared_ptr<Job> job, int* position);
  Gpu* FindGpu(int index);
  /// The GPU of that index, or the status that says why there is none (prefix + GPU 0's reason
  /// when its worker could not start, else an InvalidArgument naming the device).
  Status LookUpGpu(int index, const std::string& no_gpu_prefix, Gpu** out);
  /// Sends one verification task to the GPU's worker. "" or how the worker failed.
  std::string CallVerify(Gpu* gpu, const PlannedMeasurement& item, const std::string& against,
                         uint64_t seed, v1::VerifyResult* result);
  DeviceLimits Limits(int index);
  void GpuLoop(Gpu* gpu);
  /// Answers the queued Describe requests (GPU thread only).
  void ServeDescribes(Gpu* gpu);
  void Execute(Gpu* gpu, Job* job);
  void ExecuteAblation(Gpu* gpu, Job* job, int* ok, int* failed, const std::string& uuid,
                       int locked_sm_mhz);
  void ExecuteVerify(Gpu* gpu, Job* job, v1::VerifyResponse* response);
  /// Makes sure the GPU's worker runs; restarts it after a death. "" or why it cannot.
  std::string EnsureWorker(Gpu* gpu);
  void Emit(Job* job, const v1::RunEvent& event);
  void BroadcastPositions(Gpu* gpu);

  RunManagerOptions options_;
  db::Store* store_;
  const kernels::Registry* registry_;
  std::mutex gpus_mu_;
  std::vector<std::unique_ptr<Gpu>> gpus_;
  std::atomic<bool> stopping_{false};
  std::atomic<uint64_t> next_task_{1};
};

int64_t NowMs();

}  // namespace ablation::core
