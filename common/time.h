// Time as the daemon, the worker and the client write it: wall-clock milliseconds since the Unix
// epoch (what every stored *_ms column holds), and seconds elapsed on the steady clock (what
// durations are measured with, immune to the wall clock being set).
#pragma once

#include <chrono>
#include <cstdint>

namespace ablation::common {

/// Milliseconds since the Unix epoch, now.
inline int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

/// Seconds on the steady clock since `start`.
inline double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace ablation::common
