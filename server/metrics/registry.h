// The daemon's own numbers for monitoring: ablationd's metrics in a prometheus-cpp registry
// (Debian's prometheus-cpp-dev, its core library), moved by the events the core reports where
// they happen (run_recorder.cc, gpu_worker.cc). No HTTP here: server/metrics/endpoint.h serves the
// registry in Prometheus' text format.
//
// prometheus-cpp stays out of this header (the hooks include it from every corner of the core);
// registry() hands the registry itself to the endpoint and to tests.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "ablation/v1/ablation.pb.h"

namespace prometheus {
class Registry;
}  // namespace prometheus

namespace ablation::core::metrics {

/// ablationd's metrics and the events that move them. One per process (Daemon()), like a
/// Prometheus client's default registry: the hooks sit in code that has no handle to pass it
/// through, and the numbers describe the process anyway. Thread-safe.
class DaemonMetrics {
 public:
  /// Series of ablationd_latest_operations_per_second at most: one per device x variant x dtype x
  /// shape ever measured would grow without end over months of sweeps, so the least recently
  /// measured is dropped (and ablationd_metric_series_evicted_total counts it).
  static constexpr size_t kMaxTflopsSeries = 2000;

  DaemonMetrics();
  ~DaemonMetrics();
  DaemonMetrics(const DaemonMetrics&) = delete;
  DaemonMetrics& operator=(const DaemonMetrics&) = delete;

  /// Every family of the daemon, as a scrape collects them (prometheus::Registry::Collect).
  prometheus::Registry& registry();

  /// A GPU's worker was started (or restarted): whether it can run, and the device it saw (its
  /// UUID as nvidia-smi and DCGM print it, and its name; empty where there is none).
  void GpuAdopted(int gpu, bool usable, const std::string& uuid = "", const std::string& name = "");
  void WorkerRestarted(int gpu);
  /// A call to the worker got no answer within its time and the worker was killed.
  void WorkerHung(int gpu);
  /// The worker died while no task was running (killed, crashed between runs).
  void WorkerDiedIdle(int gpu);

  void RunCreated(int64_t run_id, v1::RunKind kind, int gpu);
  void RunStarted(int64_t run_id, const v1::DeviceIdentity& device, bool clocks_locked, int sm_mhz,
                  int mem_mhz);
  void Measured(int64_t run_id, const v1::Measurement& measurement);
  void Verified(const v1::VerifyResult& result);
  /// Any end: succeeded, partial, failed or cancelled (in the queue or running).
  void RunEnded(int64_t run_id, v1::RunState state);

  /// A fleet's export (server/core/fleet/exporter.h): the outbox's size and oldest row, whether
  /// the database answered, and each run exported (or found already there) or failed.
  void FleetBacklog(int64_t runs, int64_t oldest_enqueued_at_ms);
  void FleetDatabaseUp(bool up);
  void FleetExported(bool already_there);
  void FleetExportFailed();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// The process's metrics.
DaemonMetrics& Daemon();

}  // namespace ablation::core::metrics
