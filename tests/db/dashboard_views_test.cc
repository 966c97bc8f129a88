// The dashboard views of schema v4, unchanged in v5 (db/schema.md), over rows written through
// db::Store, read through a read-only sqlite3 connection: which rows each view keeps, and their
// numbers.
#include <sqlite3.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "db/migrations.h"
#include "db/store.h"

namespace ablation::db {
namespace {

using Row = std::map<std::string, std::string>;

class ReadOnlyDb {
 public:
  explicit ReadOnlyDb(const std::string& path) {
    EXPECT_EQ(sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  }
  ~ReadOnlyDb() { sqlite3_close_v2(db_); }
  std::vector<Row> Rows(const std::string& sql) {
    std::vector<Row> rows;
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &stmt, nullptr) != SQLITE_OK) {
      ADD_FAILURE() << sqlite3_errmsg(db_) << " in: " << sql;
      return rows;
    }
    int rc;
    while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
      Row row;
      for (int i = 0; i < sqlite3_column_count(stmt); ++i) {
        const unsigned char* text = sqlite3_column_text(stmt, i);
        row[sqlite3_column_name(stmt, i)] = text ? reinterpret_cast<const char*>(text) : "NULL";
      }
      rows.push_back(row);
    }
    EXPECT_EQ(rc, SQLITE_DONE) << sqlite3_errmsg(db_) << " in: " << sql;
    sqlite3_finalize(stmt);
    return rows;
  }

 private:
  sqlite3* db_ = nullptr;
};

class DashboardViews : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("dashboard-views-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
    path_ = (dir_ / "results.db").string();
    store_ = Store::Open(path_);
  }
  void TearDown() override {
    store_.reset();
    std::filesystem::remove_all(dir_);
  }

  int64_t AddRun(std::vector<std::string> tags, int64_t day, const std::string& uuid = "GPU-A") {
    v1::Run run;
    run.set_state(v1::RUN_STATE_QUEUED);
    run.set_kind(v1::RUN_KIND_ABLATION);
    for (std::string& tag : tags) run.add_tags(std::move(tag));
    run.set_planned(3);
    run.set_created_at_ms(kDay * day);
    const int64_t id = store_->CreateRun(run);
    v1::DeviceIdentity device;
    device.set_name("H200 " + uuid);
    device.set_uuid(uuid);
    store_->MarkRunStarted(id, device, kDay * day + 1000);
    return id;
  }
  int64_t AddMeasurement(int64_t run, const std::string& variant, double median_ms,
                         v1::MeasurementStatus status = v1::MEASUREMENT_STATUS_OK, int64_t m = 4096,
                         v1::Regime regime = v1::REGIME_UNSPECIFIED,
                         v1::L2Mode l2 = v1::L2_MODE_UNSPECIFIED) {
    v1::Measurement r;
    r.set_regime(regime);
    r.set_l2(l2);
    r.set_run_id(run);
    r.set_sequence(seq_++);
    r.set_variant(variant);
    r.set_dtype("bf16");
    r.mutable_shape()->set_m(m);
    r.mutable_shape()->set_n(m);
    r.mutable_shape()->set_k(m);
    r.set_status(status);
    r.mutable_stats()->set_median_ms(median_ms);
    r.mutable_stats()->set_noise(0.002);
    r.mutable_stats()->set_samples(10);
    r.set_tflops(median_ms > 0 ? 2.0 * m * m * m / (median_ms * 1e-3) / 1e12 : 0);
    r.set_created_at_ms(kDay * 100 + seq_);
    return store_->InsertMeasurement(r);
  }

  static constexpr int64_t kDay = 86400000;
  std::filesystem::path dir_;
  std::string path_;
  std::unique_ptr<Store> store_;
  int seq_ = 0;
};

