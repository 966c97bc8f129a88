#include "server/metrics/registry.h"

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <map>
#include <mutex>

#include "ablation/version.h"
#include "common/enum_words.h"

namespace ablation::metrics {
namespace {

using prometheus::Counter;
using prometheus::Family;
using prometheus::Gauge;
using prometheus::Histogram;
using prometheus::Labels;

std::string Gpu(int index) { return std::to_string(index); }

std::string ShapeText(const v1::Shape& s) {
  return std::to_string(s.m()) + "x" + std::to_string(s.n()) + "x" + std::to_string(s.k());
}

// A gauge family of at most `cap` series: a new one beyond that removes the one set longest ago
// and counts it in `evictions` (prometheus-cpp has no cap of its own).
class CappedGauge {
 public:
  CappedGauge(Family<Gauge>& family, size_t cap, Counter& evictions)
      : family_(family), cap_(cap), evictions_(evictions) {}

  void Set(const Labels& labels, double value) {
    std::lock_guard lock(mu_);
    auto it = series_.find(labels);
    if (it == series_.end()) {
      if (series_.size() >= cap_) {
        auto oldest = by_tick_.begin();
        auto gone = series_.find(oldest->second);
        family_.Remove(gone->second.gauge);
        series_.erase(gone);
        by_tick_.erase(oldest);
        evictions_.Increment();
      }
      it = series_.emplace(labels, Entry{&family_.Add(labels), 0}).first;
    } else {
      by_tick_.erase(it->second.tick);
    }
    it->second.tick = ++tick_;
    by_tick_.emplace(it->second.tick, labels);
    it->second.gauge->Set(value);
  }

 private:
  struct Entry {
    Gauge* gauge;
    uint64_t tick;  // when it was last set
  };
  Family<Gauge>& family_;
  const size_t cap_;
  Counter& evictions_;
  std::mutex mu_;
  std::map<Labels, Entry> series_;      // guarded by mu_
  std::map<uint64_t, Labels> by_tick_;  // guarded by mu_: oldest first
  uint64_t tick_ = 0;                   // guarded by mu_
};

Family<Gauge>& AddGauge(prometheus::Registry& r, const std::string& name, const std::string& help) {
  return prometheus::BuildGauge().Name(name).Help(help).Register(r);
}

Family<Counter>& AddCounter(prometheus::Registry& r, const std::string& name,
                            const std::string& help) {
  return prometheus::BuildCounter().Name(name).Help(help).Register(r);
}

}  // namespace

struct DaemonMetrics::Impl {
  struct LiveRun {
    v1::RunKind kind = v1::RUN_KIND_UNSPECIFIED;
    int gpu = 0;
    bool queued = true;
    bool locked = false;
    std::string device_uuid;
  };

