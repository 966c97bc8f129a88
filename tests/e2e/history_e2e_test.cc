// history end to end: nightly-style runs made by the real daemon with the fake worker, whose clock
// knob slows every sample by 10% from the ninth run on; the real client shows the series, its
// change point and the runs' provenance.
#include <signal.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "client/output/json.h"
#include "tests/e2e/daemon_fixture.h"
#include "tests/e2e/harness.h"
#include "tests/support/test_paths.h"

namespace ablation::testing {
namespace {

using ::testing::HasSubstr;

class HistoryE2E : public DaemonFixture {
 protected:
  void StartDaemon(std::map<std::string, std::string> env) {
    env["ABLATION_NODE_LABELS"] = "pool=h200,zone=eu-1";
    env["ABLATION_NODE_NAME"] = "gpu-node-7";
    StartFakeDaemon(std::move(env));
  }
  void Nights(int count) {
    for (int i = 0; i < count; ++i) {
      auto r = Client({"run", "--variant", "L1_R1_s3", "--shape", "256x256x256", "--tag", "nightly",
                       "--regime", "burst", "--burst-seconds", "0.05"});
      ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    }
  }
};

TEST_F(HistoryE2E, ASlowerClockFromTheNinthNightIsOneChangePoint) {
  StartDaemon({});
  Nights(8);
  StartDaemon({{"ABLATION_FAKE_SM_MHZ", "1800"}});  // every sample 10% longer
  Nights(8);

  auto json = Client({"--format", "json", "history", "L1_R1_s3", "--tag", "nightly"});
  ASSERT_EQ(json.exit_code, 0) << json.out << json.err;
  std::vector<v1::Series> series;
  ASSERT_EQ(client::ReadJsonEnvelope(json.out, "history", &series), "") << json.out;
  ASSERT_EQ(series.size(), 1u) << json.out;
  const v1::Series s = series[0];  // a copy: `series` is read into again below
  EXPECT_EQ(s.variant(), "abl_L1_R1_bl0_s3_sw1");
  EXPECT_EQ(s.regime(), v1::REGIME_BURST);  // the harness's daemon default
  EXPECT_EQ(s.hardware_fingerprint().size(), 16u);
  ASSERT_EQ(s.points_size(), 16);
  ASSERT_EQ(s.change_points_size(), 1) << json.out;
  EXPECT_EQ(s.change_points(0).index(), 8);
  EXPECT_NEAR(s.change_points(0).relative_change(), 0.10, 0.01);
  EXPECT_TRUE(s.points(8).change_point());
  EXPECT_FALSE(s.newest().candidate());  // the newest night is like the seven before it

  auto table = Client({"history", "L1_R1_s3"});
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_THAT(table.out, HasSubstr("abl_L1_R1_bl0_s3_sw1  bf16  256x256x256  burst"));
  EXPECT_THAT(table.out, HasSubstr("^ slower +10.0"));

  auto csv = Client({"--format", "csv", "history", "L1_R1_s3", "--shape", "256"});
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  EXPECT_THAT(csv.out, ::testing::StartsWith(
                           "hardware_fingerprint,variant,dtype,m,n,k,regime,l2,device_uuid,run_id,"
                           "created_at,median_ms,noise_pct,tflops,change_point,relative_change,"
                           "node,user_build_id,version,build_change\r\n"));
  EXPECT_EQ(std::count(csv.out.begin(), csv.out.end(), '\n'), 17);

  // The HTML page: the series' chart with its change point marked before the ninth run, and its
  // table (charts.h HistoryChart).
  auto html = Client({"--format", "html", "history", "L1_R1_s3", "--tag", "nightly"});
  ASSERT_EQ(html.exit_code, 0) << html.err;
  EXPECT_THAT(html.out, HasSubstr("<title>History: L1_R1_s3, tag nightly</title>"));
  EXPECT_THAT(html.out, HasSubstr("<svg class=\"chart history\" id=\"history-1\""));
  EXPECT_THAT(html.out, HasSubstr("<g class=\"change-point\" data-index=\"8\">"));
  EXPECT_THAT(html.out, HasSubstr("▲ slower +"));
  size_t points = 0;
  for (size_t at = 0; (at = html.out.find("<circle class=\"point", at)) != std::string::npos; ++at)
    ++points;
  EXPECT_EQ(points, 16u);

  // The series of one run, and nothing of a run that measured something else.
  auto of_run = Client({"--format", "json", "history", "abl_*", "--in-run", "16"});
  ASSERT_EQ(of_run.exit_code, 0) << of_run.err;
  series.clear();
  ASSERT_EQ(client::ReadJsonEnvelope(of_run.out, "history", &series), "");
  EXPECT_EQ(series.size(), 1u);
  auto other_regime = Client({"--format", "json", "history", "abl_*", "--regime", "sustained"});
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
  EXPECT_EQ(date.exit_code, 64);  // usage: refused by the client
  EXPECT_THAT(date.err, HasSubstr("--since"));
  auto regime = Client({"history", "L1_R1_s3", "--regime", "hot"});
  EXPECT_EQ(regime.exit_code, 64);  // usage: refused by the client
  EXPECT_THAT(regime.err, HasSubstr("--regime"));
  auto none = Client({"history"});
  EXPECT_EQ(none.exit_code, 64);  // usage: refused by the client
  EXPECT_THAT(none.err, HasSubstr("variant"));
}

// deploy/nightly.sh with the real client and daemon, the fake worker timing one variant twice as
// slow through the second night only (ABLATION_FAKE_ONCE): a candidate at each of its two shapes,
// whose reruns measure the usual time, so the verdict is "not confirmed" and the job exits 0.
TEST_F(HistoryE2E, TheNightlyRerunTurnsAOneNightOutlierIntoNotConfirmed) {
  const std::string once = dir_ + "/slow-once";
  StartDaemon({{"ABLATION_FAKE_ONCE", once}});
  const std::string bin = dir_ + "/bin", reports = dir_ + "/reports";
  std::filesystem::create_directories(bin);
  // The client, except that a `run` (the job's rerun) first ends the outlier: it lasts the night's
  // sweep (its settling and every round), not the rerun after it.
  {
    std::ofstream wrapper(bin + "/ablation-client");
    wrapper << "#!/bin/bash\nif [[ \" $* \" == *\" run \"* ]]; then rm -f '" << once
            << "'; fi\nexec '" << TestBinary(CLIENT_PATH) << "' \"$@\"\n";
  }
  std::filesystem::permissions(bin + "/ablation-client", std::filesystem::perms::owner_all);
  const char* path = std::getenv("PATH");
  const std::map<std::string, std::string> env = {
      {"PATH", bin + ":" + (path ? path : "/usr/bin:/bin")},
      {"ABLATION_SERVER", daemon_->address()},
      {"REPORT_DIR", reports},
      {"METRICS_TEXTFILE", dir_ + "/ablationd_nightly.prom"}};
  auto first = RunCommand({"/bin/bash", NIGHTLY_SH}, env, 240);
  ASSERT_EQ(first.exit_code, 0) << first.out << first.err;

  // Every window of the variant until the rerun (the wrapper ends it), so that the median of the
  // night's rounds moves.
  std::ofstream(once) << "abl_L1_R1_bl0_s3_sw1=0.5 1000000\n";
  auto second = RunCommand({"/bin/bash", NIGHTLY_SH}, env, 240);
  EXPECT_EQ(second.exit_code, 0) << second.out << second.err;
  EXPECT_FALSE(std::filesystem::exists(once)) << "no rerun ended the outlier";
  EXPECT_THAT(second.out, HasSubstr("candidate: abl_L1_R1_bl0_s3_sw1"));
  EXPECT_THAT(second.out, HasSubstr("not confirmed: the rerun"));
  std::ifstream verdict_file(reports + "/latest-verdict.json");
  const std::string verdict((std::istreambuf_iterator<char>(verdict_file)),
                            std::istreambuf_iterator<char>());
  EXPECT_THAT(verdict, HasSubstr("\"verdict\": \"ok\""));
  EXPECT_THAT(verdict, HasSubstr("\"candidates\": 2"));
  EXPECT_THAT(verdict, ::testing::Not(HasSubstr("\"confirmed\": true")));
  EXPECT_THAT(verdict, HasSubstr("\"confirmed\": false"));
  EXPECT_THAT(verdict, HasSubstr("\"variant\": \"abl_L1_R1_bl0_s3_sw1\""));
  std::ifstream metrics_file(dir_ + "/ablationd_nightly.prom");
  const std::string metrics((std::istreambuf_iterator<char>(metrics_file)),
                            std::istreambuf_iterator<char>());
  EXPECT_THAT(metrics, HasSubstr("ablationd_nightly_candidates{tag=\"nightly\"} 2"));
  EXPECT_THAT(metrics, ::testing::Not(HasSubstr("ablationd_regressions{")));
  // The rerun is a run of its own, tagged nightly-rerun, and not part of the nightly series.
  auto reruns = Client({"--format", "json", "runs", "--tag", "nightly-rerun"});
  EXPECT_THAT(reruns.out, HasSubstr("\"tags\":[\"nightly-rerun\"]"));
}

}  // namespace
}  // namespace ablation::testing