TEST_F(DashboardViews, ExistInAFreshDatabase) {
  EXPECT_GE(kSchemaVersion, 5);  // v5 to v7 left the v4 views as they were
  ReadOnlyDb db(path_);
  auto rows = db.Rows("SELECT name FROM sqlite_master WHERE type = 'view' ORDER BY name");
  std::vector<std::string> names;
  for (auto& r : rows) names.push_back(r["name"]);
  // v9 added latest_counters (hardware counters), v10 run_cost.
  EXPECT_EQ(names, (std::vector<std::string>{"latest_counters", "latest_result", "nightly_change",
                                             "nightly_history", "run_cost", "run_summary"}));
  for (const char* view : {"latest_counters", "latest_result", "nightly_change", "nightly_history",
                           "run_cost", "run_summary"})
    EXPECT_EQ(db.Rows(std::string("SELECT * FROM ") + view).size(), 0u) << view;
}

TEST_F(DashboardViews, RunCostSumsWhereEachRunsWallTimeWent) {
  const int64_t run = AddRun({}, 1);
  for (int i = 0; i < 3; ++i) {
    v1::Measurement m;
    m.set_run_id(run);
    m.set_sequence(i);
    m.set_variant("abl_L1_R1_bl0_s3_sw1");
    m.set_dtype("bf16");
    m.set_status(v1::MEASUREMENT_STATUS_OK);
    m.mutable_stats()->set_total_seconds(0.25);
    m.set_wall_seconds(0.3);
    v1::Cost* c = m.mutable_cost();
    c->set_worker_seconds(0.28);
    c->set_setup_seconds(i == 0 ? 0.02 : 0.001);
    c->set_warmup_seconds(i == 0 ? 0.1 : 0.005);
    c->set_sampling_seconds(0.26);
    c->set_inputs_reused(i > 0);
    c->set_settle_seconds(0.05);  // v11: the window's settling, shared by its rows
    store_->InsertMeasurement(m);
  }
  AddMeasurement(run, "cublas_bf16", 0.2, v1::MEASUREMENT_STATUS_FAILED);  // no cost: NULLs
  store_->FinishRun(run, v1::RUN_STATE_PARTIAL, "", kDay + 1000 + 1200);
  AddRun({}, 2);  // not finished, nothing measured
  ReadOnlyDb db(path_);
  auto rows = db.Rows(
      "SELECT run_id, measurements, run_seconds, round(sampled_gpu_seconds, 6) AS gpu, "
      "round(wall_seconds, 6) AS wall, round(worker_seconds, 6) AS worker, "
      "round(setup_seconds, 6) AS setup, round(warmup_seconds, 6) AS warmup, "
      "round(sampling_seconds, 6) AS sampling, verify_seconds, inputs_reused, "
      "round(settle_seconds, 6) AS settle, cool_seconds, "
      "round(run_per_gpu_second, 6) AS cost FROM run_cost ORDER BY run_id");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0]["measurements"], "4");
  EXPECT_EQ(rows[0]["run_seconds"], "1.2");
  EXPECT_EQ(rows[0]["gpu"], "0.75");
  EXPECT_EQ(rows[0]["wall"], "0.9");
  EXPECT_EQ(rows[0]["worker"], "0.84");
  EXPECT_EQ(rows[0]["setup"], "0.022");
  EXPECT_EQ(rows[0]["warmup"], "0.11");
  EXPECT_EQ(rows[0]["sampling"], "0.78");
  EXPECT_EQ(rows[0]["verify_seconds"], "NULL");  // nothing verified
  EXPECT_EQ(rows[0]["inputs_reused"], "2");
  EXPECT_EQ(rows[0]["settle"], "0.15");
  EXPECT_EQ(rows[0]["cool_seconds"], "NULL");  // not a burst run
  EXPECT_EQ(rows[0]["cost"], "1.6");
  EXPECT_EQ(rows[1]["measurements"], "0");
  EXPECT_EQ(rows[1]["run_seconds"], "NULL");
  EXPECT_EQ(rows[1]["cost"], "NULL");
}

