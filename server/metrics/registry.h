// The daemon's own numbers for monitoring: a small in-process registry of counters, gauges and
// histograms that the core updates where things happen (run_recorder.cc, gpu_worker.cc), and the
// named metrics of ablationd on top of it. No HTTP here: server/metrics/ writes a snapshot in
// Prometheus' text format and serves it.
//
// Written by hand because Debian 12 packages no C++ Prometheus client (prometheus-cpp is not in
// the archive); what is needed is small: label sets, a cap on series, cumulative buckets.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "ablation/v1/ablation.pb.h"

namespace ablation::core::metrics {

enum class MetricType { kCounter, kGauge, kHistogram };

/// One series at the time of a snapshot: its label values, in the family's label order.
struct SeriesValue {
  std::vector<std::string> labels;
  double value = 0;  ///< counter, gauge
  /// Histogram: observations at most each bound (cumulative, as the text format wants them),
  /// one per bound; the +Inf bucket is `count`.
  std::vector<uint64_t> cumulative_buckets;
  double sum = 0;
  uint64_t count = 0;
};

struct FamilySnapshot {
  std::string name;
  std::string help;
  MetricType type = MetricType::kGauge;
  std::vector<std::string> label_names;
  std::vector<double> bounds;       ///< histogram bucket upper bounds, ascending, finite
  std::vector<SeriesValue> series;  ///< ordered by label values
};

class Counter;

/// A metric and its series, one per distinct set of label values. Thread-safe.
class Family {
 public:
  Family(std::string name, std::string help, MetricType type, std::vector<std::string> label_names,
         std::vector<double> bounds = {});
  Family(const Family&) = delete;
  Family& operator=(const Family&) = delete;

  const std::string& name() const { return name_; }
  /// At most `max_series` series: a new one beyond that evicts the one updated longest ago, and
  /// `evictions` (labelled with this family's name) counts it. 0: no cap.
  void LimitSeries(size_t max_series, Counter* evictions);
  /// Drops one series (a GPU that went away, say). Unknown labels: nothing happens.
  void Remove(const std::vector<std::string>& labels);
  size_t series_count() const;
  FamilySnapshot Snapshot() const;

 protected:
  struct Series {
    double value = 0;
    std::vector<uint64_t> buckets;  ///< per bound, not cumulative
    double sum = 0;
    uint64_t count = 0;
    uint64_t touched = 0;  ///< update tick, for eviction
  };
  /// The series of `labels`, created (and the cap enforced) if new; mu_ must be held. Label
  /// counts that differ from the family's are a programming error: std::invalid_argument.
  Series& SeriesLocked(const std::vector<std::string>& labels);

  const std::string name_;
  const std::string help_;
  const MetricType type_;
  const std::vector<std::string> label_names_;
  const std::vector<double> bounds_;
  mutable std::mutex mu_;
  std::map<std::vector<std::string>, Series> series_;  ///< guarded by mu_
  uint64_t tick_ = 0;                                  ///< guarded by mu_
  size_t max_series_ = 0;                              ///< guarded by mu_
  Counter* evictions_ = nullptr;                       ///< guarded by mu_
};

class Counter final : public Family {
 public:
  Counter(std::string name, std::string help, std::vector<std::string> label_names)
      : Family(std::move(name), std::move(help), MetricType::kCounter, std::move(label_names)) {}
  /// A counter only goes up: a negative `by` is ignored.
  void Inc(const std::vector<std::string>& labels, double by = 1);
  /// Makes the series exist at 0, so that a rate over it is defined before the first event.
  void Touch(const std::vector<std::string>& labels) { Inc(labels, 0); }
  double Value(const std::vector<std::string>& labels) const;
};

class Gauge final : public Family {
 public:
  Gauge(std::string name, std::string help, std::vector<std::string> label_names)
      : Family(std::move(name), std::move(help), MetricType::kGauge, std::move(label_names)) {}
  void Set(const std::vector<std::string>& labels, double value);
  void Add(const std::vector<std::string>& labels, double delta);
  double Value(const std::vector<std::string>& labels) const;
};

class Histogram final : public Family {
 public:
  /// `bounds`: ascending finite upper bounds; +Inf is implied.
  Histogram(std::string name, std::string help, std::vector<std::string> label_names,
            std::vector<double> bounds);
  void Observe(const std::vector<std::string>& labels, double value);
};

/// Owns families; a snapshot of all of them is what an exposition writes.
class Registry {
 public:
  /// Names must be valid Prometheus names and unique: otherwise std::invalid_argument.
  Counter& AddCounter(std::string name, std::string help, std::vector<std::string> labels);
  Gauge& AddGauge(std::string name, std::string help, std::vector<std::string> labels);
  Histogram& AddHistogram(std::string name, std::string help, std::vector<std::string> labels,
                          std::vector<double> bounds);
  /// Every family, in the order they were added.
  std::vector<FamilySnapshot> Collect() const;

 private:
  void Check(const std::string& name, const std::vector<std::string>& labels) const;

  mutable std::mutex mu_;
  std::vector<std::unique_ptr<Family>> families_;  ///< guarded by mu_
};

/// ablationd's metrics and the events that move them. One per process (Daemon()), like a
/// Prometheus client's default registry: the hooks sit in code that has no handle to pass it
/// through, and the numbers describe the process anyway.
class DaemonMetrics {
 public:
  /// Series of ablationd_latest_operations_per_second at most: one per device x variant x dtype x
  /// shape ever measured would grow without end over months of sweeps, so the least recently
  /// measured is dropped (and ablationd_metric_series_evicted_total counts it).
  static constexpr size_t kMaxTflopsSeries = 2000;

  DaemonMetrics();

  Registry& registry() { return registry_; }

  /// A GPU's worker was started (or restarted): whether it can run, and the device it saw (its
  /// UUID as nvidia-smi and DCGM print it, and its name; empty where there is none).
  void GpuAdopted(int gpu, bool usable, const std::string& uuid = "", const std::string& name = "");
  void WorkerRestarted(int gpu);
  /// A call to the worker got no answer within its time and the worker was killed.
  void WorkerHung(int gpu);

  void RunCreated(int64_t run_id, v1::RunKind kind, int gpu);
  void RunStarted(int64_t run_id, const v1::DeviceIdentity& device, bool clocks_locked, int sm_mhz,
                  int mem_mhz);
  void Measured(int64_t run_id, const v1::Measurement& measurement);
  void Verified(const v1::VerifyResult& result);
  /// Any end: succeeded, partial, failed or cancelled (in the queue or running).
  void RunEnded(int64_t run_id, v1::RunState state);

 private:
  struct LiveRun {
    v1::RunKind kind = v1::RUN_KIND_UNSPECIFIED;
    int gpu = 0;
    bool queued = true;
    bool locked = false;
    std::string device_uuid;
  };
  void TouchGpuLocked(const std::string& gpu);

  Registry registry_;
  Counter& evicted_;
  Gauge& build_info_;
  Gauge& gpu_usable_;
  Gauge& queue_length_;
  Gauge& running_;
  Counter& runs_;
  Counter& measurements_;
  Counter& verifications_;
  Counter& restarts_;
  Counter& hangs_;
  Histogram& wall_seconds_;
  Gauge& clock_locked_;
  Gauge& clock_target_;
  Gauge& tflops_;  ///< ablationd_latest_operations_per_second
  Gauge& gpu_info_;

  std::mutex mu_;
  std::map<int64_t, LiveRun> live_;  ///< guarded by mu_: runs created and not yet ended
};

/// The process's metrics.
DaemonMetrics& Daemon();

}  // namespace ablation::core::metrics
