// ablationd's own metrics: the transitions of DaemonMetrics on a fresh instance, then the events
// the core reports where they happen (run_recorder.cc, gpu_worker.cc), heard by an instance wired
// in as the daemon wires its own (CoreOptions::events, server/core/base/events.h).
#include <gtest/gtest.h>
#include <prometheus/registry.h>

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <thread>

#include "db/store.h"
#include "kernels/registry.h"
#include "server/core/runs/run_manager.h"
#include "server/core/workers/gpu_worker.h"
#include "server/metrics/registry.h"
#include "tests/support/in_process_worker.h"

namespace ablation::metrics {

using core::GpuWorker;
using core::RunManager;
using core::RunManagerOptions;
using core::Status;
using core::Worker;
namespace {

using testing::InProcessWorkers;
using testing::WorkerLog;
using testing::WorkerScript;

// Every metric of the daemon with its label names, to read a series by its label values.
const std::map<std::string, std::vector<std::string>> kLabelNames = {
    {"ablationd_gpu_usable", {"gpu"}},
    {"ablationd_queue_length", {"gpu"}},
    {"ablationd_runs_running", {"gpu"}},
    {"ablationd_runs_total", {"kind", "state"}},
    {"ablationd_measurements_total", {"status"}},
    {"ablationd_worker_restarts_total", {"gpu"}},
    {"ablationd_worker_hangs_total", {"gpu"}},
    {"ablationd_worker_idle_deaths_total", {"gpu"}},
    {"ablationd_measurement_wall_seconds", {"gpu"}},
    {"ablationd_clock_locked", {"gpu"}},
    {"ablationd_clock_lock_target_hertz", {"gpu", "clock"}},
    {"ablationd_latest_operations_per_second", {"device_uuid", "variant", "dtype", "shape"}},
    {"ablationd_latest_solo_operations_per_second", {"device_uuid", "variant", "dtype", "shape"}},
    {"ablationd_latest_joules_per_operation", {"device_uuid", "variant", "dtype", "shape"}},
    {"ablationd_metric_series_evicted_total", {"metric"}},
    {"ablationd_build_info", {"version", "revision"}},
    {"ablationd_verifications_total", {"result"}},
    {"ablationd_gpu_info", {"gpu", "uuid", "model_name"}}};

const prometheus::MetricFamily* Find(const std::vector<prometheus::MetricFamily>& all,
                                     const std::string& name) {
  for (const auto& f : all)
    if (f.name == name) return &f;
  return nullptr;
}

// The value of the series of `name` with these label values (a histogram's: its count); 0 where
// there is no such series.
double Value(DaemonMetrics& m, const std::string& name, const std::vector<std::string>& labels) {
  const auto known = kLabelNames.find(name);
  if (known == kLabelNames.end()) ADD_FAILURE() << "no metric " << name;
  if (known == kLabelNames.end()) return -1;
  const std::vector<std::string>& names = known->second;
  auto all = m.registry().Collect();
  // A family without a series yet is not collected (prometheus-cpp leaves it out).
  const prometheus::MetricFamily* f = Find(all, name);
  if (!f) return 0;
  for (const prometheus::ClientMetric& s : f->metric) {
    std::map<std::string, std::string> have;
    for (const auto& l : s.label) have[l.name] = l.value;
    bool same = have.size() == names.size();
    for (size_t i = 0; same && i < names.size(); ++i) same = have[names[i]] == labels[i];
    if (!same) continue;
    switch (f->type) {
      case prometheus::MetricType::Counter:
        return s.counter.value;
      case prometheus::MetricType::Gauge:
        return s.gauge.value;
      case prometheus::MetricType::Histogram:
        return double(s.histogram.sample_count);
      default:
        return -1;
    }
  }
  return 0;
}

v1::Measurement Row(v1::MeasurementStatus status, double tflops, double wall) {
  v1::Measurement m;
  m.set_status(status);
  m.set_variant("abl_L1_R1_bl0_s3_sw1");
  m.set_dtype("bf16");
  m.mutable_shape()->set_m(4096);
  m.mutable_shape()->set_n(4096);
  m.mutable_shape()->set_k(2048);
  m.set_tflops(tflops);
  m.set_wall_seconds(wall);
  return m;
}

TEST(DaemonMetricsTest, ARunMovesFromTheQueueToRunningToItsEndState) {
  DaemonMetrics m;
  m.GpuAdopted(1, true, "", "");
  EXPECT_EQ(Value(m, "ablationd_gpu_usable", {"1"}), 1);
  EXPECT_EQ(Value(m, "ablationd_queue_length", {"1"}), 0);
  m.RunCreated(7, v1::RUN_KIND_ABLATION, 1);
  m.RunCreated(8, v1::RUN_KIND_ABLATION, 1);
  EXPECT_EQ(Value(m, "ablationd_queue_length", {"1"}), 2);
  EXPECT_EQ(Value(m, "ablationd_runs_total", {"ablation", "queued"}), 2);

  v1::DeviceIdentity device;
  device.set_uuid("GPU-abc");
  m.RunStarted(7, device, true, 1980, 3201);
  EXPECT_EQ(Value(m, "ablationd_queue_length", {"1"}), 1);
  EXPECT_EQ(Value(m, "ablationd_runs_running", {"1"}), 1);
  EXPECT_EQ(Value(m, "ablationd_clock_locked", {"1"}), 1);
  EXPECT_EQ(Value(m, "ablationd_clock_lock_target_hertz", {"1", "sm"}), 1980e6);  // base units
  EXPECT_EQ(Value(m, "ablationd_clock_lock_target_hertz", {"1", "mem"}), 3201e6);

  m.Measured(7, Row(v1::MEASUREMENT_STATUS_OK, 612.5, 1.2));
  m.Measured(7, Row(v1::MEASUREMENT_STATUS_FAILED, 0, 0.3));
  m.Measured(7, Row(v1::MEASUREMENT_STATUS_SKIPPED, 0, 0));
  EXPECT_EQ(Value(m, "ablationd_measurements_total", {"ok"}), 1);
  EXPECT_EQ(Value(m, "ablationd_measurements_total", {"failed"}), 1);
  EXPECT_EQ(Value(m, "ablationd_measurements_total", {"skipped"}), 1);
  // The skipped row never held the GPU: two observations, not three.
  EXPECT_EQ(Value(m, "ablationd_measurement_wall_seconds", {"1"}), 2);
  EXPECT_EQ(Value(m, "ablationd_latest_operations_per_second",
                  {"GPU-abc", "abl_L1_R1_bl0_s3_sw1", "bf16", "4096x4096x2048"}),
            612.5e12);  // base units: operations per second, not TFLOPS
  // A row with a solo span: the variant alone at the cap, and its energy per operation, beside
  // its window's figure.
  v1::Measurement solo = Row(v1::MEASUREMENT_STATUS_OK, 700.0, 1.0);
  solo.mutable_solo()->set_solo_measured(true);
  solo.mutable_solo()->set_solo_tflops(650.0);
  solo.mutable_solo()->set_solo_joules_per_tflop(1.07);
  m.Measured(7, solo);
  EXPECT_EQ(Value(m, "ablationd_latest_operations_per_second",
                  {"GPU-abc", "abl_L1_R1_bl0_s3_sw1", "bf16", "4096x4096x2048"}),
            700e12);
  EXPECT_EQ(Value(m, "ablationd_latest_solo_operations_per_second",
                  {"GPU-abc", "abl_L1_R1_bl0_s3_sw1", "bf16", "4096x4096x2048"}),
            650e12);
  EXPECT_DOUBLE_EQ(Value(m, "ablationd_latest_joules_per_operation",
                         {"GPU-abc", "abl_L1_R1_bl0_s3_sw1", "bf16", "4096x4096x2048"}),
                   1.07e-12);

  m.RunEnded(7, v1::RUN_STATE_PARTIAL);
  m.RunEnded(7, v1::RUN_STATE_PARTIAL);  // a run ends once
  EXPECT_EQ(Value(m, "ablationd_runs_total", {"ablation", "partial"}), 1);
  EXPECT_EQ(Value(m, "ablationd_runs_running", {"1"}), 0);
  EXPECT_EQ(Value(m, "ablationd_clock_locked", {"1"}), 0);
  EXPECT_EQ(Value(m, "ablationd_clock_lock_target_hertz", {"1", "sm"}), 0);

  m.RunEnded(8, v1::RUN_STATE_CANCELLED);  // cancelled while queued
  EXPECT_EQ(Value(m, "ablationd_queue_length", {"1"}), 0);
  EXPECT_EQ(Value(m, "ablationd_runs_total", {"ablation", "cancelled"}), 1);
  EXPECT_EQ(Value(m, "ablationd_runs_total", {"ablation", "running"}), 1);
}

TEST(DaemonMetricsTest, EveryStateAndStatusIsThereAtZeroBeforeAnything) {
  DaemonMetrics m;
  for (const char* kind : {"ablation", "verify"})
    for (const char* state : {"queued", "running", "succeeded", "partial", "failed", "cancelled"})
      EXPECT_EQ(Value(m, "ablationd_runs_total", {kind, state}), 0);
  auto all = m.registry().Collect();
  EXPECT_EQ(Find(all, "ablationd_runs_total")->metric.size(), 12u);
  EXPECT_EQ(Find(all, "ablationd_measurements_total")->metric.size(), 3u);
  EXPECT_EQ(Find(all, "ablationd_build_info")->metric.size(), 1u);
}

TEST(DaemonMetricsTest, LatestTflopsKeepsAtMostItsCap) {
  DaemonMetrics m;
  m.RunCreated(1, v1::RUN_KIND_ABLATION, 0);
  v1::DeviceIdentity device;
  device.set_uuid("GPU-x");
  m.RunStarted(1, device, false, 0, 0);
  const size_t extra = 5;
  for (size_t i = 0; i < DaemonMetrics::kMaxTflopsSeries + extra; ++i) {
    v1::Measurement row = Row(v1::MEASUREMENT_STATUS_OK, 100, 0.1);
    row.mutable_shape()->set_m(int64_t(i + 1));
    m.Measured(1, row);
  }
  auto all = m.registry().Collect();
  EXPECT_EQ(Find(all, "ablationd_latest_operations_per_second")->metric.size(),
            DaemonMetrics::kMaxTflopsSeries);
  EXPECT_EQ(
      Value(m, "ablationd_metric_series_evicted_total", {"ablationd_latest_operations_per_second"}),
      double(extra));
  // The oldest went first: shape 1x... is gone, the newest is there.
  EXPECT_EQ(Value(m, "ablationd_latest_operations_per_second",
                  {"GPU-x", "abl_L1_R1_bl0_s3_sw1", "bf16", "1x4096x2048"}),
            0);
  EXPECT_EQ(Value(m, "ablationd_latest_operations_per_second",
                  {"GPU-x", "abl_L1_R1_bl0_s3_sw1", "bf16",
                   std::to_string(DaemonMetrics::kMaxTflopsSeries + extra) + "x4096x2048"}),
            100e12);
}

// A worker whose calls either hang (no answer until the timeout) or die at once.
class ScriptedWorker final : public Worker {
 public:
  bool hang = false;
  Status Start() override {
    running_ = true;
    hello_.set_device_present(true);
    hello_.set_device_count(1);
    return Status::Ok();
  }
  bool running() const override { return running_; }
  const worker::v1::Hello& hello() const override { return hello_; }
  CallResult Call(const worker::v1::WorkerRequest&, std::chrono::milliseconds timeout) override {
    if (hang) std::this_thread::sleep_for(timeout);
    running_ = false;
    CallResult r;
    r.failure = hang ? "did not answer; killed" : "died";
    return r;
  }
  void Stop() override { running_ = false; }

