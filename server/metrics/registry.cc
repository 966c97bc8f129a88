#include "server/metrics/registry.h"

#include <algorithm>
#include <stdexcept>

#include "ablation/version.h"
#include "db/records.h"

namespace ablation::core::metrics {
namespace {

bool ValidName(const std::string& name, bool colons) {
  if (name.empty()) return false;
  for (size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    const bool alpha =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (colons && c == ':');
    if (!alpha && !(i > 0 && c >= '0' && c <= '9')) return false;
  }
  return true;
}

std::string Gpu(int index) { return std::to_string(index); }

std::string ShapeText(const v1::Shape& s) {
  return std::to_string(s.m()) + "x" + std::to_string(s.n()) + "x" + std::to_string(s.k());
}

}  // namespace

// ---------------------------------------------------------------- families

Family::Family(std::string name, std::string help, MetricType type,
               std::vector<std::string> label_names, std::vector<double> bounds)
    : name_(std::move(name)),
      help_(std::move(help)),
      type_(type),
      label_names_(std::move(label_names)),
      bounds_(std::move(bounds)) {}

void Family::LimitSeries(size_t max_series, Counter* evictions) {
  std::lock_guard lock(mu_);
  max_series_ = max_series;
  evictions_ = evictions;
}

Family::Series& Family::SeriesLocked(const std::vector<std::string>& labels) {
  if (labels.size() != label_names_.size())
    throw std::invalid_argument("metric " + name_ + " takes " +
                                std::to_string(label_names_.size()) + " label values, not " +
                                std::to_string(labels.size()));
  auto it = series_.find(labels);
  if (it == series_.end()) {
    if (max_series_ > 0 && series_.size() >= max_series_) {
      auto oldest = std::min_element(series_.begin(), series_.end(), [](auto& a, auto& b) {
        return a.second.touched < b.second.touched;
      });
      series_.erase(oldest);
      // Another family's lock: never this one's (a family cannot count its own evictions).
      if (evictions_ && evictions_ != this) evictions_->Inc({name_});
    }
    it = series_.emplace(labels, Series{}).first;
    it->second.buckets.assign(bounds_.size(), 0);
  }
  it->second.touched = ++tick_;
  return it->second;
}

void Family::Remove(const std::vector<std::string>& labels) {
  std::lock_guard lock(mu_);
  series_.erase(labels);
}

size_t Family::series_count() const {
  std::lock_guard lock(mu_);
  return series_.size();
}

FamilySnapshot Family::Snapshot() const {
  FamilySnapshot snap;
  snap.name = name_;
  snap.help = help_;
  snap.type = type_;
  snap.label_names = label_names_;
  snap.bounds = bounds_;
  std::lock_guard lock(mu_);
  snap.series.reserve(series_.size());
  for (const auto& [labels, s] : series_) {
    SeriesValue v;
    v.labels = labels;
    v.value = s.value;
    v.sum = s.sum;
    v.count = s.count;
    uint64_t running = 0;
    for (uint64_t b : s.buckets) v.cumulative_buckets.push_back(running += b);
    snap.series.push_back(std::move(v));
  }
  return snap;
}

void Counter::Inc(const std::vector<std::string>& labels, double by) {
  std::lock_guard lock(mu_);
  Series& s = SeriesLocked(labels);
  if (by > 0) s.value += by;
}

double Counter::Value(const std::vector<std::string>& labels) const {
  std::lock_guard lock(mu_);
  auto it = series_.find(labels);
  return it == series_.end() ? 0 : it->second.value;
}

void Gauge::Set(const std::vector<std::string>& labels, double value) {
  std::lock_guard lock(mu_);
  SeriesLocked(labels).value = value;
}

void Gauge::Add(const std::vector<std::string>& labels, double delta) {
  std::lock_guard lock(mu_);
  SeriesLocked(labels).value += delta;
}

double Gauge::Value(const std::vector<std::string>& labels) const {
  std::lock_guard lock(mu_);
  auto it = series_.find(labels);
  return it == series_.end() ? 0 : it->second.value;
}

Histogram::Histogram(std::string name, std::string help, std::vector<std::string> label_names,
                     std::vector<double> bounds)
    : Family(std::move(name), std::move(help), MetricType::kHistogram, std::move(label_names),
             std::move(bounds)) {
  if (bounds_.empty() || !std::is_sorted(bounds_.begin(), bounds_.end()) ||
      std::adjacent_find(bounds_.begin(), bounds_.end()) != bounds_.end())
    throw std::invalid_argument("histogram " + name_ +
                                ": bucket bounds must be non-empty, ascending and distinct");
}

void Histogram::Observe(const std::vector<std::string>& labels, double value) {
  std::lock_guard lock(mu_);
  Series& s = SeriesLocked(labels);
  // The first bucket whose bound is >= value; past the last it is only in +Inf (count).
  auto at = std::lower_bound(bounds_.begin(), bounds_.end(), value);
  if (at != bounds_.end()) ++s.buckets[size_t(at - bounds_.begin())];
  s.sum += value;
  ++s.count;
}

// ---------------------------------------------------------------- registry

void Registry::Check(const std::string& name, const std::vector<std::string>& labels) const {
  if (!ValidName(name, true))
    throw std::invalid_argument("metric name '" + name +
                                "' is not [a-zA-Z_:][a-zA-Z0-9_:]* as Prometheus requires");
  for (const auto& l : labels)
    if (!ValidName(l, false) || l.rfind("__", 0) == 0 || l == "le")
      throw std::invalid_argument("metric " + name + ": label name '" + l +
                                  "' is not [a-zA-Z_][a-zA-Z0-9_]*, or is reserved (__*, le)");
  for (const auto& f : families_)
    if (f->name() == name) throw std::invalid_argument("metric " + name + " is defined twice");
}

Counter& Registry::AddCounter(std::string name, std::string help, std::vector<std::string> labels) {
  std::lock_guard lock(mu_);
  Check(name, labels);
  auto family = std::make_unique<Counter>(std::move(name), std::move(help), std::move(labels));
  Counter& out = *family;
  families_.push_back(std::move(family));
  return out;
}

Gauge& Registry::AddGauge(std::string name, std::string help, std::vector<std::string> labels) {
  std::lock_guard lock(mu_);
  Check(name, labels);
  auto family = std::make_unique<Gauge>(std::move(name), std::move(help), std::move(labels));
  Gauge& out = *family;
  families_.push_back(std::move(family));
  return out;
}

Histogram& Registry::AddHistogram(std::string name, std::string help,
                                  std::vector<std::string> labels, std::vector<double> bounds) {
  std::lock_guard lock(mu_);
  Check(name, labels);
  auto family = std::make_unique<Histogram>(std::move(name), std::move(help), std::move(labels),
                                            std::move(bounds));
  Histogram& out = *family;
  families_.push_back(std::move(family));
  return out;
}

std::vector<FamilySnapshot> Registry::Collect() const {
  std::lock_guard lock(mu_);
  std::vector<FamilySnapshot> out;
  out.reserve(families_.size());
  for (const auto& f : families_) out.push_back(f->Snapshot());
  return out;
}

// ---------------------------------------------------------------- ablationd's metrics

DaemonMetrics::DaemonMetrics()
    : evicted_(registry_.AddCounter(
          "ablationd_metric_series_evicted_total",
          "Series dropped from a metric with a cap on its series (the least recently updated "
          "goes first); non-zero means the cap hides some combinations",
          {"metric"})),
      build_info_(registry_.AddGauge("ablationd_build_info",
                                     "Always 1; the daemon's version and git revision as labels",
                                     {"version", "revision"})),
      gpu_usable_(registry_.AddGauge(
          "ablationd_gpu_usable",
          "1 when the GPU's worker is up and sees a device, 0 when runs on it are refused",
          {"gpu"})),
      queue_length_(registry_.AddGauge("ablationd_queue_length",
                                       "Runs waiting in the GPU's queue (not the one running)",
                                       {"gpu"})),
      running_(registry_.AddGauge("ablationd_runs_running",
                                  "Runs executing on the GPU now (0 or 1)", {"gpu"})),
      runs_(registry_.AddCounter(
          "ablationd_runs_total",
          "Runs that entered each state since the daemon started: a run counts once in queued, "
          "once in running if it started, and once in the state it ended in",
          {"kind", "state"})),
      measurements_(registry_.AddCounter("ablationd_measurements_total",
                                         "Measurement rows stored, by status", {"status"})),
      verifications_(registry_.AddCounter("ablationd_verifications_total",
                                          "Verification rows stored, by result", {"result"})),
      restarts_(registry_.AddCounter(
          "ablationd_worker_restarts_total",
          "Workers started again after the previous one died or was killed", {"gpu"})),
      hangs_(registry_.AddCounter(
          "ablationd_worker_hangs_total",
          "Worker calls that got no answer within their time; the worker was killed", {"gpu"})),
      wall_seconds_(registry_.AddHistogram(
          "ablationd_measurement_wall_seconds",
          "Host wall time each measurement held its GPU (Measurement.wall_seconds): "
          "verification, warm-up, samples and everything between",
          {"gpu"}, {0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60, 120, 300})),
      clock_locked_(registry_.AddGauge(
          "ablationd_clock_locked",
          "1 while a run holds the GPU's clocks locked (clocks.mode=lock), 0 when observed",
          {"gpu"})),
      clock_target_(registry_.AddGauge(
          "ablationd_clock_lock_target_hertz",
          "The clock a lock holds (clock=sm or mem), in Hz; 0 when not locked", {"gpu", "clock"})),
      tflops_(registry_.AddGauge(
          "ablationd_latest_operations_per_second",
          "Arithmetic operations per second (FLOP, OPS for int8; a multiply-add counting two) of "
          "the latest successful measurement of each device, variant, dtype and shape (MxNxK); "
          "at most 2000 series, the least recently measured dropped first",
          {"device_uuid", "variant", "dtype", "shape"})),
      gpu_info_(registry_.AddGauge(
          "ablationd_gpu_info",
          "Always 1: each GPU index's identity (UUID as nvidia-smi and DCGM print it), to join "
          "the per-GPU series: * on(instance, gpu) group_left(uuid) ablationd_gpu_info; DCGM's "
          "exporter calls the label UUID (label_replace renames it)",
          {"gpu", "uuid", "model_name"})) {
  build_info_.Set({kDaemonVersion, kGitRevision}, 1);
  tflops_.LimitSeries(kMaxTflopsSeries, &evicted_);
  evicted_.Touch({tflops_.name()});
  for (auto kind : {v1::RUN_KIND_ABLATION, v1::RUN_KIND_VERIFY})
    for (int s = v1::RunState_MIN + 1; s <= v1::RunState_MAX; ++s)
      runs_.Touch({db::EnumText(kind), db::EnumText(v1::RunState(s))});
  for (int s = v1::MeasurementStatus_MIN + 1; s <= v1::MeasurementStatus_MAX; ++s)
    measurements_.Touch({db::EnumText(v1::MeasurementStatus(s))});
  verifications_.Touch({"passed"});
  verifications_.Touch({"failed"});
}

void DaemonMetrics::TouchGpuLocked(const std::string& gpu) {
  // Every per-GPU series exists from the GPU's start, so dashboards see 0 rather than nothing.
  queue_length_.Add({gpu}, 0);
  running_.Add({gpu}, 0);
  clock_locked_.Add({gpu}, 0);
  clock_target_.Add({gpu, "sm"}, 0);
  clock_target_.Add({gpu, "mem"}, 0);
  restarts_.Touch({gpu});
  hangs_.Touch({gpu});
}

void DaemonMetrics::GpuAdopted(int gpu, bool usable, const std::string& uuid,
                               const std::string& name) {
  std::lock_guard lock(mu_);
  TouchGpuLocked(Gpu(gpu));
  gpu_usable_.Set({Gpu(gpu)}, usable ? 1 : 0);
  if (!uuid.empty()) gpu_info_.Set({Gpu(gpu), uuid, name}, 1);
}

void DaemonMetrics::WorkerRestarted(int gpu) { restarts_.Inc({Gpu(gpu)}); }

void DaemonMetrics::WorkerHung(int gpu) { hangs_.Inc({Gpu(gpu)}); }

void DaemonMetrics::RunCreated(int64_t run_id, v1::RunKind kind, int gpu) {
  std::lock_guard lock(mu_);
  LiveRun& run = live_[run_id];
  run.kind = kind;
  run.gpu = gpu;
  TouchGpuLocked(Gpu(gpu));
  queue_length_.Add({Gpu(gpu)}, 1);
  runs_.Inc({db::EnumText(kind), db::EnumText(v1::RUN_STATE_QUEUED)});
}

void DaemonMetrics::RunStarted(int64_t run_id, const v1::DeviceIdentity& device, bool clocks_locked,
                               int sm_mhz, int mem_mhz) {
  std::lock_guard lock(mu_);
  auto it = live_.find(run_id);
  if (it == live_.end() || !it->second.queued) return;
  LiveRun& run = it->second;
  const std::string gpu = Gpu(run.gpu);
  run.queued = false;
  run.device_uuid = device.uuid();
  queue_length_.Add({gpu}, -1);
  running_.Add({gpu}, 1);
  runs_.Inc({db::EnumText(run.kind), db::EnumText(v1::RUN_STATE_RUNNING)});
  if (clocks_locked) {
    run.locked = true;
    clock_locked_.Set({gpu}, 1);
    clock_target_.Set({gpu, "sm"}, sm_mhz * 1e6);
    clock_target_.Set({gpu, "mem"}, mem_mhz * 1e6);
  }
}

void DaemonMetrics::Measured(int64_t run_id, const v1::Measurement& m) {
  measurements_.Inc({db::EnumText(m.status())});
  std::string gpu, uuid;
  {
    std::lock_guard lock(mu_);
    auto it = live_.find(run_id);
    if (it != live_.end()) {
      gpu = Gpu(it->second.gpu);
      uuid = it->second.device_uuid;
    }
  }
  if (m.status() == v1::MEASUREMENT_STATUS_SKIPPED) return;  // never held the GPU
  if (!gpu.empty()) wall_seconds_.Observe({gpu}, m.wall_seconds());
  if (m.status() == v1::MEASUREMENT_STATUS_OK && m.tflops() > 0)
    tflops_.Set({uuid, m.variant(), m.dtype(), ShapeText(m.shape())}, m.tflops() * 1e12);
}

void DaemonMetrics::Verified(const v1::VerifyResult& result) {
  verifications_.Inc({result.passed() ? "passed" : "failed"});
}

void DaemonMetrics::RunEnded(int64_t run_id, v1::RunState state) {
  std::lock_guard lock(mu_);
  auto it = live_.find(run_id);
  if (it == live_.end()) return;  // ended twice, or never created through RunCreated
  const LiveRun& run = it->second;
  const std::string gpu = Gpu(run.gpu);
  if (run.queued)
    queue_length_.Add({gpu}, -1);
  else
    running_.Add({gpu}, -1);
  if (run.locked) {
    clock_locked_.Set({gpu}, 0);
    clock_target_.Set({gpu, "sm"}, 0);
    clock_target_.Set({gpu, "mem"}, 0);
  }
  runs_.Inc({db::EnumText(run.kind), db::EnumText(state)});
  live_.erase(it);
}

DaemonMetrics& Daemon() {
  static DaemonMetrics metrics;
  return metrics;
}

}  // namespace ablation::core::metrics
