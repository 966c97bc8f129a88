// ablation-worker --profile-once: the one-shot process a profiler watches. The daemon runs
// `ncu ... ablation-worker --profile-once --variant V --dtype D --shape MxNxK --warmup W` on the
// GPU's thread between measurements (server/core/inspect/profiler.h); this process opens the device
// as the resident worker does, launches the variant's own kernel W times to warm up, then once more
// for the profiler, and exits. It never times anything: the profiled launch is not a sample and
// no sample is ever taken under the profiler.
#pragma once

#include <cstdint>
#include <string>

#include "ablation/v1/ablation.pb.h"
#include "kernels/registry.h"
#include "server/worker/device.h"

namespace ablation::worker {

/// What one profile-once process runs.
struct ProfileOnceTask {
  int device = 0;
  std::string variant;  ///< canonical name
  std::string dtype = "bf16";
  ::ablation::v1::Shape shape;
  /// Launches before the profiled one: the profiler skips them (ncu --launch-skip), so that the
  /// counters are those of a launch with the caches of the launch path and the clocks settled.
  int warmup = 3;
  uint64_t seed = 1;  ///< the inputs' seed, as a measurement's (same values for the same seed)
  /// --user-code FILE: a user variant's build (a serialized worker.v1.UserCode) to load first.
  std::string user_code_file;
  /// --library-algo HEX: a cublas_<dtype>_best variant's algorithm (kLtAlgoBytes, as the resident
  /// worker's Describe gave it), so that the profiled launch is the timed one's. Without it this
  /// process times the heuristic's candidates itself before the warm-up (outside the profiled
  /// range) and launches the fastest.
  std::string library_algo;
};

/// Parses the arguments after --profile-once; "" or what is wrong with them.
std::string ParseProfileOnce(int argc, char** argv, ProfileOnceTask* task);

/// Warm-up launches, a synchronisation, the profiled launch, a synchronisation. Logs the
/// kernel's mangled symbol on stderr (what the profiler's filter names). "" or the error.
std::string RunProfileOnce(Device& d, const kernels::Registry& registry,
                           const ProfileOnceTask& task);

/// The whole mode, from main(): 0 after the launches, 2 for bad arguments, 1 when the device or
/// the launches failed (the reason on stderr).
int ProfileOnceMain(int argc, char** argv);

}  // namespace ablation::worker