  // A name registered twice is a mistake here, not a family to share (prometheus-cpp's default).
  prometheus::Registry registry{prometheus::Registry::InsertBehavior::Throw};
  Family<Counter>& evicted = AddCounter(
      registry, "ablationd_metric_series_evicted_total",
      "Series dropped from a metric with a cap on its series (the least recently updated goes "
      "first); non-zero means the cap hides some combinations");
  Family<Gauge>& build_info = AddGauge(registry, "ablationd_build_info",
                                       "Always 1; the daemon's version and git revision as labels");
  Family<Gauge>& gpu_usable =
      AddGauge(registry, "ablationd_gpu_usable",
               "1 when the GPU's worker is up and sees a device, 0 when runs on it are refused");
  Family<Gauge>& queue_length = AddGauge(registry, "ablationd_queue_length",
                                         "Runs waiting in the GPU's queue (not the one running)");
  Family<Gauge>& running =
      AddGauge(registry, "ablationd_runs_running", "Runs executing on the GPU now (0 or 1)");
  Family<Counter>& runs = AddCounter(
      registry, "ablationd_runs_total",
      "Runs that entered each state since the daemon started: a run counts once in queued, once "
      "in running if it started, and once in the state it ended in");
  Family<Counter>& measurements =
      AddCounter(registry, "ablationd_measurements_total", "Measurement rows stored, by status");
  Family<Counter>& verifications =
      AddCounter(registry, "ablationd_verifications_total", "Verification rows stored, by result");
  Family<Counter>& restarts =
      AddCounter(registry, "ablationd_worker_restarts_total",
                 "Workers started again after the previous one died or was killed");
  Family<Counter>& hangs =
      AddCounter(registry, "ablationd_worker_hangs_total",
                 "Worker calls that got no answer within their time; the worker was killed");
  Family<Counter>& idle_deaths =
      AddCounter(registry, "ablationd_worker_idle_deaths_total",
                 "Workers that died while the GPU was idle (noticed between runs, restarted)");
  Family<Histogram>& wall_seconds =
      prometheus::BuildHistogram()
          .Name("ablationd_measurement_wall_seconds")
          .Help(
              "Host wall time each measurement held its GPU (Measurement.wall_seconds): "
              "verification, warm-up, samples and everything between")
          .Register(registry);
  const Histogram::BucketBoundaries wall_bounds = {0.01, 0.05, 0.1, 0.25, 0.5, 1,   2.5,
                                                   5,    10,   20,  30,   60,  120, 300};
  Family<Gauge>& clock_locked =
      AddGauge(registry, "ablationd_clock_locked",
               "1 while a run holds the GPU's clocks locked (clocks.mode=lock), 0 when observed");
  Family<Gauge>& clock_target =
      AddGauge(registry, "ablationd_clock_lock_target_hertz",
               "The clock a lock holds (clock=sm or mem), in Hz; 0 when not locked");
  Family<Gauge>& tflops = AddGauge(
      registry, "ablationd_latest_operations_per_second",
      "Arithmetic operations per second (FLOP, OPS for int8; a multiply-add counting two) of the "
      "latest successful measurement of each device, variant, dtype and shape (MxNxK), in its "
      "window: at the clock the variants interleaved there set together (see "
      "ablationd_latest_solo_operations_per_second for the variant alone); at most 2000 series, "
      "the least recently measured dropped first");
  Family<Gauge>& solo_tflops = AddGauge(
      registry, "ablationd_latest_solo_operations_per_second",
      "Operations per second of the latest solo span of each device, variant, dtype and shape: "
      "the variant alone until its clock and power settled (sustained, locked), what it gives "
      "at the cap whatever it was measured beside; at most 2000 series");
  Family<Gauge>& joules = AddGauge(
      registry, "ablationd_latest_joules_per_operation",
      "NVML's energy over the latest solo span per operation of each device, variant, dtype and "
      "shape (joules; per FLOP, per OP for int8), where NVML reads the energy counter; at most "
      "2000 series");
  Family<Gauge>& gpu_info = AddGauge(
      registry, "ablationd_gpu_info",
      "Always 1: each GPU index's identity (UUID as nvidia-smi and DCGM print it), to join the "
      "per-GPU series: * on(instance, gpu) group_left(uuid) ablationd_gpu_info; DCGM's exporter "
      "calls the label UUID (label_replace renames it)");
  // A fleet's export (server/core/fleet/exporter.h); absent from a scrape until it starts.
  Family<Gauge>& fleet_outbox = AddGauge(
      registry, "ablationd_fleet_outbox_runs",
      "Finished runs in the outbox not yet in the fleet database (PostgreSQL); grows while it is "
      "away, back to 0 once caught up");
  Family<Gauge>& fleet_oldest = AddGauge(
      registry, "ablationd_fleet_outbox_oldest_enqueued_timestamp_seconds",
      "When the oldest run waiting in the outbox finished (unix seconds); 0 when none waits");
  Family<Gauge>& fleet_up =
      AddGauge(registry, "ablationd_fleet_database_up",
               "1 when the last attempt to reach the fleet database succeeded, 0 when it failed");
  Family<Counter>& fleet_exports = AddCounter(
      registry, "ablationd_fleet_exports_total",
      "Runs the exporter handed to the fleet database, by result: exported, or already_there (an "
      "earlier attempt had committed it)");
  Family<Counter>& fleet_failures = AddCounter(
      registry, "ablationd_fleet_export_failures_total",
      "Attempts to export a run that failed (the database away or refusing); each is retried");
  CappedGauge latest{tflops, kMaxTflopsSeries,
                     evicted.Add({{"metric", "ablationd_latest_operations_per_second"}})};
  CappedGauge latest_solo{solo_tflops, kMaxTflopsSeries,
                          evicted.Add({{"metric", "ablationd_latest_solo_operations_per_second"}})};
  CappedGauge latest_joules{joules, kMaxTflopsSeries,
                            evicted.Add({{"metric", "ablationd_latest_joules_per_operation"}})};

