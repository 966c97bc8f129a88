// Presets, sweep, report and compare end to end: the real daemon and client over gRPC with a real
// SQLite file and the fake worker; the HTML report rendered by headless Chromium.
#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gmock/gmock.h>
#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>
#include <gtest/gtest.h>

#include "tests/e2e/harness.h"

namespace ablation::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

bool IsJson(const std::string& text) {
  google::protobuf::Struct parsed;
  return google::protobuf::util::JsonStringToMessage(text, &parsed).ok();
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class ReportE2E : public ::testing::Test {
 protected:
  void StartDaemon(std::vector<std::string> extra_args = {}, std::string preset_file = "",
                   std::map<std::string, std::string> env = {}) {
    dir_ = MakeTempDir();
    ASSERT_FALSE(dir_.empty());
    daemon_ = std::make_unique<Daemon>(dir_, FAKE_WORKER_PATH, std::move(env));
    if (!preset_file.empty()) {
      std::ofstream(dir_ + "/presets.toml") << preset_file;
      extra_args.push_back("--presets");
      extra_args.push_back(dir_ + "/presets.toml");
    }
    daemon_->set_extra_args(extra_args);
    start_error_ = daemon_->Start();
  }
  void TearDown() override {
    if (daemon_) daemon_->Stop(SIGTERM);
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }
  CommandResult Client(std::vector<std::string> args) { return daemon_->Client(std::move(args)); }

  std::string dir_;
  std::string start_error_;
  std::unique_ptr<Daemon> daemon_;
};

TEST_F(ReportE2E, PresetsSweepReportCompare) {
  StartDaemon();
  ASSERT_EQ(start_error_, "");

  auto presets = Client({"presets"});
  ASSERT_EQ(presets.exit_code, 0) << presets.err;
  for (const char* name : {"ladder-a", "ladder-b", "swizzle", "all-ablation", "pipelining", "arch",
                           "shapes", "nightly"})
    EXPECT_THAT(presets.out, HasSubstr(name));
  auto ladder_b = Client({"presets", "ladder-b"});
  ASSERT_EQ(ladder_b.exit_code, 0) << ladder_b.err;
  EXPECT_THAT(ladder_b.out, HasSubstr("abl_L1_R1_bl0_s4_sw1_rb1"));
  EXPECT_THAT(ladder_b.out, HasSubstr("planned      24 measurements"));
  auto unknown = Client({"presets", "ladder-z"});
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_THAT(unknown.err, HasSubstr("NOT_FOUND"));

  // Two sweeps of the same preset: stderr is not a terminal, so progress comes as plain lines.
  auto first = Client({"sweep", "--preset", "ladder-a", "--tag", "nightly"});
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_THAT(first.err, HasSubstr("[12/12]"));
  EXPECT_THAT(first.err, HasSubstr("ETA"));
  EXPECT_THAT(first.err, Not(HasSubstr("\r")));
  EXPECT_THAT(first.out, HasSubstr("abl_L1_R1_bl0_s3_sw1"));
  EXPECT_THAT(first.out, HasSubstr("cublas_bf16"));
  auto second = Client({"sweep", "--preset", "ladder-a"});
  ASSERT_EQ(second.exit_code, 0) << second.err;

  auto runs = Client({"runs", "--tag", "nightly"});
  EXPECT_THAT(runs.out, HasSubstr("succeeded"));

  auto md = Client({"report", "1", "--format", "md"});
  ASSERT_EQ(md.exit_code, 0) << md.err;
  EXPECT_THAT(md.out, HasSubstr("# Ablation report: run 1"));
  EXPECT_THAT(md.out, HasSubstr("## 2. Ladder A"));
  EXPECT_THAT(md.out,
              HasSubstr("| A3 | ldmatrix | `abl_L1_R1_bl0_s3_sw1` | bf16 | 100.0 | 100.0% | A1 |"));
  EXPECT_THAT(md.out, HasSubstr("## 3. Ladder B"));
  EXPECT_THAT(md.out,
              HasSubstr("| B0 | sync load, 1 stage | `abl_L0_R1_bl0_s1_sw1` | bf16 | missing |"));
  EXPECT_THAT(md.out, HasSubstr("## 4. Shape sensitivity"));
  EXPECT_THAT(md.out, HasSubstr("## 5. Pipelining"));
  EXPECT_THAT(md.out, HasSubstr("Reading notes"));

  auto json = Client({"report", "--format", "json"});  // latest: run 2
  ASSERT_EQ(json.exit_code, 0) << json.err;
  EXPECT_TRUE(IsJson(json.out)) << json.out;
  EXPECT_THAT(json.out, HasSubstr("\"id\": \"2\""));
  EXPECT_THAT(json.out, HasSubstr("\"id\": \"ladder-a\""));
  EXPECT_THAT(json.out, HasSubstr("\"id\": \"pipelining\""));
  auto global_json = Client({"--format", "json", "report", "1"});
  EXPECT_TRUE(IsJson(global_json.out)) << global_json.out << global_json.err;
  auto csv = Client({"report", "--format", "csv"});
  EXPECT_THAT(csv.out, HasSubstr("table,label,what,variant"));

  auto compare = Client({"compare", "1", "2"});
  EXPECT_EQ(compare.exit_code, 0) << compare.out << compare.err;
  EXPECT_THAT(compare.err, HasSubstr("4 compared, 0 significant slowdowns beyond 3%"));
  EXPECT_THAT(compare.out, HasSubstr("same (within noise)"));
  auto compare_json = Client({"compare", "1", "latest", "--threshold", "5%", "--format", "json"});
  EXPECT_EQ(compare_json.exit_code, 0) << compare_json.err;
  EXPECT_TRUE(IsJson(compare_json.out)) << compare_json.out;
  EXPECT_THAT(compare_json.out, HasSubstr("\"regressions\": 0"));
  auto bad_threshold = Client({"compare", "1", "2", "--threshold", "lots"});
  EXPECT_EQ(bad_threshold.exit_code, 2);
  auto no_run = Client({"compare", "1", "99"});
  EXPECT_EQ(no_run.exit_code, 2);
  EXPECT_THAT(no_run.err, HasSubstr("NOT_FOUND"));
}

// A preset's 3 rounds with 2 of every row's 10 samples at half the clock: the report takes each
// item over its rounds and shows the floor, the cycles change and the low-clock share.
TEST_F(ReportE2E, TheReportTakesItemsOverRoundsWithTheirClocks) {
  StartDaemon({}, "", {{"ABLATION_FAKE_LOW_CLOCK_SAMPLES", "2"}});
  ASSERT_EQ(start_error_, "");
  auto sweep = Client({"sweep", "--preset", "ladder-a", "--shape", "256x256x256"});
  ASSERT_EQ(sweep.exit_code, 0) << sweep.err;
  EXPECT_THAT(sweep.err, HasSubstr("[12/12]"));  // 4 items, 3 rounds

  auto md = Client({"report", "--format", "md"});
  ASSERT_EQ(md.exit_code, 0) << md.err;
  EXPECT_THAT(md.out, HasSubstr("a bootstrap over the run's 3 rounds, paired"));
  EXPECT_THAT(md.out, HasSubstr("Noise floor: 0.00%, the median over the run's items"));
  EXPECT_THAT(md.out,
              HasSubstr("| change [95% CI] | noise | cycles change [95% CI] | low clock |"));
  // The fake worker times every variant alike: no change, in time or in cycles.
  EXPECT_THAT(md.out, HasSubstr("| A1 | +0.0% [+0.0, +0.0] | ≈ | +0.0% [+0.0, +0.0] ≈ | 20% |"));
  EXPECT_THAT(md.out, HasSubstr("| 256x256x256 | 99.9 | 100.0% | 3 | 20% | ok |"));
  EXPECT_THAT(md.out, Not(HasSubstr("†")));

  auto json = Client({"report", "--format", "json"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  EXPECT_THAT(json.out, HasSubstr("\"rounds\": 3"));
  EXPECT_THAT(json.out, HasSubstr("\"basis\": \"CHANGE_BASIS_ROUNDS\""));
  EXPECT_THAT(json.out, HasSubstr("\"low_clock_share\": 0.2"));
}

TEST_F(ReportE2E, MissingPresetEntriesAreNamedAndNeedAllowMissing) {
  StartDaemon({}, R"(
[future]
description = "a variant that is not written yet, and one that is"
variants = ["zz_future_kernel", "abl_L1_R1_bl0_s3_sw1", "cublas_bf16"]
shapes = ["256"]
)");
  ASSERT_EQ(start_error_, "");
  auto listed = Client({"presets", "future"});
  ASSERT_EQ(listed.exit_code, 0) << listed.err;
  EXPECT_THAT(listed.out, HasSubstr("MISSING"));
  EXPECT_THAT(listed.err, HasSubstr("zz_future_kernel (bf16)"));

  auto refused = Client({"sweep", "--preset", "future"});
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_THAT(refused.err, HasSubstr("zz_future_kernel (bf16)"));
  EXPECT_THAT(refused.err, HasSubstr("--allow-missing"));

  // The daemon refuses on its own too (a client that skips ListPresets).
  v1::RunRequest request;
  request.set_preset("future");
  auto stub = daemon_->Stub();
  grpc::ClientContext ctx;
  auto reader = stub->RunAblation(&ctx, request);
  v1::RunEvent event;
  while (reader->Read(&event)) {
  }
  grpc::Status status = reader->Finish();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("zz_future_kernel (bf16)"));

  auto allowed = Client({"sweep", "--preset", "future", "--allow-missing"});
  ASSERT_EQ(allowed.exit_code, 0) << allowed.err;
  EXPECT_THAT(allowed.err, HasSubstr("skipping 1 missing entry: zz_future_kernel (bf16)"));
  EXPECT_THAT(allowed.err, HasSubstr("[6/6]"));
}

TEST_F(ReportE2E, ABadPresetsFileStopsTheDaemonNamingTheLine) {
  StartDaemon({}, "[broken]\ndescription = \"x\"\nvariants = [\"a\", 3]\n");
  EXPECT_THAT(start_error_, HasSubstr("presets.toml:3: broken.variants[1]: expected a string"));
  daemon_.reset();
}

// Chromium's log lines for messages of the page's console (errors, uncaught exceptions, failed
// loads); the report has no scripts, so any of them is a fault.
std::vector<std::string> ConsoleLines(const std::string& log) {
  std::vector<std::string> out;
  std::istringstream in(log);
  for (std::string line; std::getline(in, line);)
    if (line.find("CONSOLE") != std::string::npos || line.find("Uncaught") != std::string::npos)
      out.push_back(line);
  return out;
}

std::string FindChromium() {
  for (const char* name : {"chromium", "chromium-browser"}) {
    const char* path = std::getenv("PATH");
    std::istringstream dirs(path ? path : "/usr/bin");
    for (std::string dir; std::getline(dirs, dir, ':');) {
      std::string candidate = dir + "/" + name;
      if (::access(candidate.c_str(), X_OK) == 0) return candidate;
    }
  }
  return "";
}

// Loads a file in headless Chromium; returns the DOM it built, console lines in `console`.
CommandResult Render(const std::string& chromium, const std::string& file, const std::string& tmp) {
  return RunCommand({chromium, "--headless", "--no-sandbox", "--disable-gpu",
                     "--disable-background-networking", "--disable-component-update",
                     "--disable-sync", "--no-first-run", "--user-data-dir=" + tmp + "/chromium",
                     "--enable-logging=stderr", "--v=0", "--dump-dom", "file://" + file},
                    {}, 180);
}

TEST_F(ReportE2E, HtmlReportRendersInHeadlessChromium) {
  const std::string chromium = FindChromium();
  ASSERT_FALSE(chromium.empty())
      << "chromium is not installed: run scripts/install-deps.sh (it installs Debian's chromium, "
         "which this test uses to render the HTML report headless)";
  StartDaemon();
  ASSERT_EQ(start_error_, "");
  ASSERT_EQ(Client({"sweep", "--preset", "ladder-b", "--shape", "4096", "--shape", "4096x4096x256"})
                .exit_code,
            0);
  const std::string html = dir_ + "/report.html";
  auto written = Client({"report", "--format", "html", "-o", html});
  ASSERT_EQ(written.exit_code, 0) << written.err;

  // The check itself works: a page that throws is caught.
  const std::string bad = dir_ + "/bad.html";
  std::ofstream(bad) << "<!DOCTYPE html><p>x</p><script>throw new Error('boom')</script>";
  CommandResult control = Render(chromium, bad, dir_);
  ASSERT_EQ(control.exit_code, 0) << control.err;
  ASSERT_FALSE(ConsoleLines(control.err).empty()) << "Chromium's console log not seen:\n"
                                                  << control.err;

  CommandResult rendered = Render(chromium, html, dir_);
  ASSERT_EQ(rendered.exit_code, 0) << rendered.err;
  EXPECT_THAT(rendered.out, HasSubstr("<h1>Ablation report: run 1</h1>"));
  EXPECT_THAT(rendered.out, HasSubstr("<svg class=\"chart\" id=\"chart-ladder-b\""));
  EXPECT_THAT(rendered.out, HasSubstr("<svg class=\"heatmap\" id=\"heatmap-shapes\""));
  EXPECT_THAT(rendered.out, HasSubstr("<rect class=\"bar"));
  EXPECT_THAT(rendered.out, HasSubstr("Ladder B"));
  EXPECT_TRUE(ConsoleLines(rendered.err).empty())
      << "console messages while rendering the report:\n"
      << rendered.err;
  EXPECT_THAT(ReadFile(html), Not(HasSubstr("<script")));
}

}  // namespace
}  // namespace ablation::testing
