#include "server/core/reader_pool.h"

#include <spdlog/spdlog.h>

#include "db/error.h"

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

Status StatusFromException(const std::exception& e) {
  if (const auto* d = dynamic_cast<const db::Error*>(&e)) {
    switch (d->code()) {
      case db::Error::Code::kInvalidArgument:
        return InvalidArgument(d->what());
      case db::Error::Code::kNotFound:
        return NotFound(d->what());
      case db::Error::Code::kIncompatible:
        return FailedPrecondition(d->what());
      case db::Error::Code::kStorage:
        break;
    }
  }
  spdlog::error("internal error: {}", e.what());
  return {Code::kInternal, "internal error (the daemon's log has the details)"};
}

}  // namespace ablation::core
