// The daemon's own numbers for monitoring: ablationd's metrics in a prometheus-cpp registry
// (Debian's prometheus-cpp-dev, its core library), moved by the events the core reports where they
// happen. DaemonMetrics is an observer of the core (server/core/base/events.h) that the daemon
// makes and wires in (server/daemon/run.cc): it stands above the core, which never includes it
// (tests/layering/check_layers.py). No HTTP here: server/metrics/endpoint.h serves the registry in
// Prometheus' text format.
//
// prometheus-cpp stays out of this header; registry() hands the registry itself to the endpoint
// and to tests.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "ablation/v1/ablation.pb.h"
#include "server/core/base/events.h"

namespace prometheus {
class Registry;
}  // namespace prometheus

namespace ablation::metrics {

/// ablationd's metrics and the events that move them. The daemon makes one and hands it to the
/// core (CoreOptions::events) and to the endpoint; tests make their own. Thread-safe.
class DaemonMetrics final : public core::DaemonEvents {
 public:
  /// Series of ablationd_latest_operations_per_second at most: one per device x variant x dtype x
  /// shape ever measured would grow without end over months of sweeps, so the least recently
  /// measured is dropped (and ablationd_metric_series_evicted_total counts it).
  static constexpr size_t kMaxTflopsSeries = 2000;

  DaemonMetrics();
  ~DaemonMetrics() override;
  DaemonMetrics(const DaemonMetrics&) = delete;
  DaemonMetrics& operator=(const DaemonMetrics&) = delete;

  /// Every family of the daemon, as a scrape collects them (prometheus::Registry::Collect).
  prometheus::Registry& registry();

  // The core's events (server/core/base/events.h says what each is).
  void GpuAdopted(int gpu, bool usable, const std::string& uuid, const std::string& name) override;
  void WorkerRestarted(int gpu) override;
  void WorkerHung(int gpu) override;
  void WorkerDiedIdle(int gpu) override;
  void RunCreated(int64_t run_id, v1::RunKind kind, int gpu) override;
  void RunStarted(int64_t run_id, const v1::DeviceIdentity& device, bool clocks_locked, int sm_mhz,
                  int mem_mhz) override;
  void Measured(int64_t run_id, const v1::Measurement& measurement) override;
  void Verified(const v1::VerifyResult& result) override;
  void RunEnded(int64_t run_id, v1::RunState state) override;
  void FleetBacklog(int64_t runs, int64_t oldest_enqueued_at_ms) override;
  void FleetDatabaseUp(bool up) override;
  void FleetExported(bool already_there) override;
  void FleetExportFailed() override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ablation::metrics
