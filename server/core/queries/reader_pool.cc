#include "server/core/queries/reader_pool.h"

#include <algorithm>

namespace ablation::core {

ReaderPool::ReaderPool(const std::string& db_path, int threads) {
  for (int i = 0; i < std::max(1, threads); ++i)
    readers_.push_back(db::Store::OpenReadOnly(db_path));
  for (auto& reader : readers_) {
    db::Store* r = reader.get();
    threads_.emplace_back([this, r] { Loop(r); });
  }
}

ReaderPool::~ReaderPool() { Stop(); }

bool ReaderPool::Submit(Task task) {
  {
    std::lock_guard lock(mu_);
    if (stopping_) return false;
    tasks_.push_back(std::move(task));
  }
  cv_.notify_one();
  return true;
}

void ReaderPool::Stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  for (auto& t : threads_)
    if (t.joinable()) t.join();
}

void ReaderPool::Loop(db::Store* reader) {
  while (true) {
    Task task;
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [&] { return stopping_ || !tasks_.empty(); });
      if (tasks_.empty()) return;  // stopping, and nothing left to answer
      task = std::move(tasks_.front());
      tasks_.pop_front();
    }
    task(*reader);
  }
}

}  // namespace ablation::core
