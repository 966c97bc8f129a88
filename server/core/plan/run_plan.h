// Validation of requests and the measurement plan they produce. Every request is checked here,
// before anything is queued or written; errors name the field that is wrong.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ablation/v1/ablation.pb.h"
#include "kernels/registry.h"
#include "server/core/base/status.h"
#include "server/core/gpu/clock_lock.h"
#include "server/core/gpu/regime.h"
#include "server/core/plan/limits.h"

namespace ablation::core {

/// Defaults applied to unset TimingOptions fields (the daemon's config can change them).
struct TimingDefaults {
  int min_samples = 10;
  double min_seconds = 0.5;
  double max_seconds = 10.0;
  double target_noise = 0.005;
  int warmup_count = 3;
  double warmup_seconds = 0.1;
  int max_samples = 100000;
  /// The regime of a request that names none, and the regimes' knobs (config [timing]).
  Regime regime = Regime::kSustained;
  RegimeParams regime_params;
};

/// What the daemon knows of a GPU when it validates a request (from the worker's hello).
struct DeviceLimits {
  bool known = false;
  int64_t memory_bytes = 0;
  int64_t l2_bytes = 0;
  std::string compute_capability;  ///< "9.0"; empty when not known
};

/// "" when `device` can run `v`, else why not: a variant built for one arch-specific target (its
/// "arch" parameter, e.g. the sm90 family's "sm_90a") runs on that compute capability only.
std::string ArchRefusal(const kernels::Variant& v, const DeviceLimits& device);

struct PlannedMeasurement {
  const kernels::Variant* variant = nullptr;
  kernels::Problem problem;
};

/// How a run holds the clocks: observed, or locked to a target resolved against its GPU when the
/// run is admitted (a bad value is refused before anything is written).
struct ClockPolicy {
  bool lock = false;
  std::string sm_spec;   ///< clocks.sm_mhz as asked: a number, "base", "max" or empty
  std::string mem_spec;  ///< clocks.mem_mhz as asked
  ClockTarget target;    ///< resolved (lock only)
};

/// The policy in words, as stored with each measurement: "observe" or "lock sm=1980 mem=3201".
std::string ClockPolicyText(const ClockPolicy& policy);

struct RunPlan {
  std::vector<const kernels::Variant*> variants;  ///< resolved, deduplicated, in request order
  std::vector<kernels::Problem> problems;         ///< the GEMMs' (shapes)
  /// Kernels of their own contract: the request's sizes, as typed ("rows=8192,cols=4096"); each
  /// such variant runs every one of them, or its default sizes where none are given.
  std::vector<std::string> sizes;
  std::vector<PlannedMeasurement> items;  ///< shape-major: every variant at shape 0, then 1, ...
  v1::TimingOptions timing;               ///< with defaults applied
  kernels::DType dtype = kernels::DType::kBF16;
  int device = 0;
  bool verify = false;
  /// What Verify asked to check against (unspecified: the default per item); run --verify
  /// always uses the default.
  v1::Reference reference = v1::REFERENCE_UNSPECIFIED;
  std::string reference_variant;  ///< with REFERENCE_VARIANT: the canonical name
  ClockPolicy clocks;
  /// Every item is measured once per round, each round in its own shuffled order (round_order.h).
  int rounds = 1;
  uint64_t order_seed = 0;  ///< 0 until the run is admitted: then derived from its id if unset
  /// run --profile: each item's counters after its first timing (profiler.h), these metrics.
  bool profile = false;
  std::vector<std::string> profile_metrics;
  /// The power regime every window is measured in, and its knobs (the request's timing fields
  /// over the daemon's defaults).
  Regime regime = Regime::kSustained;
  RegimeParams regime_params;
  /// Items of one problem (dtype and shape) measured interleaved in one window per round.
  bool paired = true;
};

/// The windows of a plan: the indices of the items measured together, those of one problem
/// (dtype and shape) when the plan is paired, each item alone otherwise; in plan order.
std::vector<std::vector<int>> WindowGroups(const RunPlan& plan);

/// The proto's regime of a plan's.
v1::Regime ToProto(Regime r);

/// Below this fraction of the device's maximum SM clock a sample is low-clock (flagged, shared).
inline constexpr double kDefaultLowClockFraction = 0.75;

/// Rounds of a preset run that does not ask for a number (a ladder's changes are compared, and
/// rounds are what makes them comparable); other runs default to one.
inline constexpr int kPresetDefaultRounds = 3;

/// Most rounds a run may ask for.
inline constexpr int kMaxRounds = 100;

/// Sets the plan's rounds from the request (0: `default_rounds`) and divides the per-item time
/// budget among them, so that a run with rounds costs what it would without: min/max seconds
/// divided by the rounds, min samples rounded up. Each round's window keeps its length (a window
/// must average the power controller's oscillation whatever the rounds). InvalidArgument when
/// out of range.
Status ApplyRounds(int requested, int default_rounds, uint64_t order_seed, RunPlan* plan);

/// Device memory a measurement needs (inputs, both B layouts where a transpose is needed, output,
/// a reference output when verifying, and the L2 flush buffer); CheckFits adds the variants'
/// scratch (Variant::scratch_bytes).
int64_t RequiredDeviceBytes(const kernels::Problem& p, const DeviceLimits& device, bool verify);

Status PlanRun(const v1::RunRequest& request, const kernels::Registry& registry,
               const DeviceLimits& device, const TimingDefaults& defaults, RunPlan* plan);

Status PlanVerify(const v1::VerifyRequest& request, const kernels::Registry& registry,
                  const DeviceLimits& device, RunPlan* plan);

/// Parses "bf16" etc.; empty means bf16. The error names `field` and the known types.
Status ParseDTypeField(const std::string& text, const std::string& field, kernels::DType* out);

/// Checks RunRequest.profile_metrics (counter words, counters.h) and carries profile /
/// profile_metrics into the plan.
Status ApplyProfileRequest(const v1::RunRequest& request, RunPlan* plan);

}  // namespace ablation::core
