// The dashboard views (db/schema.md: latest_result, nightly_history, nightly_change,
// run_summary) read by a separate read-only SQLite connection WHILE a real ablationd (with the
// fake worker, slowed by ABLATION_FAKE_SLEEP_MS) writes a run: no SQLITE_BUSY, counts only grow,
// and once the run is over the views say exactly what the run measured.
#include <signal.h>
#include <sqlite3.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include <gmock/gmock.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include "db/store.h"
#include "tests/e2e/harness.h"
#include "tests/support/test_paths.h"

namespace ablation::testing {
namespace {

using Row = std::map<std::string, std::string>;  // column -> value as text ("" for NULL)

// A read-only connection with the sqlite3 C API, as a dashboard tool would open it. No busy
// timeout: with WAL a reader must never need one, so any SQLITE_BUSY is a failure.
class Reader {
 public:
  explicit Reader(const std::string& path) {
    rc_ = sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READONLY, nullptr);
  }
  ~Reader() { sqlite3_close_v2(db_); }
  bool ok() const { return rc_ == SQLITE_OK; }
  std::string error() const { return db_ ? sqlite3_errmsg(db_) : "no connection"; }

  // Runs sql; returns false (with the error in *error) on any failure.
  bool Query(const std::string& sql, std::vector<Row>* rows, std::string* error) {
    rows->clear();
    sqlite3_stmt* stmt = nullptr;
    int rc = sqlite3_prepare_v2(db_, sql.c_str(), -1, &stmt, nullptr);
    if (rc != SQLITE_OK) {
      *error = Describe(rc, sql);
      return false;
    }
    while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
      Row row;
      for (int i = 0; i < sqlite3_column_count(stmt); ++i) {
        const unsigned char* text = sqlite3_column_text(stmt, i);
        row[sqlite3_column_name(stmt, i)] = text ? reinterpret_cast<const char*>(text) : "";
      }
      rows->push_back(std::move(row));
    }
    sqlite3_finalize(stmt);
    if (rc != SQLITE_DONE) {
      *error = Describe(rc, sql);
      return false;
    }
    return true;
  }
  bool Exec(const std::string& sql, std::string* error) {
    std::vector<Row> rows;
    return Query(sql, &rows, error);
  }
  int64_t Int(const std::string& sql) {
    std::vector<Row> rows;
    std::string error;
    if (!Query(sql, &rows, &error) || rows.size() != 1) {
      ADD_FAILURE() << sql << ": " << error;
      return -1;
    }
    return std::stoll(rows[0].begin()->second);
  }

 private:
  std::string Describe(int rc, const std::string& sql) {
    return std::string(sqlite3_errstr(rc)) + " (" + std::to_string(rc) +
           "): " + sqlite3_errmsg(db_) + " in: " + sql;
  }
  sqlite3* db_ = nullptr;
  int rc_ = SQLITE_ERROR;
};

// What one look at the views saw, in one read transaction (one snapshot).
struct Snapshot {
  int64_t latest = 0;    // rows of latest_result
  int64_t history = 0;   // rows of nightly_history
  int64_t measured = 0;  // run_summary.measured of the run under way (max over runs)
  int64_t ok = 0;        // run_summary.ok, likewise
  int64_t change = 0;    // rows of nightly_change
};

