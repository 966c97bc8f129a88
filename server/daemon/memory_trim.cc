#include "server/daemon/memory_trim.h"

#include <malloc.h>

#include <chrono>

namespace ablation::daemon {

void LimitMallocArenas(int arenas) { ::mallopt(M_ARENA_MAX, arenas); }

HeapTrimmer::HeapTrimmer(int period_ms)
    : thread_([this, period_ms] {
        std::unique_lock lock(mu_);
        while (!cv_.wait_for(lock, std::chrono::milliseconds(period_ms), [this] { return stop_; }))
          ::malloc_trim(0);
      }) {}

HeapTrimmer::~HeapTrimmer() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

}  // namespace ablation::daemon