TEST_F(DashboardViews, LatestResultKeepsTheNewestOkRowPerVariantDtypeShapeAndGpu) {
  const int64_t r1 = AddRun({"nightly"}, 1);
  AddMeasurement(r1, "a", 1.0);
  AddMeasurement(r1, "b", 2.0);
  AddMeasurement(r1, "b", 2.0, v1::MEASUREMENT_STATUS_OK, 1024);  // another shape: its own row
  const int64_t r2 = AddRun({}, 2, "GPU-B");
  const int64_t a2 = AddMeasurement(r2, "a", 0.9);  // GPU-B's own row; GPU-A's stays
  AddMeasurement(r2, "b", 0,
                 v1::MEASUREMENT_STATUS_FAILED);  // a failure does not hide b's last good numbers
  store_->FinishRun(r2, v1::RUN_STATE_PARTIAL, "", kDay * 2 + 5000);
  const int64_t r3 = AddRun({}, 3);
  const int64_t a3 = AddMeasurement(r3, "a", 1.2);  // newer on GPU-A: replaces r1's

  ReadOnlyDb db(path_);
  auto rows = db.Rows("SELECT * FROM latest_result ORDER BY variant, m, device_uuid");
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[0]["variant"], "a");
  EXPECT_EQ(rows[0]["device_uuid"], "GPU-A");
  EXPECT_EQ(rows[0]["measurement_id"], std::to_string(a3));
  EXPECT_EQ(rows[1]["variant"], "a");
  EXPECT_EQ(rows[1]["run_id"], std::to_string(r2));
  EXPECT_EQ(rows[1]["measurement_id"], std::to_string(a2));
  EXPECT_EQ(rows[1]["device_uuid"], "GPU-B");
  EXPECT_EQ(rows[1]["median_ms"], "0.9");
  EXPECT_EQ(rows[1]["bytes_per_second"], "NULL");
  EXPECT_EQ(rows[2]["variant"], "b");
  EXPECT_EQ(rows[2]["m"], "1024");
  EXPECT_EQ(rows[3]["variant"], "b");
  EXPECT_EQ(rows[3]["m"], "4096");
  EXPECT_EQ(rows[3]["run_id"], std::to_string(r1));
  EXPECT_EQ(rows[3]["time"], "1970-04-11T00:00:00.002Z");  // created_at_ms = 100 days + 2 ms
}

TEST_F(DashboardViews, NightlyHistoryAndChangeFollowOnlyNightlyRunsPerGpu) {
  const int64_t n1 = AddRun({"nightly"}, 1);
  AddMeasurement(n1, "a", 1.0);
  AddMeasurement(n1, "b", 2.0);
  const int64_t adhoc = AddRun({"adhoc"}, 2);
  AddMeasurement(adhoc, "a", 5.0);  // not nightly: neither in the history nor a "previous"
  const int64_t n2 = AddRun({"nightly", "release"}, 3);
  AddMeasurement(n2, "a", 1.1);
  AddMeasurement(n2, "b", 0, v1::MEASUREMENT_STATUS_FAILED);
  AddMeasurement(n2, "c", 3.0);
  const int64_t other_gpu = AddRun({"nightly"}, 3, "GPU-B");
  AddMeasurement(other_gpu, "a", 0.5);  // its own series

  ReadOnlyDb db(path_);
  auto history = db.Rows("SELECT * FROM nightly_history ORDER BY measurement_id");
  ASSERT_EQ(history.size(), 5u);  // n1: a b, n2: a c, other_gpu: a
  for (auto& r : history) EXPECT_NE(r["run_id"], std::to_string(adhoc));
  EXPECT_EQ(history[0]["run_started_at_ms"], std::to_string(kDay + 1000));
  EXPECT_EQ(history[0]["time"], "1970-01-02T00:00:01.000Z");
  EXPECT_EQ(history[0]["run_state"], "running");

  auto change = db.Rows("SELECT * FROM nightly_change ORDER BY variant, device_uuid");
  ASSERT_EQ(change.size(), 4u);  // a@A, a@B, b@A, c@A
  EXPECT_EQ(change[0]["variant"], "a");
  EXPECT_EQ(change[0]["device_uuid"], "GPU-A");
  EXPECT_EQ(change[0]["run_id"], std::to_string(n2));
  EXPECT_EQ(change[0]["previous_run_id"], std::to_string(n1));
  EXPECT_NEAR(std::stod(change[0]["slowdown"]), 0.1, 1e-12);
  EXPECT_EQ(change[1]["device_uuid"], "GPU-B");
  EXPECT_EQ(change[1]["previous_run_id"], "NULL");
  EXPECT_EQ(change[1]["slowdown"], "NULL");
  EXPECT_EQ(change[2]["variant"], "b");  // failed in n2: its newest ok night is n1
  EXPECT_EQ(change[2]["run_id"], std::to_string(n1));
  EXPECT_EQ(change[2]["previous_run_id"], "NULL");
  EXPECT_EQ(change[3]["variant"], "c");
  EXPECT_EQ(change[3]["previous_run_id"], "NULL");
}

