// The command line against the real daemon (fake worker, real SQLite): a dtype inferred from
// the variant's name or its only dtype is what the daemon measures; a contradiction is refused
// before anything is stored; the run is named the same way everywhere (`--run` still works,
// with a warning); -o FILE; the bash completion offers the daemon's own variant names.
#include <signal.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/e2e/harness.h"

namespace ablation::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class CliE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = MakeTempDir();
    ASSERT_FALSE(dir_.empty());
    daemon_ = std::make_unique<Daemon>(dir_, FAKE_WORKER_PATH);
    ASSERT_EQ(daemon_->Start(), "");
  }
  void TearDown() override {
    if (daemon_) daemon_->Stop(SIGTERM);
    std::filesystem::remove_all(dir_);
  }
  CommandResult Client(std::vector<std::string> args) { return daemon_->Client(std::move(args)); }
  // The dtype column of `results RUN --format csv`, one per measurement.
  std::vector<std::string> Dtypes(const std::string& run) {
    const CommandResult r = Client({"results", run, "--format", "csv"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    std::vector<std::string> dtypes;
    std::istringstream in(r.out);
    std::string line;
    auto fields = [](const std::string& text) {
      std::vector<std::string> out;
      std::istringstream cells(text);
      std::string cell;
      while (std::getline(cells, cell, ',')) out.push_back(cell);
      return out;
    };
    std::getline(in, line);  // the header: the column named dtype
    const std::vector<std::string> header = fields(line.substr(0, line.find('\r')));
    const size_t column = size_t(std::find(header.begin(), header.end(), "dtype") - header.begin());
    while (std::getline(in, line)) {
      const std::vector<std::string> row = fields(line);
      if (column < row.size()) dtypes.push_back(row[column]);
    }
    return dtypes;
  }

  std::string dir_;
  std::unique_ptr<Daemon> daemon_;
};

TEST_F(CliE2E, TheDaemonMeasuresTheDtypeTheNameNames) {
  // Once refused: "cublas_fp16 has no bf16 kernel", --dtype defaulting to bf16.
  auto fp16 = Client({"-q", "run", "-v", "cublas_fp16", "-s", "256"});
  ASSERT_EQ(fp16.exit_code, 0) << fp16.err;
  EXPECT_EQ(Dtypes("latest"), std::vector<std::string>({"fp16"}));
  auto int8 = Client({"-q", "run", "-v", "pipe_cpasync_i8_64x64x32", "-s", "256"});
  ASSERT_EQ(int8.exit_code, 0) << int8.err;
  EXPECT_EQ(Dtypes("latest"), std::vector<std::string>({"int8"}));
  // The simt_ family's names carry no dtype; fp32 is all it has.
  auto simt = Client({"-q", "run", "-v", "simt_at", "-s", "256"});
  ASSERT_EQ(simt.exit_code, 0) << simt.err;
  EXPECT_EQ(Dtypes("latest"), std::vector<std::string>({"fp32"}));
  // A glob follows the named one: ablation variants (sw0, sw1, each with rb1) in fp16 and cuBLAS.
  auto mixed =
      Client({"-q", "run", "-v", "cublas_fp16", "-v", "abl_L1_R1_bl0_s3_sw*", "-s", "256"});
  ASSERT_EQ(mixed.exit_code, 0) << mixed.err;
  EXPECT_EQ(Dtypes("latest"), std::vector<std::string>(5, "fp16"));
  auto alias = Client({"-q", "verify", "-v", "L1_R1_s3", "--dtype", "f16", "-s", "128"});
  ASSERT_EQ(alias.exit_code, 0) << alias.err;
}

TEST_F(CliE2E, ContradictionsAndMixturesAreRefusedBeforeAnythingIsStored) {
  auto contradiction = Client({"run", "-v", "cublas_fp16", "--dtype", "bf16"});
  EXPECT_EQ(contradiction.exit_code, 64);  // usage: refused by the client
  EXPECT_THAT(contradiction.err,
              HasSubstr("error: --dtype bf16 contradicts the variant cublas_fp16, whose name "
                        "says fp16"));
  auto mixture = Client({"run", "-v", "cublas_fp16", "-v", "cublas_int8"});
  EXPECT_EQ(mixture.exit_code, 64);  // usage: refused by the client
  EXPECT_THAT(mixture.err, HasSubstr("the variants name different dtypes: cublas_fp16 (fp16), "
                                     "cublas_int8 (int8)"));
  // The daemon's own refusal, with where the dtype came from.
  auto refused = Client({"run", "-v", "cublas_fp16", "-v", "simt_at"});
  EXPECT_EQ(refused.exit_code, 65);  // the daemon refused the input
  EXPECT_THAT(refused.err, HasSubstr("INVALID_ARGUMENT"));
  EXPECT_THAT(refused.err, HasSubstr("note: dtype fp16 was inferred from the name cublas_fp16"));
  auto runs = Client({"runs", "--format", "csv"});
  EXPECT_EQ(runs.out.find('\n'), runs.out.size() - 1) << "only the header: " << runs.out;
}

// A sweep (and a run) ends with what it answers: its ladder's rungs, each change with its
// interval, as `report` has them; the rows stay the only output in CSV and JSON.
TEST_F(CliE2E, ASweepEndsWithItsLaddersAnswer) {
  auto sweep = Client({"-q", "sweep", "--preset", "ladder-a", "--shape", "256"});
  ASSERT_EQ(sweep.exit_code, 0) << sweep.err;
  const size_t answer = sweep.out.find("\nThe answer (`ablation-client report 1` has it all):\n");
  ASSERT_NE(answer, std::string::npos) << sweep.out;
  const std::string tail = sweep.out.substr(answer);
  // The rows before it say their round (the preset runs 3).
  const std::string rows = sweep.out.substr(0, answer);
  EXPECT_THAT(rows.substr(0, rows.find('\n')), ::testing::ContainsRegex("shape +round"));
  EXPECT_THAT(rows, ::testing::ContainsRegex("256x256x256 +2 "));
  EXPECT_THAT(tail, HasSubstr("Ladder A: smem -> registers"));
  EXPECT_THAT(tail, ::testing::ContainsRegex(
                        "\\| A3 \\| ldmatrix \\|.*\\| A[12] \\| [+-][0-9]+\\.[0-9]% \\["));
  EXPECT_THAT(tail, Not(HasSubstr("All measurements of the run")));
  auto csv = Client({"-q", "--format", "csv", "sweep", "--preset", "ladder-a", "--shape", "256"});
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  EXPECT_THAT(csv.out, Not(HasSubstr("The answer")));
}

// CSV for scripts: the same columns whatever the rows hold, what identifies each row first, the
// newest rows first (a limit keeps the latest), and a notice on stderr when the limit cut it.
TEST_F(CliE2E, ResultsCsvHasEveryIdentifyingColumnNewestFirstAndSaysWhenCut) {
  ASSERT_EQ(Client({"-q", "run", "-v", "cublas_bf16", "-s", "256"}).exit_code, 0);
  ASSERT_EQ(Client({"-q", "run", "-v", "L1_R1_s3", "-s", "256", "--verify"}).exit_code, 0);
  auto latest = Client({"--format", "csv", "results", "--limit", "1"});
  ASSERT_EQ(latest.exit_code, 0) << latest.err;
  const std::string header = latest.out.substr(0, latest.out.find("\r\n"));
  EXPECT_THAT(header, StartsWith("run_id,device_uuid,round,window,created_at,variant,dtype,shape,"
                                 "regime,"));
  EXPECT_THAT(latest.out, HasSubstr("\r\n2,"));  // run 2's row: the newest
  EXPECT_THAT(latest.out, HasSubstr(",abl_L1_R1_bl0_s3_sw1,"));
  EXPECT_THAT(latest.err, HasSubstr("showing the latest 1 measurements; --limit 0 for all"));
  // The other run's rows (no verification) have the same columns.
  auto first = Client({"--format", "csv", "results", "1"});
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_EQ(first.out.substr(0, first.out.find("\r\n")), header);
  auto oldest = Client({"--format", "csv", "results", "--limit", "1", "--oldest-first"});
  EXPECT_THAT(oldest.out, HasSubstr("\r\n1,"));
  EXPECT_THAT(oldest.err, HasSubstr("showing the first 1 measurements"));
}

TEST_F(CliE2E, RunsAreNamedTheSameWayEverywhere) {
  ASSERT_EQ(Client({"-q", "run", "-v", "cublas_bf16", "-s", "256", "--tag", "first"}).exit_code, 0);
  auto show = Client({"show", "1"});
  EXPECT_EQ(show.exit_code, 0) << show.err;
  EXPECT_THAT(show.out, HasSubstr("first"));
  auto results = Client({"results", "latest"});
  EXPECT_EQ(results.exit_code, 0) << results.err;
  EXPECT_THAT(results.out, HasSubstr("cublas_bf16"));
  auto report = Client({"report", "1"});
  EXPECT_EQ(report.exit_code, 0) << report.err;
  EXPECT_THAT(report.out, StartsWith("# Ablation report: run 1"));
  auto old = Client({"report", "--run", "1"});
  EXPECT_EQ(old.exit_code, 0) << old.err;
  EXPECT_EQ(old.out, report.out);
  EXPECT_THAT(old.err, HasSubstr("warning: `report --run 1` is deprecated; write `report 1`"));
  EXPECT_EQ(Client({"watch"}).exit_code, 64);  // usage: refused by the client
}

TEST_F(CliE2E, OutputFileAndFormatFlag) {
  ASSERT_EQ(Client({"-q", "run", "-v", "cublas_bf16", "-s", "256"}).exit_code, 0);
  const std::string html = dir_ + "/report.html";
  auto report = Client({"report", "latest", "-f", "html", "-o", html});
  ASSERT_EQ(report.exit_code, 0) << report.err;
  EXPECT_EQ(report.out, "");
  EXPECT_THAT(ReadFile(html), StartsWith("<!DOCTYPE html>"));
  const std::string csv = dir_ + "/results.csv";
  ASSERT_EQ(Client({"results", "-f", "csv", "-o", csv}).exit_code, 0);
  EXPECT_THAT(ReadFile(csv),
              StartsWith("run_id,device_uuid,round,window,created_at,variant,dtype,"));
  EXPECT_EQ(Client({"results", "-f", "html"}).exit_code, 64);  // usage: refused by the client
}

TEST_F(CliE2E, TablesFitTheTerminalTheyAreShownOn) {
  const CommandResult which = RunCommand({"/bin/sh", "-c", "command -v script"});
  if (which.exit_code != 0)
    GTEST_SKIP() << "no script(1) (util-linux) to give the client a terminal";
  const std::string script = which.out.substr(0, which.out.find('\n'));
  // On a terminal 72 columns wide (its size, not $COLUMNS, which says 300): the presets, whose
  // descriptions are long, fit it.
  auto r = RunCommand({script, "-qec",
                       "stty cols 72 rows 100; COLUMNS=300 '" + std::string(CLIENT_PATH) +
                           "' --server " + daemon_->address() + " presets",
                       "/dev/null"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  std::istringstream lines(r.out);
  int rows = 0;
  for (std::string line; std::getline(lines, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    std::size_t width = 0;
    for (unsigned char c : line) width += (c & 0xC0) != 0x80;
    EXPECT_LE(width, 72u) << line;
    ++rows;
  }
  EXPECT_GT(rows, 10) << r.out;
  EXPECT_THAT(r.out, HasSubstr("ladder-a"));
  EXPECT_THAT(r.out, HasSubstr("description: Ladder A"));
  // Not a terminal: $COLUMNS.
  auto piped = RunCommand({"/bin/sh", "-c",
                           "COLUMNS=90 '" + std::string(CLIENT_PATH) + "' --server " +
                               daemon_->address() + " presets"});
  ASSERT_EQ(piped.exit_code, 0) << piped.err;
  std::istringstream piped_lines(piped.out);
  for (std::string line; std::getline(piped_lines, line);) EXPECT_LE(line.size(), 90u) << line;
}

TEST_F(CliE2E, BashCompletionOffersTheDaemonsVariants) {
  const std::string script = dir_ + "/ablation-client.bash";
  ASSERT_EQ(Client({"completion", "bash", "-o", script}).exit_code, 0);
  auto r = RunCommand({"/bin/bash", "-c",
                       "source \"$1\"; COMP_WORDS=(\"$2\" --server \"$3\" run -v cublas_fp1); "
                       "COMP_CWORD=5; _ablation_client; printf '%s\\n' \"${COMPREPLY[@]}\"",
                       "_", script, CLIENT_PATH, daemon_->address()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "cublas_fp16\ncublas_fp16_best\n") << r.err;
}

// A fleet database's password on the client's command line is warned of (other users read it in
// ps); one without a password is not.
TEST_F(CliE2E, AFleetPasswordOnTheCommandLineIsWarnedOf) {
  auto with = RunCommand({CLIENT_PATH, "--fleet-db",
                          "postgresql://ablation@127.0.0.1:1/fleet?%70assword=s3cret", "runs"});
  EXPECT_THAT(with.err, ::testing::HasSubstr("warning: --fleet-db holds a password"));
  EXPECT_EQ(with.err.find("s3cret"), std::string::npos) << with.err;
  auto without =
      RunCommand({CLIENT_PATH, "--fleet-db", "postgresql://ablation@127.0.0.1:1/fleet", "runs"});
  EXPECT_EQ(without.err.find("warning"), std::string::npos) << without.err;
}

}  // namespace
}  // namespace ablation::testing