 private:
  bool running_ = false;
  worker::v1::Hello hello_;
};

TEST(DaemonMetricsHooksTest, GpuWorkerCountsHangsApartFromDeathsAndRestarts) {
  auto worker = std::make_unique<ScriptedWorker>();
  ScriptedWorker* w = worker.get();
  const int gpu = 41;  // a GPU no other test has
  DaemonMetrics m;
  GpuWorker g(gpu, std::move(worker), &m);
  ASSERT_TRUE(g.Start().ok());
  EXPECT_EQ(Value(m, "ablationd_gpu_usable", {"41"}), 1);
  EXPECT_EQ(Value(m, "ablationd_worker_restarts_total", {"41"}), 0);

  g.Call({}, std::chrono::milliseconds(20));  // died at once: not a hang
  EXPECT_EQ(Value(m, "ablationd_worker_hangs_total", {"41"}), 0);
  ASSERT_TRUE(g.Ensure().ok());
  EXPECT_EQ(Value(m, "ablationd_worker_restarts_total", {"41"}), 1);
  EXPECT_TRUE(g.Ensure().ok());  // running: no restart
  EXPECT_EQ(Value(m, "ablationd_worker_restarts_total", {"41"}), 1);

  w->hang = true;
  g.Call({}, std::chrono::milliseconds(20));
  EXPECT_EQ(Value(m, "ablationd_worker_hangs_total", {"41"}), 1);
}

TEST(DaemonMetricsHooksTest, TheRecorderCountsARunAndItsMeasurements) {
  kernels::Registry registry;
  kernels::RegisterCatalog(registry);
  const auto path = std::filesystem::temp_directory_path() /
                    ("daemon_metrics_" + std::to_string(::getpid()) + ".db");
  std::filesystem::remove(path);
  auto store = db::Store::Open(path.string());
  auto script = std::make_shared<WorkerScript>();
  script->by_variant["abl_L1_R1_bl0_s4_sw1"] = WorkerScript::Action::kRefuse;
  RunManagerOptions options;
  options.worker_factory = InProcessWorkers(script, std::make_shared<WorkerLog>());
  options.timing.min_seconds = 0.01;
  options.timing.max_seconds = 1;
  DaemonMetrics m;
  options.events = &m;
  {
    RunManager runs(options, store.get(), &registry);
    runs.Start();
    v1::RunRequest request;
    request.add_variants("abl_L1_R1_bl0_s3_sw1");
    request.add_variants("abl_L1_R1_bl0_s4_sw1");
    auto* s = request.add_shapes();
    s->set_m(256);
    s->set_n(256);
    s->set_k(256);
    request.set_rounds(2);
    int64_t id = 0;
    ASSERT_TRUE(runs.SubmitRun(request, "test", nullptr, &id).ok());
    for (int i = 0; i < 400 && store->GetRun(id)->state() != v1::RUN_STATE_PARTIAL; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    ASSERT_EQ(store->GetRun(id)->state(), v1::RUN_STATE_PARTIAL);
    runs.Shutdown();
  }
  EXPECT_EQ(Value(m, "ablationd_measurements_total", {"ok"}), 2);  // one per round
  EXPECT_EQ(Value(m, "ablationd_measurements_total", {"failed"}), 2);
  EXPECT_EQ(Value(m, "ablationd_runs_total", {"ablation", "partial"}), 1);
  EXPECT_EQ(Value(m, "ablationd_measurement_wall_seconds", {"0"}), 4);
  EXPECT_EQ(Value(m, "ablationd_gpu_usable", {"0"}), 1);
  EXPECT_EQ(Value(m, "ablationd_queue_length", {"0"}), 0);
  EXPECT_EQ(Value(m, "ablationd_runs_running", {"0"}), 0);
  EXPECT_GT(Value(m, "ablationd_latest_operations_per_second",
                  {"GPU-test-0000", "abl_L1_R1_bl0_s3_sw1", "bf16", "256x256x256"}),
            0);
  store.reset();
  for (const char* ext : {"", "-wal", "-shm"}) std::filesystem::remove(path.string() + ext);
}

}  // namespace
}  // namespace ablation::metrics
