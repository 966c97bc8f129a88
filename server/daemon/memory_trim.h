// The heap of a daemon that clients can make allocate in bursts: glibc keeps what a burst freed
// (every gRPC thread's arena holds its high-water mark), so that a burst of calls the daemon
// answered long ago still counts in its RSS, and each later burst lands in other arenas and adds
// to it. Two glibc settings bound that: fewer arenas (M_ARENA_MAX) for the process, set before
// any thread starts, and malloc_trim(0), which hands the free pages of every arena back, run
// once a second by a thread of its own while the daemon serves.
#pragma once

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>

namespace ablation::daemon {

/// Sets the process's arena count; call first in main, before any thread exists.
void LimitMallocArenas(int arenas);

class HeapTrimmer {
 public:
  explicit HeapTrimmer(int period_ms = 1000);
  ~HeapTrimmer();
  HeapTrimmer(const HeapTrimmer&) = delete;
  HeapTrimmer& operator=(const HeapTrimmer&) = delete;

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace ablation::daemon
