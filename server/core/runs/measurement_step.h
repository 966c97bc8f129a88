// One window of a run on its GPU: verify its items when the plan asks, bring the GPU to the
// plan's regime (settle it, or let it cool: regime.h), measure the items interleaved in one
// window (or, in burst, in short windows each after a cool-down), and return the rows as they
// will be stored. Knows the worker protocol, the regimes and the verification policy; knows
// nothing of queues, storage or events (the run executor records what this returns).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "ablation/v1/ablation.pb.h"
#include "ablation/v1/worker.pb.h"
#include "server/core/gpu/nvml.h"
#include "server/core/gpu/regime.h"
#include "server/core/gpu/telemetry.h"
#include "server/core/plan/run_plan.h"
#include "server/core/plan/verification_policy.h"
#include "server/core/runs/library_choices.h"
#include "server/core/workers/gpu_worker.h"

namespace ablation::core {

/// What every step of one run shares.
struct StepContext {
  GpuWorker* gpu = nullptr;
  const RunPlan* plan = nullptr;
  int64_t run_id = 0;
  Nvml* nvml = nullptr;                 ///< null: no telemetry
  std::string nvml_unavailable;         ///< why, when nvml is null
  std::string uuid;                     ///< the GPU's, for NVML
  double expected_sm_mhz = 0;           ///< below it a sample counts as throttled (0: no test)
  std::chrono::seconds hang_margin{5};  ///< beyond twice a task's own budget: hung
  std::atomic<uint64_t>* next_task = nullptr;
  const kernels::Registry* registry = nullptr;  ///< which references take which shapes
  /// Called with each verification as soon as it is known (the executor stores it).
  std::function<void(const v1::VerifyResult&)> on_verified;
  /// True once the run must stop: settling and cooling give up at their next step.
  std::function<bool()> stopping;
  /// The device, for the clock-normalised figures (peak.h): from the worker's hello.
  int sm_count = 0;
  std::string compute_capability;
  /// The library baselines' chosen algorithms (library_choices.h); null: none are kept, and a
  /// _best variant is timed again in every window.
  LibraryChoices* library = nullptr;
};

/// How far above the device's measured bandwidth a kernel's bytes per second may be before they
/// are refused: the worker's copy kernel reaches about 85-92% of HBM's nominal rate, and a kernel
/// that mostly reads may beat a copy by a few percent, never by a quarter.
inline constexpr double kAboveMeasuredBandwidth = 1.25;

class MeasurementStep {
 public:
  explicit MeasurementStep(StepContext context) : ctx_(std::move(context)) {}

  /// Where one window stands in its run.
  struct WindowSlot {
    int round = 0;
    int64_t window = 0;        ///< its id, unique within the run (Measurement.window)
    std::vector<int> items;    ///< the plan's items it interleaves, in cycle order
    std::vector<bool> verify;  ///< per item: verify before timing (first visit of --verify)
  };
  struct WindowOutcome {
    std::vector<v1::Measurement> rows;  ///< one per item, in slot order; sequence left 0
    /// Why the window as a whole failed (the worker died or hung, a launch failed); "" when it
    /// did not. Its timed rows then carry the error too.
    std::string failure;
    std::string failed_variant;  ///< whose launch failed, where the worker could tell
    bool cancelled = false;      ///< stopped while settling or cooling: the rows are not timed
  };
  WindowOutcome MeasureWindow(const WindowSlot& slot);

  /// One verification against `reference`. A worker that fails or dies gives a result that did
  /// not pass, with the reason in its error.
  v1::VerifyResult Verify(const PlannedMeasurement& item, const ReferenceChoice& reference,
                          uint64_t seed);

  /// Asks the worker to free the inputs it keeps between measurements (the end of a run, before
  /// a profile, which runs in a process of its own). Nothing when no worker is up; a worker that
  /// fails to answer is handled as any other (the next measurement starts a new one).
  void ReleaseInputs();

 private:
  /// Verifies for `run --verify`: sets the measurement's outcome; false when it must not be timed.
  bool VerifyBeforeTiming(const PlannedMeasurement& item, uint64_t seed, v1::Measurement* m);

  /// One window task of `variants` of `problem`; "" and *out filled, or the failure (with
  /// *failed_variant where the worker named one). Samples NVML meanwhile into *nvml.
  struct Call {
    std::vector<std::string> variants;
    kernels::Problem problem;
    uint64_t seed = 0;
    double window_seconds = 0;
    int min_cycles = 1;
    bool warmup = false;
  };
  std::string CallWindow(const Call& call, worker::v1::MeasureResult* out,
                         std::vector<NvmlSample>* nvml, std::string* failed_variant,
                         std::optional<double>* energy_j = nullptr);
  /// NVML's energy counter in joules; unset where it cannot be read.
  std::optional<double> EnergyJ();