class Dashboard : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = MakeTempDir();
    ASSERT_FALSE(dir_.empty());
    // Slow enough that the reader sees the run half done many times.
    daemon_ = std::make_unique<Daemon>(
        dir_, FAKE_WORKER_PATH,
        std::map<std::string, std::string>{{"ABLATION_FAKE_SLEEP_MS", "5"},
                                           {"ABLATION_FAKE_MEMORY_MB", "81920"}});
    ASSERT_EQ(daemon_->Start(), "");
  }
  void TearDown() override {
    if (daemon_) daemon_->Stop(SIGTERM);
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }

  static v1::RunRequest Request(const std::string& tag) {
    v1::RunRequest req;
    req.add_variants("abl_L0_*");  // a family of variants: enough measurements to watch
    req.add_variants("cublas_bf16");
    for (int64_t s : {256, 512}) {
      auto* shape = req.add_shapes();
      shape->set_m(s);
      shape->set_n(s);
      shape->set_k(s);
    }
    req.add_tags(tag);
    req.mutable_timing()->set_min_seconds(0.001);
    return req;
  }

  // Runs the request through the daemon; returns the run id and fills the measurement events.
  int64_t Run(const v1::RunRequest& req, std::vector<v1::Measurement>* measurements,
              v1::RunState* final_state) {
    auto stub = daemon_->Stub();
    grpc::ClientContext ctx;
    auto reader = stub->RunAblation(&ctx, req);
    v1::RunEvent ev;
    int64_t run_id = 0;
    while (reader->Read(&ev)) {
      if (ev.has_queued()) run_id = ev.queued().run_id();
      if (ev.has_measurement()) measurements->push_back(ev.measurement());
      if (ev.has_finished()) *final_state = ev.finished().state();
    }
    grpc::Status st = reader->Finish();
    EXPECT_TRUE(st.ok()) << st.error_message();
    return run_id;
  }

  static bool Look(Reader& reader, Snapshot* s, std::string* error) {
    // One snapshot for all the counts: a reader's BEGIN takes no lock until its first read,
    // and then holds that WAL snapshot until COMMIT.
    if (!reader.Exec("BEGIN", error)) return false;
    std::vector<Row> rows;
    bool ok = reader.Query("SELECT count(*) AS n FROM latest_result", &rows, error);
    if (ok) s->latest = std::stoll(rows[0]["n"]);
    ok = ok && reader.Query("SELECT count(*) AS n FROM nightly_history", &rows, error);
    if (ok) s->history = std::stoll(rows[0]["n"]);
    ok = ok && reader.Query(
                   "SELECT coalesce(max(measured), 0) AS measured, "
                   "coalesce(max(ok), 0) AS ok FROM run_summary",
                   &rows, error);
    if (ok) {
      s->measured = std::stoll(rows[0]["measured"]);
      s->ok = std::stoll(rows[0]["ok"]);
    }
    ok = ok && reader.Query("SELECT count(*) AS n FROM nightly_change", &rows, error);
    if (ok) s->change = std::stoll(rows[0]["n"]);
    std::string end_error;
    if (!reader.Exec("COMMIT", &end_error) && ok) {
      *error = end_error;
      return false;
    }
    return ok;
  }

  // Runs `req` while a reader looks at the views as fast as it can; checks what it saw.
  int64_t RunWatched(const v1::RunRequest& req, std::vector<v1::Measurement>* measurements,
                     Snapshot* before_out = nullptr) {
    Reader reader(daemon_->db_path());
    EXPECT_TRUE(reader.ok()) << reader.error();
    Snapshot before;
    std::string error;
    EXPECT_TRUE(Look(reader, &before, &error)) << error;
    if (before_out) *before_out = before;

    std::atomic<bool> done{false};
    v1::RunState state = v1::RUN_STATE_UNSPECIFIED;
    int64_t run_id = 0;
    std::thread runner([&] {
      run_id = Run(req, measurements, &state);
      done = true;
    });

    Snapshot last = before;
    int looks = 0, midway = 0, failures = 0;
    std::string first_error;
    while (!done) {
      Snapshot now;
      std::string err;
      if (!Look(reader, &now, &err)) {
        if (failures++ == 0) first_error = err;
        continue;
      }
      ++looks;
      // Only ever more: rows are appended, never taken back.
      EXPECT_GE(now.history, last.history);
      EXPECT_GE(now.latest, last.latest);
      EXPECT_GE(now.measured, last.measured);
      EXPECT_GE(now.ok, last.ok);
      EXPECT_GE(now.change, last.change);
      if (now.history > before.history && !done) ++midway;
      last = now;
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    runner.join();
    EXPECT_EQ(failures, 0) << "the reader failed " << failures << " times; first: " << first_error;
    EXPECT_EQ(state, v1::RUN_STATE_SUCCEEDED);
    EXPECT_GT(looks, 20) << "too few looks to have watched the run";
    EXPECT_GT(midway, 5) << "the reader never saw the run half done";
    std::printf("reader: %d looks during the run, %d with the run part done, %d failures\n", looks,
                midway, failures);
    return run_id;
  }

  std::string dir_;
  std::unique_ptr<Daemon> daemon_;
};

using Key = std::tuple<std::string, std::string, int64_t, int64_t, int64_t>;
Key KeyOf(const v1::Measurement& m) {
  return {m.variant(), m.dtype(), m.shape().m(), m.shape().n(), m.shape().k()};
}
Key KeyOf(Row& r) {
  return {r["variant"], r["dtype"], std::stoll(r["m"]), std::stoll(r["n"]), std::stoll(r["k"])};
}

