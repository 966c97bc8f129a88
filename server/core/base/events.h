// What the core reports as it happens, to an observer the daemon wires in (the metrics,
// server/metrics/registry.h, stand above the core and implement this). The core calls these where
// the events happen and knows nothing of who listens; every method does nothing unless
// overridden, and NoEvents() is what a core given no observer reports to (tests, tools).
// Observers are called from the GPUs' threads, the run paths and the fleet exporter's thread at
// once: an implementation is thread-safe.
#pragma once

#include <cstdint>
#include <string>

#include "ablation/v1/ablation.pb.h"

namespace ablation::core {

class DaemonEvents {
 public:
  virtual ~DaemonEvents() = default;

  /// A GPU's worker was started (or restarted): whether it can run, and the device it saw (its
  /// UUID as nvidia-smi and DCGM print it, and its name; empty where there is none).
  virtual void GpuAdopted(int /*gpu*/, bool /*usable*/, const std::string& /*uuid*/,
                          const std::string& /*name*/) {}
  virtual void WorkerRestarted(int /*gpu*/) {}
  /// A call to the worker got no answer within its time and the worker was killed.
  virtual void WorkerHung(int /*gpu*/) {}
  /// The worker died while no task was running (killed, crashed between runs).
  virtual void WorkerDiedIdle(int /*gpu*/) {}

  virtual void RunCreated(int64_t /*run_id*/, v1::RunKind /*kind*/, int /*gpu*/) {}
  virtual void RunStarted(int64_t /*run_id*/, const v1::DeviceIdentity& /*device*/,
                          bool /*clocks_locked*/, int /*sm_mhz*/, int /*mem_mhz*/) {}
  virtual void Measured(int64_t /*run_id*/, const v1::Measurement& /*measurement*/) {}
  virtual void Verified(const v1::VerifyResult& /*result*/) {}
  /// Any end: succeeded, partial, failed or cancelled (in the queue or running).
  virtual void RunEnded(int64_t /*run_id*/, v1::RunState /*state*/) {}

  /// A fleet's export (server/core/fleet/exporter.h): the outbox's size and oldest row, whether
  /// the database answered, and each run exported (or found already there) or failed.
  virtual void FleetBacklog(int64_t /*runs*/, int64_t /*oldest_enqueued_at_ms*/) {}
  virtual void FleetDatabaseUp(bool /*up*/) {}
  virtual void FleetExported(bool /*already_there*/) {}
  virtual void FleetExportFailed() {}
};

/// The observer that hears nothing: a core, run manager or exporter given none reports here.
DaemonEvents& NoEvents();

}  // namespace ablation::core
