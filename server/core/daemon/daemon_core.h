// Everything the daemon serves, wired together once: the store (the one writer, used only by the
// run path), the reader pool that answers queries, the run manager and the SASS inspector. The
// rpc layer talks to this and nothing below it; ablationd and the tests build it the same way.
#pragma once

#include <memory>
#include <string>

#include "db/store.h"
#include "kernels/registry.h"
#include "server/core/base/status.h"
#include "server/core/inspect/profiler.h"
#include "server/core/inspect/sass_inspect.h"
#include "server/core/queries/queries.h"
#include "server/core/queries/reader_pool.h"
#include "server/core/runs/run_manager.h"
#include "server/core/setup/presets.h"

namespace ablation::core {

struct CoreOptions {
  std::string db_path;
  RunManagerOptions runs;
  int readers = 4;  ///< read-only connections (and threads) answering queries
  SassInspectorOptions sass;
  ProfilerOptions profiler;
};

class DaemonCore {
 public:
  /// Opens (creating and migrating) the database, marks runs an earlier daemon left unfinished,
  /// opens the readers and starts the GPUs' workers. An error says what could not be opened.
  static Status Open(CoreOptions options, const kernels::Registry* registry,
                     std::unique_ptr<DaemonCore>* out);
  ~DaemonCore();

  RunManager& runs() { return *runs_; }
  Queries& queries() { return *queries_; }
  SassInspector& sass() { return *sass_; }
  Profiler& profiler() { return *profiler_; }
  const kernels::Registry& registry() const { return *registry_; }
  const Presets* presets() const { return presets_.get(); }

  /// Stops the runs (queued ones are told), then the readers. Idempotent.
  void Shutdown();

 private:
  DaemonCore() = default;

  const kernels::Registry* registry_ = nullptr;
  std::shared_ptr<const Presets> presets_;
  std::unique_ptr<db::Store> store_;
  std::unique_ptr<ReaderPool> readers_;
  /// Declared before runs_, whose GPU threads use it: it outlives them.
  std::unique_ptr<Profiler> profiler_;
  std::unique_ptr<RunManager> runs_;
  std::unique_ptr<Queries> queries_;
  std::unique_ptr<SassInspector> sass_;
};

}  // namespace ablation::core
