// A few threads of the daemon's own that run jobs in the order they came, with a bound on how
// many may wait: past it a job is refused at once (the caller answers RESOURCE_EXHAUSTED) rather
// than queued without end or given a thread of its own. User-kernel compiles run here (one thread
// per AddKernel call left 34,000 threads behind a flood of refused calls, and the process at its
// map limit).
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace ablation::core {

class WorkQueue {
 public:
  /// Called once: on a thread of the queue with false, or with true when the queue stopped
  /// before the job's turn (its caller must still be answered).
  using Job = std::function<void(bool cancelled)>;

  /// `threads` run the jobs; at most `max_waiting` wait for one.
  WorkQueue(int threads, size_t max_waiting);
  ~WorkQueue();
  WorkQueue(const WorkQueue&) = delete;
  WorkQueue& operator=(const WorkQueue&) = delete;

  /// Queues `job`; false (the job does not run) when `max_waiting` already wait or the queue is
  /// stopping.
  bool TrySubmit(Job job);
  /// Jobs waiting now, and running.
  size_t waiting() const;
  size_t running() const;
  /// Lets the jobs running end, cancels those waiting, then joins the threads. Idempotent.
  void Stop();

 private:
  void Loop();

  const size_t max_waiting_;
  std::vector<std::thread> threads_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Job> jobs_;   ///< guarded by mu_
  size_t running_ = 0;     ///< guarded by mu_
  bool stopping_ = false;  ///< guarded by mu_
};

}  // namespace ablation::core
