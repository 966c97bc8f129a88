// Hardware counters per variant, read by Nsight Compute on a one-shot worker.
//
// Mechanism. On the GPU's thread, between measurements (the GPU is held: nothing is timed
// meanwhile), the daemon runs
//   ncu --clock-control none --launch-skip W --launch-count 1 --kernel-name-base mangled
//       --kernel-name SYMBOL --csv --page raw --print-units base --metrics LIST
//       ablation-worker --profile-once --variant V --dtype D --shape MxNxK --warmup W
// SYMBOL comes from the resident worker's Describe (the same kernel `sass` disassembles), so only
// the variant's own kernel is selected, and its W warm-up launches are skipped: the counters are
// those of ONE launch with the launch path settled. The clocks are left as they are (observe
// mode, as timing); ncu's default cache control flushes the caches before each replay pass, so
// the launch starts with a cold L2 as a timed sample does. The profiled launch is never a sample,
// and the resident worker that times never has a profiler attached.
//
// Why ncu and not CUPTI in the worker: the counters are the same (ncu is the vendor's client of
// the same profiling library), but ncu brings what we would otherwise rebuild and maintain per
// architecture: the metric names and their evaluation, kernel replay across the passes a metric
// list needs (with memory saved and restored between passes), the SASS patching the exact
// instruction counts need (smsp__sass_*), and cache control. Kept out of the timing process, a
// profiler can never perturb, crash or hang a measurement: a one-shot process that ncu kills on a
// deadline takes nothing with it. The cost is a process start of about 2-3 s per launch on an
// H200, small against a measurement.
//
// Refusals (no ncu, counters restricted to administrators, a driver that refuses) are typed
// (ProfileRefusal): the Profile RPC answers FAILED_PRECONDITION with a sentence saying how to
// allow profiling; `run --profile` puts the sentence in each row's counters_note and times on.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "ablation/v1/ablation.pb.h"
#include "db/store.h"
#include "kernels/registry.h"
#include "server/core/base/status.h"
#include "server/core/base/subprocess.h"
#include "server/core/inspect/ncu_csv.h"
#include "server/core/plan/counters.h"
#include "server/core/plan/run_plan.h"
#include "server/core/runs/item_profiler.h"
#include "server/core/workers/gpu_worker.h"