  /// What the regime produced for the window's variants: their pooled samples and statistics,
  /// the NVML readings of the measured spans, and what conditioning cost and found.
  struct Timed {
    worker::v1::MeasureResult window;  ///< members pooled over the short windows of a burst
    std::vector<NvmlSample> nvml;
    int windows = 0;
    bool conditioned = false;
    std::string note;
    double settle_seconds = 0;
    double cool_seconds = 0;
    v1::Cost worker_cost;  ///< summed over the window tasks, conditioning's included
    bool cancelled = false;
    std::string failed_variant;
    std::optional<double> window_energy_j;  ///< the measured window's (sustained, locked)
  };
  std::string TimeSustained(const Call& base, Timed* out);

  /// One variant alone (SoloFigures): its pooled samples over the solo span, and what the span
  /// cost and drew.
  struct Solo {
    worker::v1::MemberResult member;
    std::optional<double> energy_j;  ///< over the span's worker calls; unset: NVML could not say
    double sampling_seconds = 0;     ///< the span's sampling time
    double gpu_seconds = 0;          ///< the span's GPU time of launches
    int64_t launches = 0;
    bool conditioned = false;
    std::string note;
    std::string error;        ///< why there are no figures
    double wall_seconds = 0;  ///< the whole solo step's, settling included
    v1::Cost worker_cost;     ///< the worker's, summed over the solo chunks
  };
  /// Runs `variant` of `base` alone from the state the GPU is in, in chunks, until the settle test
  /// passes on its own chunks (or settle_max_seconds), and pools the last solo_seconds.
  void TimeSolo(const Call& base, const std::string& variant, Solo* out);
  /// The window's own figures as the solo span of its one variant (a window of one variant is
  /// measured alone already).
  Solo SoloOfWindow(const Timed& timed) const;
  /// The solo spans of a window's timed variants (in base.variants' order), after its paired
  /// window; *solo_seconds gets each row's wall time for its own (by slot index).
  std::vector<Solo> MeasureSolos(const Call& base, const Timed& timed,
                                 const std::vector<size_t>& timed_slots,
                                 std::vector<double>* solo_seconds);
  /// The solo figures of a row from its span.
  void FillSolo(const Solo& solo, const kernels::Variant& variant, const kernels::Problem& problem,
                v1::SoloFigures* out) const;
  /// Adds the stored algorithm of every _best library variant of the call to the task, and keeps
  /// what a reply chose.
  void AddLibraryChoices(const Call& call, worker::v1::MeasureTask* task);
  void KeepLibraryChoices(const Call& call, const worker::v1::MeasureResult& result);
  std::string TimeBurst(const Call& base, Timed* out);
  /// Idles until CoolDetector says cool (or gives up); returns its description.
  std::string CoolDown(bool* cool, double* seconds);

  /// Fills a timed row from its member's pooled result.
  void FillRow(const worker::v1::MemberResult& member, const Timed& timed, int timed_members,
               const kernels::Variant& variant, const kernels::Problem& problem,
               v1::Measurement* m) const;
  /// A row's roofline figures (Measurement.roofline) from its work model's memory bytes over its
  /// median time (a GEMM's: A, B and C once). With `refuse` (a kernel of its own contract, whose
  /// bytes its author counts), a GB/s above kAboveMeasuredBandwidth times the device's measured
  /// bandwidth is refused, as a figure above the compute peak is, unless the L2 was kept hot.
  void FillRoofline(const kernels::WorkModel& work, const kernels::Problem& problem, bool refuse,
                    double bandwidth, v1::Measurement* m) const;

  uint64_t NextTask() { return (*ctx_.next_task)++; }
  bool Stopping() const { return ctx_.stopping && ctx_.stopping(); }

  StepContext ctx_;
  TelemetrySampler sampler_;
  /// The coolest temperature seen on this GPU at rest during the run (burst's reference); NaN
  /// until a cool-down has read one.
  double coolest_c_ = std::numeric_limits<double>::quiet_NaN();
  /// When the GPU last finished work of this step (the cool-down counts its idle time from it).
  std::chrono::steady_clock::time_point last_busy_{};
};

/// Adds the worker's cost of one window task to a running sum (the step's windows and regimes).
void AddCost(const v1::Cost& c, v1::Cost* sum);

/// True when a verification failed because its reference could not run (the worker says so in
/// VerifyResult.reference_failed): the variant is then "not checked", never "failed".
bool IsReferenceFailure(const v1::VerifyResult& result);

/// "failed against cublas: rel frobenius 0.17, max abs 3.2, 12 mismatches, 0 NaN, 0 unwritten".
std::string DescribeFailedVerification(const v1::VerifyResult& result);

}  // namespace ablation::core
