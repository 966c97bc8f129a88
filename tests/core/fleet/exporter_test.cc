// The fleet exporter with its database away (no PostgreSQL needed: a socket folder that does not
// exist): finished runs stay in the outbox, the events say so (what the metrics hear), and Stop()
// is prompt. The exporter against a real server: tests/e2e/fleet_e2e_test.cc.
#include "server/core/fleet/exporter.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <thread>

#include "server/core/base/events.h"

namespace ablation::core {
namespace {

// What the exporter reported last (-1: nothing yet).
struct Heard : DaemonEvents {
  std::atomic<int> database_up{-1};
  std::atomic<int64_t> outbox_runs{-1};
  std::atomic<int64_t> oldest_ms{-1};
  void FleetDatabaseUp(bool up) override { database_up = up ? 1 : 0; }
  void FleetBacklog(int64_t runs, int64_t oldest_enqueued_at_ms) override {
    outbox_runs = runs;
    oldest_ms = oldest_enqueued_at_ms;
  }
};

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
    Heard heard;
    auto exporter = std::make_unique<FleetExporter>(options, store.get(), &heard);
    for (int i = 0; i < 200 && (heard.database_up != 0 || heard.outbox_runs < 0); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    EXPECT_EQ(heard.database_up, 0);
    EXPECT_EQ(heard.outbox_runs, 1);
    EXPECT_EQ(heard.oldest_ms, 1'700'000'000'000);
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
