// Two GPUs through the real daemon and client, with the fake worker reporting two devices: the
// daemon starts a worker per GPU, `device` shows each, and `sweep --all-devices` runs a preset on
// both at once as one run per GPU, tagged together, each stored with its own device.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "db/store.h"
#include "tests/e2e/harness.h"

namespace ablation::testing {
namespace {

using ::testing::HasSubstr;

class MultiGpuE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = MakeTempDir();
    ASSERT_FALSE(dir_.empty());
    daemon_ = std::make_unique<Daemon>(
        dir_, FAKE_WORKER_PATH,
        std::map<std::string, std::string>{{"ABLATION_FAKE_DEVICES", "2"},
                                           {"ABLATION_FAKE_SLEEP_MS", "20"}});
    ASSERT_EQ(daemon_->Start(), "");
  }
  void TearDown() override {
    if (daemon_) daemon_->Stop(SIGTERM);
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }
  std::string dir_;
  std::unique_ptr<Daemon> daemon_;
};

TEST_F(MultiGpuE2E, DeviceShowsEachGpu) {
  auto gpu1 = daemon_->Client({"device", "--device", "1", "--format", "json"});
  ASSERT_EQ(gpu1.exit_code, 0) << gpu1.err;
  EXPECT_THAT(gpu1.out, HasSubstr("GPU-00000000-0000-0000-0000-000000000001"));
  EXPECT_THAT(gpu1.out, HasSubstr("\"device_count\":2"));
  auto gpu2 = daemon_->Client({"device", "--device", "2"});
  EXPECT_THAT(gpu2.out, HasSubstr("unavailable"));
}

TEST_F(MultiGpuE2E, SweepAllDevicesRunsOneRunPerGpuTaggedTogether) {
  auto sweep = daemon_->Client({"sweep", "--preset", "ladder-a", "--all-devices", "--rounds", "1",
                                "--shape", "256x256x256"});
  ASSERT_EQ(sweep.exit_code, 0) << sweep.err << sweep.out;
  EXPECT_THAT(sweep.out, HasSubstr("== GPU 0 (tag fanout-"));
  EXPECT_THAT(sweep.out, HasSubstr("== GPU 1 (tag fanout-"));

  auto store = db::Store::OpenReadOnly(daemon_->db_path());
  db::RunPage page = store->ListRuns({});
  ASSERT_EQ(page.runs.size(), 2u);
  std::set<std::string> uuids, tags;
  for (const auto& run : page.runs) {
    EXPECT_EQ(run.state(), v1::RUN_STATE_SUCCEEDED);
    uuids.insert(run.device().uuid());
    for (const auto& t : run.tags()) tags.insert(t);
    EXPECT_EQ(store->MeasurementsOfRun(run.id(), false).size(), 4u);  // 4 entries, 1 round
  }
  EXPECT_EQ(uuids, (std::set<std::string>{"GPU-00000000-0000-0000-0000-000000000000",
                                          "GPU-00000000-0000-0000-0000-000000000001"}));
  ASSERT_EQ(tags.size(), 1u) << "the runs share one fan-out tag";
  // The two runs overlapped in time: the GPUs ran at once.
  const auto& a = page.runs[0];
  const auto& b = page.runs[1];
  EXPECT_LT(std::max(a.started_at_ms(), b.started_at_ms()),
            std::min(a.finished_at_ms(), b.finished_at_ms()));
}

}  // namespace
}  // namespace ablation::testing