namespace ablation::core {

class RunManager;

struct ProfilerOptions {
  /// ncu to use; empty: $ABLATION_NCU, else PATH, $CUDA_HOME/bin, /usr/local/cuda/bin,
  /// /opt/nvidia/nsight-compute/*/.
  std::string tool;
  /// One profile (ncu, the one-shot worker's start, replay passes); a GEMM of seconds per launch
  /// times the passes of a long metric list is the case this bounds.
  std::chrono::seconds timeout{300};
  int warmup_launches = 3;
  /// Most kernels x shapes one Profile call may plan (limits.max_measurements_per_run); 0: none.
  int max_items = 0;
  /// Most bytes one Profile call may plan to store (limits.max_stored_bytes_per_run); 0: none.
  int64_t max_stored_bytes = 0;
};

/// The ncu to run, or "" with `looked` saying where it looked.
std::string FindNcu(const std::string& configured, std::string* looked);

/// What stopped a profile. Typed, so that callers decide (the RPC's status, a row's note) and
/// never match text.
enum class ProfileRefusal {
  kNone,        ///< counters were read
  kNoTool,      ///< no ncu on the daemon's host
  kPermission,  ///< ERR_NVGPUCTRPERM: the counters are restricted to administrators
  kDriver,      ///< the driver or the device refused the profiler
  kFailed,      ///< ncu or the one-shot worker failed otherwise (this launch only)
};

/// One launch to profile.
struct ProfileTarget {
  std::string variant;
  std::string dtype;
  v1::Shape shape;
  int device = 0;
  std::string symbol;  ///< mangled (Describe); "" for a library's kernels (Describe's library)
  std::string binary;  ///< the worker executable (Describe)
  std::string arch;    ///< "sm_90" (Describe)
  int warmup = 3;
  uint64_t seed = 1;
  /// A user variant's build (a serialized worker.v1.UserCode): the one-shot worker has no code for
  /// it of its own, and loads it from the file given with --user-code. Empty for built-in ones.
  std::string user_code;
  std::string user_code_file;  ///< where ProfileLaunch wrote it (NcuArgv passes it on)
  /// A cublas_<dtype>_best variant's algorithm as the resident worker holds it (Describe's
  /// library_algo): the one-shot worker launches it, so the counters are the timed kernel's.
  /// Empty: the one-shot worker chooses by timing the candidates itself.
  std::string library_algo;
};

struct ProfileResult {
  ProfileRefusal refusal = ProfileRefusal::kNone;
  std::string message;  ///< why not, as a sentence that says what to do
  std::vector<v1::Counter> counters;
  /// The profiled kernel's name as ncu printed it (demangled): for a library's kernel, the only
  /// name it has.
  std::string kernel_name;
};

/// ncu's command line for one target (pure).
std::vector<std::string> NcuArgv(const std::string& tool, const ProfileTarget& target,
                                 const std::vector<CounterSelection>& counters);

/// The counters of the first launch in ncu's output, one per selection in order (pure): a value
/// in the selection's unit (ncu's own where the counter table has none), or a note why not ("n/a on
/// 9.0", unknown to this ncu).
std::vector<v1::Counter> CountersFromNcu(const NcuOutput& output,
                                         const std::vector<CounterSelection>& counters,
                                         const std::string& tool_version);

/// Why a run of ncu gave no counters (pure): kNone when it profiled a launch.
ProfileResult ClassifyNcuRun(const ProcessResult& run, const NcuOutput& output,
                             const ProfileTarget& target);

/// The sentence for a refusal that is the host's, not the launch's (kNoTool, kPermission,
/// kDriver), saying how to allow profiling.
std::string RefusalSentence(ProfileRefusal refusal, const std::string& detail);

class Profiler : public ItemProfiler {
 public:
  using Done = std::function<void(const Status&, const v1::ProfileResponse&)>;

  Profiler(ProfilerOptions options, const kernels::Registry* registry, db::Store* store);

  /// The Profile RPC: validates (InvalidArgument naming the field; FailedPrecondition without
  /// ncu or a GPU), then profiles each variant on its GPU's thread between measurements, one
  /// variant at a time so that a run in progress goes on between them; stores the counters;
  /// `done` is called later from the GPU's thread unless an error is returned here.
  Status Profile(RunManager& runs, const v1::ProfileRequest& request, Done done);

  /// `run --profile`, on the GPU's thread after the item's timing: fills m's counters, or its
  /// counters_note with why there are none. A refusal of the host is remembered for the run, so
  /// that its later items do not ask again.
  void ProfileMeasurement(GpuWorker& gpu, const RunPlan& plan, const PlannedMeasurement& item,
                          int64_t run_id, uint64_t seed, v1::Measurement* m) override;

  /// One launch, now, on the caller's thread (which must hold the GPU). Retries once without
  /// the metrics this ncu does not know, which then carry a note.
  ProfileResult ProfileLaunch(const ProfileTarget& target,
                              const std::vector<CounterSelection>& counters);

  /// The plan limits of Profile calls from now on (SIGHUP); 0: none.
  void SetPlanLimits(int max_items, int64_t max_stored_bytes);

  /// The ncu this profiler runs ("" with `looked` saying where it looked), and its version.
  std::string Tool(std::string* looked) const;
  std::string ToolVersion(const std::string& tool);

 private:
  /// Remembers (or recalls, with an empty `why`) that the host refused profiling for a run.
  std::string RunRefusal(int64_t run_id, const std::string& why);

  ProfilerOptions options_;  ///< max_items and max_stored_bytes guarded by mu_
  const kernels::Registry* registry_;
  db::Store* store_;
  std::mutex mu_;
  std::map<std::string, std::string> versions_;         ///< tool path -> version; guarded by mu_
  std::map<int64_t, std::string> run_refusals_;         ///< run id -> why not; guarded by mu_
  std::atomic<uint64_t> next_task_{uint64_t(1) << 62};  ///< apart from the run manager's ids
};

}  // namespace ablation::core
