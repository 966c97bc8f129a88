// Schema v8 from a v4 database built by hand: the dashboard tables (latest_ok, nightly_latest,
// measured_variants) filled from the rows already there, so that the rebuilt latest_result and
// nightly_change name the same measurements the v4 views did; then kept by the triggers.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "db/migrations.h"
#include "db/store.h"
#include "tests/db/db_test_support.h"
#include "tests/db/old_schemas.h"

namespace ablation::db {
namespace {

using testing::RawDb;

// More nightly history than the older tests' rows: three nights of one key, on one GPU.
constexpr const char* kNights = R"sql(
INSERT INTO runs (id, kind, state, device_uuid, created_at_ms, started_at_ms)
VALUES (20, 'ablation', 'succeeded', 'GPU-N', 1700100000000, 1700100000100),
       (21, 'ablation', 'succeeded', 'GPU-N', 1700200000000, 1700200000100),
       (22, 'ablation', 'succeeded', 'GPU-N', 1700300000000, 1700300000100);
INSERT INTO run_tags (run_id, tag) VALUES (20, 'nightly'), (21, 'nightly'), (22, 'nightly');
INSERT INTO measurements (id, run_id, sequence, variant, dtype, m, n, k, status, median_ms,
                          created_at_ms)
VALUES (100, 20, 0, 'abl_night', 'bf16', 4096, 4096, 4096, 'ok', 1.0, 1700100001000),
       (101, 21, 0, 'abl_night', 'bf16', 4096, 4096, 4096, 'ok', 1.1, 1700200001000),
       (102, 21, 1, 'abl_night', 'bf16', 4096, 4096, 4096, 'ok', 1.2, 1700200002000),
       (103, 22, 0, 'abl_night', 'bf16', 4096, 4096, 4096, 'ok', 1.3, 1700300001000);
)sql";

constexpr const char* kChange = "run_id || '/' || coalesce(previous_run_id, '-')";

class MigrationV8Test : public testing::TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    path_ = PathOf("v4.db");
    RawDb raw(path_);
    testing::BuildV4WithRows(raw, kNights);
  }
  // "variant dtype m n k -> measurement" of a view, one line per row, sorted.
  static std::string Keys(RawDb& raw, const std::string& value, const std::string& view) {
    return raw.Text(
        "SELECT group_concat(line, ';') FROM (SELECT variant || ' ' || dtype || ' ' || "
        "m || ' ' || n || ' ' || k || ' -> ' || " +
        value + " AS line FROM " + view + " ORDER BY line)");
  }
  std::string path_;
};

TEST_F(MigrationV8Test, RebuiltViewsNameWhatTheV4ViewsNamed) {
  std::string latest_v4, change_v4;
  {
    RawDb raw(path_);
    latest_v4 = Keys(raw, "measurement_id", "latest_result");
    change_v4 = Keys(raw, kChange, "nightly_change");
  }
  Store::Open(path_);
  RawDb raw(path_);
  EXPECT_EQ(raw.Int("PRAGMA user_version"), kSchemaVersion);
  // Every v4 row had one GPU per key, so keying by device changes nothing here.
  EXPECT_EQ(Keys(raw, "measurement_id", "latest_result"), latest_v4);
  EXPECT_EQ(Keys(raw, kChange, "nightly_change"), change_v4);
  EXPECT_THAT(change_v4, ::testing::HasSubstr("abl_night bf16 4096 4096 4096 -> 22/21"));
  EXPECT_EQ(raw.Int("SELECT previous_measurement_id FROM nightly_latest WHERE variant = "
                    "'abl_night'"),
            102);
  EXPECT_EQ(raw.Int("SELECT count(*) FROM measured_variants"),
            raw.Int("SELECT count(DISTINCT variant) FROM measurements"));
}

TEST_F(MigrationV8Test, TriggersKeepTheTablesAsRowsComeAndGo) {
  Store::Open(path_);
  RawDb raw(path_);
  raw.Exec(R"sql(
INSERT INTO runs (id, kind, state, device_uuid, created_at_ms) VALUES
  (23, 'ablation', 'running', 'GPU-N', 1700400000000);
INSERT INTO run_tags (run_id, tag) VALUES (23, 'nightly');
INSERT INTO measurements (id, run_id, sequence, variant, dtype, m, n, k, status, created_at_ms)
VALUES (104, 23, 0, 'abl_night', 'bf16', 4096, 4096, 4096, 'ok', 1700400001000),
       (105, 23, 1, 'abl_new', 'bf16', 128, 128, 128, 'failed', 1700400002000);
)sql");
  EXPECT_EQ(raw.Text("SELECT run_id || '/' || previous_run_id FROM nightly_change WHERE variant "
                     "= 'abl_night'"),
            "23/22");
  EXPECT_EQ(raw.Int("SELECT count(*) FROM measured_variants WHERE variant = 'abl_new'"), 1);
  EXPECT_EQ(raw.Int("SELECT count(*) FROM latest_result WHERE variant = 'abl_new'"), 0);
  // A run deleted by hand takes its rows out of the views; the one before shows again.
  raw.Exec("PRAGMA foreign_keys = ON; DELETE FROM runs WHERE id = 23");
  EXPECT_EQ(raw.Int("SELECT measurement_id FROM latest_result WHERE variant = 'abl_night'"), 103);
}

}  // namespace
}  // namespace ablation::db
