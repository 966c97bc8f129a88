// Schema v23 from a v4 database built by hand, with nights measured with the L2 cold and hot: the
// dashboard tables made again from the rows, keyed by the L2 mode too, so that nightly_change
// never sets a hot night beside a cold one and latest_result keeps a row per mode; then kept by the
// triggers as rows come and go.
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

// Four nights of one key on one GPU: cold, hot, cold, hot (the hot nights 40% faster: the L2
// holds the inputs), and a run that is no night, cold, after them all.
constexpr const char* kL2Nights = R"sql(
INSERT INTO runs (id, kind, state, device_uuid, created_at_ms, started_at_ms)
VALUES (30, 'ablation', 'succeeded', 'GPU-L', 1700100000000, 1700100000100),
       (31, 'ablation', 'succeeded', 'GPU-L', 1700200000000, 1700200000100),
       (32, 'ablation', 'succeeded', 'GPU-L', 1700300000000, 1700300000100),
       (33, 'ablation', 'succeeded', 'GPU-L', 1700400000000, 1700400000100),
       (34, 'ablation', 'succeeded', 'GPU-L', 1700500000000, 1700500000100);
INSERT INTO run_tags (run_id, tag) VALUES (30, 'nightly'), (31, 'nightly'), (32, 'nightly'),
                                          (33, 'nightly');
INSERT INTO measurements (id, run_id, sequence, variant, dtype, m, n, k, status, median_ms, l2,
                          created_at_ms)
VALUES (200, 30, 0, 'abl_l2', 'bf16', 4096, 4096, 4096, 'ok', 1.00, 'cold', 1700100001000),
       (201, 31, 0, 'abl_l2', 'bf16', 4096, 4096, 4096, 'ok', 0.60, 'hot', 1700200001000),
       (202, 32, 0, 'abl_l2', 'bf16', 4096, 4096, 4096, 'ok', 1.02, 'cold', 1700300001000),
       (203, 33, 0, 'abl_l2', 'bf16', 4096, 4096, 4096, 'ok', 0.61, 'hot', 1700400001000),
       (204, 34, 0, 'abl_l2', 'bf16', 4096, 4096, 4096, 'ok', 1.01, 'cold', 1700500001000);
)sql";

class MigrationV23Test : public testing::TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    path_ = PathOf("v4.db");
    RawDb raw(path_);
    testing::BuildV4WithRows(raw, kL2Nights);
  }
  // "l2: run/previous run" of nightly_change's rows of abl_l2, by mode.
  static std::string Change(RawDb& raw) {
    return raw.Text(
        "SELECT group_concat(line, ';') FROM (SELECT l2 || ': ' || run_id || '/' || "
        "coalesce(previous_run_id, '-') AS line FROM nightly_change WHERE variant = 'abl_l2' "
        "ORDER BY line)");
  }
  std::string path_;
};

TEST_F(MigrationV23Test, EachL2ModeHasItsOwnNightBefore) {
  {
    // Before: one key for both modes, so the newest hot night stood beside the cold one before
    // it, and the L2 read as a 40% speed-up.
    RawDb raw(path_);
    EXPECT_EQ(raw.Text("SELECT run_id || '/' || previous_run_id FROM nightly_change WHERE "
                       "variant = 'abl_l2'"),
              "33/32");
  }
  Store::Open(path_);
  RawDb raw(path_);
  EXPECT_EQ(raw.Int("PRAGMA user_version"), kSchemaVersion);
  EXPECT_EQ(Change(raw), "cold: 32/30;hot: 33/31");
  EXPECT_EQ(raw.Text("SELECT group_concat(l2 || '=' || printf('%.4f', slowdown), ',') FROM "
                     "(SELECT * FROM nightly_change WHERE variant = 'abl_l2' ORDER BY l2)"),
            "cold=0.0200,hot=0.0167");
  // latest_result: the newest of each mode, the run that is no night included.
  EXPECT_EQ(raw.Text("SELECT group_concat(l2 || '=' || measurement_id, ',') FROM (SELECT * FROM "
                     "latest_result WHERE variant = 'abl_l2' ORDER BY l2)"),
            "cold=204,hot=203");
  // The older rows, each of one mode per key, name what they named before.
  EXPECT_EQ(raw.Int("SELECT count(*) FROM latest_result"),
            raw.Int("SELECT count(*) FROM (SELECT DISTINCT ms.variant, ms.dtype, ms.m, ms.n, "
                    "ms.k, r.device_uuid, ms.regime, ms.l2 FROM measurements AS ms JOIN runs AS r "
                    "ON r.id = ms.run_id WHERE ms.status = 'ok')"));
}

TEST_F(MigrationV23Test, TriggersKeepEachModeApart) {
  Store::Open(path_);
  RawDb raw(path_);
  raw.Exec(R"sql(
INSERT INTO runs (id, kind, state, device_uuid, created_at_ms) VALUES
  (35, 'ablation', 'running', 'GPU-L', 1700600000000);
INSERT INTO run_tags (run_id, tag) VALUES (35, 'nightly');
INSERT INTO measurements (id, run_id, sequence, variant, dtype, m, n, k, status, median_ms, l2,
                          created_at_ms)
VALUES (205, 35, 0, 'abl_l2', 'bf16', 4096, 4096, 4096, 'ok', 1.03, 'cold', 1700600001000);
)sql");
  // A cold night follows the cold night before it, not the hot one in between.
  EXPECT_EQ(Change(raw), "cold: 35/32;hot: 33/31");
  EXPECT_EQ(raw.Int("SELECT measurement_id FROM latest_result WHERE variant = 'abl_l2' AND l2 = "
                    "'hot'"),
            203);
  // The hot night's row deleted by hand: the hot row of latest_result falls back to the hot one
  // before it, the cold row stays.
  raw.Exec("DELETE FROM measurements WHERE id = 203");
  EXPECT_EQ(raw.Text("SELECT group_concat(l2 || '=' || measurement_id, ',') FROM (SELECT * FROM "
                     "latest_result WHERE variant = 'abl_l2' ORDER BY l2)"),
            "cold=205,hot=201");
  EXPECT_EQ(Change(raw), "cold: 35/32");
}

}  // namespace
}  // namespace ablation::db
