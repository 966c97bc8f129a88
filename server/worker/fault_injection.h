// TEST-ONLY fault injection. The daemon's tests prove crash and hang recovery with it; nothing
// else may set the variable. ABLATION_WORKER_TEST_FAULT:
//   crash-on-variant:NAME  the worker calls abort() when asked to measure NAME
//   hang-on-variant:NAME   the worker sleeps forever when asked to measure NAME
// Unset (production): no effect.
#pragma once

#include <string_view>

namespace ablation::worker {

inline constexpr const char* kTestFaultEnv = "ABLATION_WORKER_TEST_FAULT";

/// Called on each MeasureTask before anything else; aborts or hangs as configured.
void MaybeInjectTestFault(std::string_view variant);

}  // namespace ablation::worker