TEST_F(DashboardViews, EachRegimeIsASeriesOfItsOwn) {
  // v11: a burst figure never replaces a sustained one, nor is compared with it.
  const int64_t n1 = AddRun({"nightly"}, 1);
  AddMeasurement(n1, "a", 1.00, v1::MEASUREMENT_STATUS_OK, 4096, v1::REGIME_SUSTAINED);
  const int64_t n2 = AddRun({"nightly"}, 2);
  AddMeasurement(n2, "a", 0.85, v1::MEASUREMENT_STATUS_OK, 4096, v1::REGIME_BURST);
  const int64_t n3 = AddRun({"nightly"}, 3);
  const int64_t s3 =
      AddMeasurement(n3, "a", 1.02, v1::MEASUREMENT_STATUS_OK, 4096, v1::REGIME_SUSTAINED);
  AddMeasurement(n3, "b", 2.0);  // stored before regimes: a series of its own, regime ''

  ReadOnlyDb db(path_);
  auto latest = db.Rows("SELECT * FROM latest_result ORDER BY variant, regime");
  ASSERT_EQ(latest.size(), 3u);
  EXPECT_EQ(latest[0]["regime"], "burst");
  EXPECT_EQ(latest[0]["run_id"], std::to_string(n2));
  EXPECT_EQ(latest[1]["regime"], "sustained");
  EXPECT_EQ(latest[1]["measurement_id"], std::to_string(s3));
  EXPECT_EQ(latest[2]["regime"], "");

  auto change = db.Rows("SELECT * FROM nightly_change WHERE variant = 'a' ORDER BY regime");
  ASSERT_EQ(change.size(), 2u);
  EXPECT_EQ(change[0]["regime"], "burst");
  EXPECT_EQ(change[0]["previous_run_id"], "NULL") << "no earlier burst night";
  EXPECT_EQ(change[1]["regime"], "sustained");
  EXPECT_EQ(change[1]["run_id"], std::to_string(n3));
  EXPECT_EQ(change[1]["previous_run_id"], std::to_string(n1)) << "n2 was burst: skipped";
  EXPECT_NEAR(std::stod(change[1]["slowdown"]), 0.02, 1e-12);
  auto history = db.Rows("SELECT regime FROM nightly_history ORDER BY measurement_id");
  ASSERT_EQ(history.size(), 4u);
  EXPECT_EQ(history[1]["regime"], "burst");
}