  std::mutex mu;
  std::map<int64_t, LiveRun> live;  // guarded by mu: runs created and not yet ended

  Impl() {
    build_info.Add({{"version", kDaemonVersion}, {"revision", kGitRevision}}).Set(1);
    // Every state and status exists at 0 from the start, so that a rate over it is defined
    // before the first event.
    for (auto kind : {v1::RUN_KIND_ABLATION, v1::RUN_KIND_VERIFY})
      for (int s = v1::RunState_MIN + 1; s <= v1::RunState_MAX; ++s) RunsOf(kind, v1::RunState(s));
    for (int s = v1::MeasurementStatus_MIN + 1; s <= v1::MeasurementStatus_MAX; ++s)
      measurements.Add({{"status", common::EnumWord(v1::MeasurementStatus(s))}});
    verifications.Add({{"result", "passed"}});
    verifications.Add({{"result", "failed"}});
  }

  Counter& RunsOf(v1::RunKind kind, v1::RunState state) {
    return runs.Add({{"kind", common::EnumWord(kind)}, {"state", common::EnumWord(state)}});
  }

  // Every per-GPU series exists from the GPU's start, so dashboards see 0 rather than nothing.
  void TouchGpu(const std::string& gpu) {
    queue_length.Add({{"gpu", gpu}});
    running.Add({{"gpu", gpu}});
    clock_locked.Add({{"gpu", gpu}});
    clock_target.Add({{"gpu", gpu}, {"clock", "sm"}});
    clock_target.Add({{"gpu", gpu}, {"clock", "mem"}});
    restarts.Add({{"gpu", gpu}});
    hangs.Add({{"gpu", gpu}});
    idle_deaths.Add({{"gpu", gpu}});
  }
};

DaemonMetrics::DaemonMetrics() : impl_(std::make_unique<Impl>()) {}

DaemonMetrics::~DaemonMetrics() = default;

prometheus::Registry& DaemonMetrics::registry() { return impl_->registry; }

void DaemonMetrics::GpuAdopted(int gpu, bool usable, const std::string& uuid,
                               const std::string& name) {
  std::lock_guard lock(impl_->mu);
  impl_->TouchGpu(Gpu(gpu));
  impl_->gpu_usable.Add({{"gpu", Gpu(gpu)}}).Set(usable ? 1 : 0);
  if (!uuid.empty())
    impl_->gpu_info.Add({{"gpu", Gpu(gpu)}, {"uuid", uuid}, {"model_name", name}}).Set(1);
}

void DaemonMetrics::WorkerRestarted(int gpu) {
  impl_->restarts.Add({{"gpu", Gpu(gpu)}}).Increment();
}

void DaemonMetrics::WorkerHung(int gpu) { impl_->hangs.Add({{"gpu", Gpu(gpu)}}).Increment(); }

void DaemonMetrics::WorkerDiedIdle(int gpu) {
  impl_->idle_deaths.Add({{"gpu", Gpu(gpu)}}).Increment();
}

void DaemonMetrics::RunCreated(int64_t run_id, v1::RunKind kind, int gpu) {
  std::lock_guard lock(impl_->mu);
  Impl::LiveRun& run = impl_->live[run_id];
  run.kind = kind;
  run.gpu = gpu;
  impl_->TouchGpu(Gpu(gpu));
  impl_->queue_length.Add({{"gpu", Gpu(gpu)}}).Increment();
  impl_->RunsOf(kind, v1::RUN_STATE_QUEUED).Increment();
}

void DaemonMetrics::RunStarted(int64_t run_id, const v1::DeviceIdentity& device, bool clocks_locked,
                               int sm_mhz, int mem_mhz) {
  std::lock_guard lock(impl_->mu);
  auto it = impl_->live.find(run_id);
  if (it == impl_->live.end() || !it->second.queued) return;
  Impl::LiveRun& run = it->second;
  const std::string gpu = Gpu(run.gpu);
  run.queued = false;
  run.device_uuid = device.uuid();
  impl_->queue_length.Add({{"gpu", gpu}}).Decrement();
  impl_->running.Add({{"gpu", gpu}}).Increment();
  impl_->RunsOf(run.kind, v1::RUN_STATE_RUNNING).Increment();
  if (clocks_locked) {
    run.locked = true;
    impl_->clock_locked.Add({{"gpu", gpu}}).Set(1);
    impl_->clock_target.Add({{"gpu", gpu}, {"clock", "sm"}}).Set(sm_mhz * 1e6);
    impl_->clock_target.Add({{"gpu", gpu}, {"clock", "mem"}}).Set(mem_mhz * 1e6);
  }
}

void DaemonMetrics::Measured(int64_t run_id, const v1::Measurement& m) {
  impl_->measurements.Add({{"status", common::EnumWord(m.status())}}).Increment();
  std::string gpu, uuid;
  {
    std::lock_guard lock(impl_->mu);
    auto it = impl_->live.find(run_id);
    if (it != impl_->live.end()) {
      gpu = Gpu(it->second.gpu);
      uuid = it->second.device_uuid;
    }
  }
  if (m.status() == v1::MEASUREMENT_STATUS_SKIPPED) return;  // never held the GPU
  if (!gpu.empty())
    impl_->wall_seconds.Add({{"gpu", gpu}}, impl_->wall_bounds).Observe(m.wall_seconds());
  if (m.status() != v1::MEASUREMENT_STATUS_OK) return;
  const Labels labels{{"device_uuid", uuid},
                      {"variant", m.variant()},
                      {"dtype", m.dtype()},
                      {"shape", ShapeText(m.shape())}};
  if (m.tflops() > 0) impl_->latest.Set(labels, m.tflops() * 1e12);
  const v1::SoloFigures& solo = m.solo();
  if (solo.solo_measured() && solo.solo_tflops() > 0)
    impl_->latest_solo.Set(labels, solo.solo_tflops() * 1e12);
  if (solo.solo_measured() && solo.has_solo_joules_per_tflop())
    impl_->latest_joules.Set(labels, solo.solo_joules_per_tflop() / 1e12);
}

void DaemonMetrics::Verified(const v1::VerifyResult& result) {
  impl_->verifications.Add({{"result", result.passed() ? "passed" : "failed"}}).Increment();
}

void DaemonMetrics::FleetBacklog(int64_t runs, int64_t oldest_enqueued_at_ms) {
  impl_->fleet_outbox.Add({}).Set(double(runs));
  impl_->fleet_oldest.Add({}).Set(double(oldest_enqueued_at_ms) / 1000);
}

void DaemonMetrics::FleetDatabaseUp(bool up) { impl_->fleet_up.Add({}).Set(up ? 1 : 0); }

void DaemonMetrics::FleetExported(bool already_there) {
  impl_->fleet_exports.Add({{"result", already_there ? "already_there" : "exported"}}).Increment();
}

void DaemonMetrics::FleetExportFailed() { impl_->fleet_failures.Add({}).Increment(); }

void DaemonMetrics::RunEnded(int64_t run_id, v1::RunState state) {
  std::lock_guard lock(impl_->mu);
  auto it = impl_->live.find(run_id);
  if (it == impl_->live.end()) return;  // ended twice, or never created through RunCreated
  const Impl::LiveRun& run = it->second;
  const std::string gpu = Gpu(run.gpu);
  if (run.queued)
    impl_->queue_length.Add({{"gpu", gpu}}).Decrement();
  else
    impl_->running.Add({{"gpu", gpu}}).Decrement();
  if (run.locked) {
    impl_->clock_locked.Add({{"gpu", gpu}}).Set(0);
    impl_->clock_target.Add({{"gpu", gpu}, {"clock", "sm"}}).Set(0);
    impl_->clock_target.Add({{"gpu", gpu}, {"clock", "mem"}}).Set(0);
  }
  impl_->RunsOf(run.kind, state).Increment();
  impl_->live.erase(it);
}

}  // namespace ablation::metrics
