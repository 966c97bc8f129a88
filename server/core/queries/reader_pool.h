// Queries run here, never on gRPC's reaction threads and never behind the writer: a few threads,
// each with its own read-only connection to the database (WAL readers do not wait for the
// writer's transactions or fsyncs). Tasks run in the order they were submitted, up to `threads`
// at a time.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "db/store.h"
#include "server/core/base/status.h"

namespace ablation::core {

class ReaderPool {
 public:
  using Task = std::function<void(db::Store& reader)>;

  /// Opens `threads` read-only connections to `db_path` (which the writer has already created
  /// and migrated). Throws db::Error when a connection cannot be opened.
  ReaderPool(const std::string& db_path, int threads);
  ~ReaderPool();
  ReaderPool(const ReaderPool&) = delete;
  ReaderPool& operator=(const ReaderPool&) = delete;

  /// Queues a task; false once the pool is stopping (the task does not run).
  bool Submit(Task task);
  /// Runs the queued tasks to their end, then joins the threads.
  void Stop();

 private:
  void Loop(db::Store* reader);

  std::vector<std::unique_ptr<db::Store>> readers_;
  std::vector<std::thread> threads_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Task> tasks_;  ///< guarded by mu_
  bool stopping_ = false;   ///< guarded by mu_
};

}  // namespace ablation::core