TEST_F(DashboardViews, EachL2ModeIsASeriesOfItsOwn) {
  // v23: a night measured with the L2 hot never replaces a cold one, nor is compared with it.
  constexpr auto kOk = v1::MEASUREMENT_STATUS_OK;
  constexpr auto kBurst = v1::REGIME_BURST;
  const int64_t n1 = AddRun({"nightly"}, 1);
  AddMeasurement(n1, "a", 1.00, kOk, 4096, kBurst, v1::L2_MODE_COLD);
  const int64_t n2 = AddRun({"nightly"}, 2);
  const int64_t h2 = AddMeasurement(n2, "a", 0.60, kOk, 4096, kBurst, v1::L2_MODE_HOT);
  const int64_t n3 = AddRun({"nightly"}, 3);
  const int64_t c3 = AddMeasurement(n3, "a", 1.03, kOk, 4096, kBurst, v1::L2_MODE_COLD);

  ReadOnlyDb db(path_);
  auto latest = db.Rows("SELECT * FROM latest_result ORDER BY l2");
  ASSERT_EQ(latest.size(), 2u);
  EXPECT_EQ(latest[0]["l2"], "cold");
  EXPECT_EQ(latest[0]["measurement_id"], std::to_string(c3));
  EXPECT_EQ(latest[1]["l2"], "hot");
  EXPECT_EQ(latest[1]["measurement_id"], std::to_string(h2));

  auto change = db.Rows("SELECT * FROM nightly_change ORDER BY l2");
  ASSERT_EQ(change.size(), 2u);
  EXPECT_EQ(change[0]["l2"], "cold");
  EXPECT_EQ(change[0]["run_id"], std::to_string(n3));
  EXPECT_EQ(change[0]["previous_run_id"], std::to_string(n1)) << "n2 was hot: skipped";
  EXPECT_NEAR(std::stod(change[0]["slowdown"]), 0.03, 1e-12);
  EXPECT_EQ(change[1]["l2"], "hot");
  EXPECT_EQ(change[1]["previous_run_id"], "NULL") << "no earlier hot night";
  auto history = db.Rows("SELECT l2 FROM nightly_history ORDER BY measurement_id");
  ASSERT_EQ(history.size(), 3u);
  EXPECT_EQ(history[1]["l2"], "hot");
}

TEST_F(DashboardViews, RunSummaryCountsProgressAndOutcome) {
  const int64_t r = AddRun({"nightly", "b-tag", "a-tag"}, 1);
  AddMeasurement(r, "a", 1.0);
  ReadOnlyDb db(path_);
  auto rows = db.Rows("SELECT * FROM run_summary");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0]["state"], "running");
  EXPECT_EQ(rows[0]["tags"], "a-tag,b-tag,nightly");
  EXPECT_EQ(rows[0]["planned"], "3");
  EXPECT_EQ(rows[0]["measured"], "1");
  EXPECT_EQ(rows[0]["duration_s"], "NULL");

  AddMeasurement(r, "b", 0, v1::MEASUREMENT_STATUS_FAILED);
  AddMeasurement(r, "c", 0, v1::MEASUREMENT_STATUS_SKIPPED);
  v1::VerifyResult v;
  v.set_run_id(r);
  v.set_variant("a");
  v.set_dtype("bf16");
  v.set_passed(false);
  store_->InsertVerification(v);
  store_->FinishRun(r, v1::RUN_STATE_PARTIAL, "1 measurement failed", kDay + 31000);
  rows = db.Rows("SELECT * FROM run_summary");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0]["state"], "partial");
  EXPECT_EQ(rows[0]["measured"], "3");
  EXPECT_EQ(rows[0]["ok"], "1");
  EXPECT_EQ(rows[0]["failed"], "1");
  EXPECT_EQ(rows[0]["skipped"], "1");
  EXPECT_EQ(rows[0]["verified"], "1");
  EXPECT_EQ(rows[0]["verify_failed"], "1");
  EXPECT_EQ(rows[0]["duration_s"], "30.0");
  EXPECT_NEAR(std::stod(rows[0]["best_tflops"]), 2.0 * 4096.0 * 4096 * 4096 / 1e-3 / 1e12, 1e-6);
  EXPECT_EQ(rows[0]["error"], "1 measurement failed");
}

}  // namespace
}  // namespace ablation::db