TEST_F(Dashboard, ViewsReadWhileTheDaemonWritesGrowAndEndMatchingTheRuns) {
  // ---- night 1, watched.
  std::vector<v1::Measurement> night1;
  const int64_t run1 = RunWatched(Request("nightly"), &night1);
  ASSERT_GT(run1, 0);
  ASSERT_GE(night1.size(), 10u);

  Reader reader(daemon_->db_path());
  ASSERT_TRUE(reader.ok()) << reader.error();
  std::string error;
  std::vector<Row> rows;

  // latest_result: one row per variant/dtype/shape of the run, with its numbers.
  std::map<Key, v1::Measurement> by_key;
  for (const auto& m : night1) by_key[KeyOf(m)] = m;
  ASSERT_TRUE(reader.Query("SELECT * FROM latest_result ORDER BY variant, m", &rows, &error))
      << error;
  ASSERT_EQ(rows.size(), by_key.size());
  for (Row& r : rows) {
    auto it = by_key.find(KeyOf(r));
    ASSERT_NE(it, by_key.end()) << r["variant"];
    const v1::Measurement& m = it->second;
    EXPECT_EQ(std::stoll(r["run_id"]), run1);
    EXPECT_EQ(std::stoll(r["measurement_id"]), m.id());
    EXPECT_EQ(r["device_name"], "Fake GPU (test double)");
    EXPECT_EQ(r["device_uuid"], "GPU-00000000-0000-0000-0000-000000000000");
    EXPECT_NEAR(std::stod(r["tflops"]), m.tflops(), 1e-9 * m.tflops());
    EXPECT_NEAR(std::stod(r["median_ms"]), m.stats().median_ms(), 1e-12);
    EXPECT_NEAR(std::stod(r["noise"]), m.stats().noise(), 1e-12);
    EXPECT_EQ(std::stoll(r["samples"]), m.stats().samples());
    EXPECT_EQ(std::stoll(r["created_at_ms"]), m.created_at_ms());
    EXPECT_THAT(r["time"], ::testing::MatchesRegex("20[0-9][0-9]-[0-9][0-9]-[0-9][0-9]T.*Z"));
  }

  // nightly_history: every measurement of the run, tagged nightly.
  EXPECT_EQ(
      reader.Int("SELECT count(*) FROM nightly_history WHERE run_id = " + std::to_string(run1)),
      static_cast<int64_t>(night1.size()));
  EXPECT_EQ(reader.Int("SELECT count(DISTINCT run_id) FROM nightly_history"), 1);

  // run_summary: the run, finished, every planned measurement ok.
  ASSERT_TRUE(reader.Query("SELECT * FROM run_summary WHERE run_id = " + std::to_string(run1),
                           &rows, &error))
      << error;
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0]["state"], "succeeded");
  EXPECT_EQ(rows[0]["kind"], "ablation");
  EXPECT_EQ(rows[0]["tags"], "nightly");
  EXPECT_EQ(std::stoll(rows[0]["planned"]), static_cast<int64_t>(night1.size()));
  EXPECT_EQ(std::stoll(rows[0]["measured"]), static_cast<int64_t>(night1.size()));
  EXPECT_EQ(std::stoll(rows[0]["ok"]), static_cast<int64_t>(night1.size()));
  EXPECT_EQ(std::stoll(rows[0]["failed"]), 0);
  EXPECT_GE(std::stod(rows[0]["duration_s"]), 0.0);
  EXPECT_NE(rows[0]["finished_at_ms"], "");

  // nightly_change after one night: the values, no previous ones.
  EXPECT_EQ(reader.Int("SELECT count(*) FROM nightly_change"), static_cast<int64_t>(by_key.size()));
  EXPECT_EQ(reader.Int("SELECT count(*) FROM nightly_change WHERE previous_run_id IS NULL"),
            static_cast<int64_t>(by_key.size()));

  // ---- a run that is not nightly: in latest_result and run_summary, not in the nightly views.
  std::vector<v1::Measurement> adhoc;
  v1::RunState state = v1::RUN_STATE_UNSPECIFIED;
  auto adhoc_req = Request("adhoc");
  adhoc_req.clear_variants();
  adhoc_req.add_variants("cublas_bf16");
  const int64_t run2 = Run(adhoc_req, &adhoc, &state);
  ASSERT_EQ(state, v1::RUN_STATE_SUCCEEDED);
  EXPECT_EQ(reader.Int("SELECT count(*) FROM latest_result WHERE run_id = " + std::to_string(run2)),
            static_cast<int64_t>(adhoc.size()));
  EXPECT_EQ(
      reader.Int("SELECT count(*) FROM nightly_history WHERE run_id = " + std::to_string(run2)), 0);
  EXPECT_EQ(reader.Int("SELECT count(*) FROM run_summary"), 2);

  // ---- night 2, watched: the history doubles, latest_result moves on, nightly_change compares.
  std::vector<v1::Measurement> night2;
  Snapshot before2;
  const int64_t run3 = RunWatched(Request("nightly"), &night2, &before2);
  EXPECT_EQ(before2.history, static_cast<int64_t>(night1.size()));
  EXPECT_EQ(reader.Int("SELECT count(*) FROM nightly_history"),
            static_cast<int64_t>(night1.size() + night2.size()));
  EXPECT_EQ(reader.Int("SELECT count(*) FROM latest_result"), static_cast<int64_t>(by_key.size()));
  EXPECT_EQ(
      reader.Int("SELECT count(*) FROM latest_result WHERE run_id <> " + std::to_string(run3)), 0);
  ASSERT_TRUE(reader.Query("SELECT * FROM nightly_change", &rows, &error)) << error;
  ASSERT_EQ(rows.size(), by_key.size());
  for (Row& r : rows) {
    EXPECT_EQ(std::stoll(r["run_id"]), run3);
    EXPECT_EQ(std::stoll(r["previous_run_id"]), run1);
    // The fake worker times the same shape the same way every night.
    EXPECT_NEAR(std::stod(r["slowdown"]), 0.0, 1e-9) << r["variant"];
    EXPECT_NEAR(std::stod(r["tflops"]), std::stod(r["previous_tflops"]), 1e-6);
  }

  // The store's own read-only reader opens the same file at this schema version.
  auto store = db::Store::OpenReadOnly(daemon_->db_path());
  EXPECT_EQ(store->MeasurementsOfRun(run3, false).size(), night2.size());
}

