// The fleet exporter with its database away (no PostgreSQL needed: a socket folder that does not
// exist): finished runs stay in the outbox, the metrics say so, and Stop() is prompt. The
// exporter against a real server: tests/e2e/fleet_e2e_test.cc.
#include "server/core/fleet/exporter.h"

#include <gtest/gtest.h>
#include <prometheus/registry.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "server/metrics/registry.h"

namespace ablation::core {
namespace {

// An unlabelled gauge of the daemon's registry; -1 when it has no series yet.
double Gauge(const std::string& name) {
  for (const prometheus::MetricFamily& f : metrics::Daemon().registry().Collect()) {
    if (f.name == name && !f.metric.empty()) return f.metric[0].gauge.value;
  }
  return -1;
}

TEST(FleetExporter, RunsWaitInTheOutboxWhileTheDatabaseIsAwayAndStopIsPrompt) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("ablation_exporter_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  {
    auto store = db::Store::Open((dir / "results.db").string());
    v1::Run run;
    run.set_state(v1::RUN_STATE_QUEUED);
    run.set_kind(v1::RUN_KIND_ABLATION);
    const int64_t id = store->CreateRun(run);
    store->FinishRun(id, v1::RUN_STATE_SUCCEEDED, "", 1'700'000'000'000);

    FleetExportOptions options;
    options.conninfo = "host=" + (dir / "no-such-socket-folder").string() + " port=1 dbname=fleet";
    options.host_name = "gpu-test";
    options.poll = std::chrono::milliseconds(10);
    options.min_backoff = std::chrono::milliseconds(10);
    options.max_backoff = std::chrono::milliseconds(40);
    auto exporter = std::make_unique<FleetExporter>(options, store.get());
    for (int i = 0; i < 200 && Gauge("ablationd_fleet_database_up") != 0; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    EXPECT_EQ(Gauge("ablationd_fleet_database_up"), 0);
    EXPECT_EQ(Gauge("ablationd_fleet_outbox_runs"), 1);
    EXPECT_EQ(Gauge("ablationd_fleet_outbox_oldest_enqueued_timestamp_seconds"), 1'700'000'000);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));  // several attempts
    const std::vector<db::OutboxEntry> waiting = store->PendingExports(10);
    ASSERT_EQ(waiting.size(), 1u);  // nothing lost, nothing marked exported
    EXPECT_EQ(waiting[0].run_id, id);

    const auto before = std::chrono::steady_clock::now();
    exporter.reset();
    EXPECT_LT(std::chrono::steady_clock::now() - before, std::chrono::seconds(2));
    EXPECT_EQ(store->PendingExports(10).size(), 1u);
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace ablation::core
