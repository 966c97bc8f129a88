#include "server/core/base/work_queue.h"

#include <algorithm>

namespace ablation::core {

WorkQueue::WorkQueue(int threads, size_t max_waiting) : max_waiting_(max_waiting) {
  for (int i = 0; i < std::max(threads, 1); ++i) threads_.emplace_back([this] { Loop(); });
}

WorkQueue::~WorkQueue() { Stop(); }

bool WorkQueue::TrySubmit(Job job) {
  {
    std::lock_guard lock(mu_);
    if (stopping_ || jobs_.size() >= max_waiting_) return false;
    jobs_.push_back(std::move(job));
  }
  cv_.notify_one();
  return true;
}

size_t WorkQueue::waiting() const {
  std::lock_guard lock(mu_);
  return jobs_.size();
}

size_t WorkQueue::running() const {
  std::lock_guard lock(mu_);
  return running_;
}

void WorkQueue::Stop() {
  std::deque<Job> cancelled;
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
    cancelled.swap(jobs_);
  }
  cv_.notify_all();
  for (Job& job : cancelled) job(true);
  for (std::thread& t : threads_)
    if (t.joinable()) t.join();
}

void WorkQueue::Loop() {
  for (;;) {
    Job job;
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [this] { return stopping_ || !jobs_.empty(); });
      if (jobs_.empty()) return;  // stopping, and nothing left to run
      job = std::move(jobs_.front());
      jobs_.pop_front();
      ++running_;
    }
    job(false);
    std::lock_guard lock(mu_);
    --running_;
  }
}

}  // namespace ablation::core