// deploy/nightly.sh with the real ablation-client against the real daemon: the first night
// reports without comparing, the second compares with the first, and the views show both nights.
TEST_F(Dashboard, NightlyScriptWithTheRealClientReportsComparesAndFeedsTheViews) {
  const std::string bin = dir_ + "/bin", reports = dir_ + "/reports";
  std::filesystem::create_directories(bin);
  std::filesystem::create_symlink(TestBinary(CLIENT_PATH), bin + "/ablation-client");
  const char* path = std::getenv("PATH");
  const std::map<std::string, std::string> env = {
      {"PATH", bin + ":" + (path ? path : "/usr/bin:/bin")},
      {"ABLATION_SERVER", daemon_->address()},
      {"REPORT_DIR", reports},
      {"THRESHOLD", "50%"}};

  auto first = RunCommand({"/bin/bash", NIGHTLY_SH}, env, 240);
  ASSERT_EQ(first.exit_code, 0) << first.out << first.err;
  EXPECT_THAT(first.out, ::testing::HasSubstr("first night"));
  auto second = RunCommand({"/bin/bash", NIGHTLY_SH}, env, 240);
  ASSERT_EQ(second.exit_code, 0) << second.out << second.err;
  EXPECT_THAT(second.out, ::testing::HasSubstr("no significant slowdown"));

  int html = 0, compare = 0;
  for (const auto& entry : std::filesystem::directory_iterator(reports)) {
    const std::string name = entry.path().filename();
    if (name.starts_with("nightly-") && name.ends_with(".html")) ++html;
    if (name.ends_with("-compare.txt")) ++compare;
  }
  EXPECT_EQ(html, 2);
  EXPECT_EQ(compare, 1);
  std::ifstream latest(reports + "/latest.html");
  std::string text((std::istreambuf_iterator<char>(latest)), std::istreambuf_iterator<char>());
  EXPECT_THAT(text, ::testing::HasSubstr("<html"));

  Reader reader(daemon_->db_path());
  ASSERT_TRUE(reader.ok()) << reader.error();
  EXPECT_EQ(reader.Int("SELECT count(DISTINCT run_id) FROM nightly_history"), 2);
  EXPECT_GT(reader.Int("SELECT count(*) FROM nightly_change"), 0);
  EXPECT_EQ(reader.Int("SELECT count(*) FROM nightly_change WHERE previous_run_id IS NULL"), 0);
  EXPECT_EQ(reader.Int("SELECT count(*) FROM run_summary WHERE state = 'succeeded' AND "
                       "tags = 'nightly'"),
            2);
}

}  // namespace
}  // namespace ablation::testing
