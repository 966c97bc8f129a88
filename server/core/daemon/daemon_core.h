// Everything the daemon serves, wired together once: the store (the one writer, used only by the
// run path), the reader pool that answers queries, the run manager and the SASS inspector. The
// rpc layer talks to this and nothing below it; ablationd and the tests build it the same way.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "db/store.h"
#include "kernels/registry.h"
#include "server/core/base/status.h"
#include "server/core/fleet/exporter.h"
#include "server/core/inspect/profiler.h"
#include "server/core/inspect/sass_inspect.h"
#include "server/core/queries/queries.h"
#include "server/core/queries/reader_pool.h"
#include "server/core/runs/run_manager.h"
#include "server/core/setup/presets.h"
#include "server/core/userkernels/user_kernels.h"

namespace ablation::core {

struct CoreOptions {
  std::string db_path;
  RunManagerOptions runs;
  int readers = 4;  ///< read-only connections (and threads) answering queries
  SassInspectorOptions sass;
  ProfilerOptions profiler;
  UserKernelOptions user_kernels;
  FleetExportOptions fleet;  ///< conninfo '' : no export (runs wait in the outbox)
  /// Hears what happens (the daemon wires in its metrics, server/metrics/registry.h); null:
  /// nothing listens. Outlives the core.
  DaemonEvents* events = nullptr;
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
  /// The presets of the moment: the configured ones and every user kernel's ladder
  /// ("user.<kernel>").
  std::shared_ptr<const Presets> presets() const;
  UserKernels& user_kernels() { return *user_kernels_; }

  /// The RPCs of user kernels, with the caller the rpc layer identified. AddKernel compiles for
  /// GPU 0's architecture (FailedPrecondition without a GPU) on the user kernels' compile
  /// threads, which call `done` (or at once, when it is refused first); it never blocks.
  using KernelAdded = std::function<void(const Status& status, const v1::AddKernelResponse&)>;
  void AddKernel(const KernelCaller& caller, const v1::AddKernelRequest& request, KernelAdded done);
  Status ListKernels(const v1::ListKernelsRequest& request, v1::ListKernelsResponse* response);
  Status GetKernel(const KernelCaller& caller, const v1::GetKernelRequest& request,
                   v1::GetKernelResponse* response);
  Status RemoveKernel(const KernelCaller& caller, const v1::RemoveKernelRequest& request);

  /// Stops the runs (queued ones are told), then the readers. Idempotent.
  void Shutdown();

 private:
  DaemonCore() = default;

  const kernels::Registry* registry_ = nullptr;
  std::shared_ptr<const Presets> presets_;
  std::unique_ptr<db::Store> store_;
  std::unique_ptr<ReaderPool> readers_;
  /// Declared before runs_, whose planning reads its catalog: it outlives them.
  std::unique_ptr<UserKernels> user_kernels_;
  /// Declared before runs_, whose GPU threads use it: it outlives them.
  std::unique_ptr<Profiler> profiler_;
  std::unique_ptr<RunManager> runs_;
  std::unique_ptr<Queries> queries_;
  std::unique_ptr<SassInspector> sass_;
  /// Reads the store from its own thread; stopped before the store closes.
  std::unique_ptr<FleetExporter> fleet_;
};

/// The API's form of a held kernel.
v1::UserKernel ToProto(const KernelSummary& summary);

}  // namespace ablation::core
