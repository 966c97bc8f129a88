// history end to end: nightly-style runs made by the real daemon with the fake worker, whose clock
// knob slows every sample by 10% from the seventh run on; the real client shows the series, its
// change point and the runs' provenance.
#include <signal.h>

#include <filesystem>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "client/json.h"
#include "tests/e2e/harness.h"

namespace ablation::testing {
namespace {

using ::testing::HasSubstr;

class HistoryE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = MakeTempDir();
    ASSERT_FALSE(dir_.empty());
  }
  void TearDown() override {
    if (daemon_) daemon_->Stop(SIGTERM);
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }
  void StartDaemon(std::map<std::string, std::string> env) {
    if (daemon_) daemon_->Stop(SIGTERM);
    env["ABLATION_NODE_LABELS"] = "pool=h200,zone=eu-1";
    env["ABLATION_NODE_NAME"] = "gpu-node-7";
    daemon_ = std::make_unique<Daemon>(dir_, FAKE_WORKER_PATH, std::move(env));
    ASSERT_EQ(daemon_->Start(), "");
  }
  CommandResult Client(std::vector<std::string> args) { return daemon_->Client(std::move(args)); }
  void Nights(int count) {
    for (int i = 0; i < count; ++i) {
      auto r = Client({"run", "--variant", "L1_R1_s3", "--shape", "256x256x256", "--tag", "nightly",
                       "--regime", "burst", "--burst-seconds", "0.05"});
      ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    }
  }

  std::string dir_;
  std::unique_ptr<Daemon> daemon_;
};

TEST_F(HistoryE2E, ASlowerClockFromTheSeventhNightIsOneChangePoint) {
  StartDaemon({});
  Nights(6);
  StartDaemon({{"ABLATION_FAKE_SM_MHZ", "1800"}});  // every sample 10% longer
  Nights(6);

  auto json = Client({"--format", "json", "history", "L1_R1_s3", "--tag", "nightly"});
  ASSERT_EQ(json.exit_code, 0) << json.out << json.err;
  std::vector<v1::Series> series;
  ASSERT_EQ(client::ReadJsonEnvelope(json.out, "history", &series), "") << json.out;
  ASSERT_EQ(series.size(), 1u) << json.out;
  const v1::Series& s = series[0];
  EXPECT_EQ(s.variant(), "abl_L1_R1_bl0_s3_sw1");
  EXPECT_EQ(s.regime(), v1::REGIME_SUSTAINED);
  EXPECT_EQ(s.hardware_fingerprint().size(), 16u);
  ASSERT_EQ(s.points_size(), 12);
  ASSERT_EQ(s.change_points_size(), 1) << json.out;
  EXPECT_EQ(s.change_points(0).index(), 6);
  EXPECT_NEAR(s.change_points(0).relative_change(), 0.10, 0.01);
  EXPECT_TRUE(s.points(6).change_point());
  EXPECT_FALSE(s.newest().candidate());  // the newest night is like the five before it

  auto table = Client({"history", "L1_R1_s3"});
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_THAT(table.out, HasSubstr("abl_L1_R1_bl0_s3_sw1  bf16  256x256x256  sustained"));
  EXPECT_THAT(table.out, HasSubstr("^ slower +10.0"));

  auto csv = Client({"--format", "csv", "history", "L1_R1_s3", "--shape", "256"});
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  EXPECT_THAT(csv.out, ::testing::StartsWith(
                           "hardware_fingerprint,variant,dtype,m,n,k,regime,device_uuid,run_id,"
                           "time,median_ms,noise,tflops,change_point,relative_change\r\n"));
  EXPECT_EQ(std::count(csv.out.begin(), csv.out.end(), '\n'), 13);

  // The series of one run, and nothing of a run that measured something else.
  auto of_run = Client({"--format", "json", "history", "abl_*", "--in-run", "12"});
  ASSERT_EQ(of_run.exit_code, 0) << of_run.err;
  series.clear();
  ASSERT_EQ(client::ReadJsonEnvelope(of_run.out, "history", &series), "");
  EXPECT_EQ(series.size(), 1u);
  auto other_regime = Client({"--format", "json", "history", "abl_*", "--regime", "burst"});
  series.clear();
  ASSERT_EQ(client::ReadJsonEnvelope(other_regime.out, "history", &series), "");
  EXPECT_TRUE(series.empty());

  // Every run carries its provenance.
  auto show = Client({"--format", "json", "show", "1"});
  ASSERT_EQ(show.exit_code, 0) << show.err;
  EXPECT_THAT(show.out, HasSubstr("\"host_name\":\"gpu-node-7\""));
  EXPECT_THAT(show.out, HasSubstr("\"node_labels\":\"pool=h200,zone=eu-1\""));
  EXPECT_THAT(show.out, HasSubstr("\"hardware_fingerprint\":\"" + s.hardware_fingerprint()));
  EXPECT_THAT(show.out, HasSubstr("\"kernel_revision\":\""));
}

TEST_F(HistoryE2E, BadInputIsRefusedNamingWhatIsWrong) {
  StartDaemon({});
  Nights(1);
  auto unknown = Client({"history", "abl_nosuch"});
  EXPECT_NE(unknown.exit_code, 0);
  EXPECT_THAT(unknown.err, HasSubstr("no measurement of 'abl_nosuch' was ever stored"));
  auto date = Client({"history", "L1_R1_s3", "--since", "last tuesday"});
  EXPECT_EQ(date.exit_code, 2);
  EXPECT_THAT(date.err, HasSubstr("--since"));
  auto regime = Client({"history", "L1_R1_s3", "--regime", "hot"});
  EXPECT_EQ(regime.exit_code, 2);
  EXPECT_THAT(regime.err, HasSubstr("--regime"));
  auto none = Client({"history"});
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_THAT(none.err, HasSubstr("variant"));
}

}  // namespace
}  // namespace ablation::testing
