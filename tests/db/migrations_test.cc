#include "db/migrations.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "db/error.h"
#include "db/store.h"
#include "tests/db/db_test_support.h"

namespace ablation::db {
namespace {

using ::testing::HasSubstr;
using testing::RawDb;
using testing::ReadFileBytes;

class MigrationsTest : public testing::TempDirTest {};

// The v1 schema exactly as v1 of ablationd created it. Kept here as a literal, not taken from
// migrations.cc: the test must fail if someone edits MigrateV1 instead of adding a MigrateV3.
constexpr const char* kV1Schema = R"sql(
CREATE TABLE runs (
  id                   INTEGER PRIMARY KEY,
  state                TEXT    NOT NULL CHECK (state IN ('queued', 'running', 'succeeded',
                                                         'partial', 'failed', 'cancelled')),
  device_index         INTEGER NOT NULL DEFAULT 0,
  device_name          TEXT    NOT NULL DEFAULT '',
  device_uuid          TEXT    NOT NULL DEFAULT '',
  compute_capability   TEXT    NOT NULL DEFAULT '',
  sm_count             INTEGER NOT NULL DEFAULT 0,
  driver_version       TEXT    NOT NULL DEFAULT '',
  cuda_runtime_version TEXT    NOT NULL DEFAULT '',
  cublas_version       TEXT    NOT NULL DEFAULT '',
  memory_bytes         INTEGER NOT NULL DEFAULT 0,
  daemon_version       TEXT    NOT NULL DEFAULT '',
  git_revision         TEXT    NOT NULL DEFAULT '',
  request_json         TEXT    NOT NULL DEFAULT '',
  requested_by         TEXT    NOT NULL DEFAULT '',
  created_at_ms        INTEGER NOT NULL,
  started_at_ms        INTEGER,
  finished_at_ms       INTEGER,
  error                TEXT    NOT NULL DEFAULT '',
  planned              INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX runs_state ON runs (state);

CREATE TABLE measurements (
  id            INTEGER PRIMARY KEY,
  run_id        INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  sequence      INTEGER NOT NULL,
  variant       TEXT    NOT NULL,
  dtype         TEXT    NOT NULL,
  m             INTEGER NOT NULL,
  n             INTEGER NOT NULL,
  k             INTEGER NOT NULL,
  status        TEXT    NOT NULL CHECK (status IN ('ok', 'failed', 'skipped')),
  error         TEXT    NOT NULL DEFAULT '',
  median_ms     REAL    NOT NULL DEFAULT 0,
  mean_ms       REAL    NOT NULL DEFAULT 0,
  stddev_ms     REAL    NOT NULL DEFAULT 0,
  min_ms        REAL    NOT NULL DEFAULT 0,
  max_ms        REAL    NOT NULL DEFAULT 0,
  q1_ms         REAL    NOT NULL DEFAULT 0,
  q3_ms         REAL    NOT NULL DEFAULT 0,
  samples       INTEGER NOT NULL DEFAULT 0,
  noise         REAL    NOT NULL DEFAULT 0,
  tflops        REAL    NOT NULL DEFAULT 0,
  created_at_ms INTEGER NOT NULL
);
CREATE INDEX measurements_run ON measurements (run_id, sequence);
CREATE INDEX measurements_variant ON measurements (variant, dtype, m, n, k);
CREATE INDEX measurements_created ON measurements (created_at_ms);
PRAGMA user_version = 1;
)sql";

constexpr const char* kV1Rows = R"sql(
INSERT INTO runs (id, state, device_index, device_name, device_uuid, compute_capability,
                  sm_count, driver_version, cuda_runtime_version, cublas_version, memory_bytes,
                  daemon_version, git_revision, request_json, requested_by, created_at_ms,
                  started_at_ms, finished_at_ms, error, planned)
VALUES (1, 'succeeded', 0, 'NVIDIA H200', 'GPU-1234', '9.0', 132, '560.35', '12.6', '12.6.4',
        150000000000, '0.0.9', 'abc123', '{"variants":["abl_*"]}', 'alice', 1700000000000,
        1700000001000, 1700000060000, '', 3),
       (2, 'failed', 1, 'NVIDIA H200', 'GPU-5678', '9.0', 132, '560.35', '12.6', '12.6.4',
        150000000000, '0.0.9', 'abc123', '{}', 'bob', 1700000100000, NULL, NULL,
        'worker died', 1);
INSERT INTO measurements (id, run_id, sequence, variant, dtype, m, n, k, status, error,
                          median_ms, mean_ms, stddev_ms, min_ms, max_ms, q1_ms, q3_ms,
                          samples, noise, tflops, created_at_ms)
VALUES (1, 1, 0, 'abl_L0_R0_bl0_s1_sw1', 'bf16', 4096, 4096, 4096, 'ok', '',
        1.25, 1.26, 0.01, 1.2, 1.4, 1.24, 1.27, 50, 0.004, 109.9, 1700000010000),
       (2, 1, 1, 'abl_L1_R1_bl0_s3_sw1', 'bf16', 4096, 4096, 4096, 'ok', '',
        0.75, 0.76, 0.005, 0.74, 0.8, 0.745, 0.755, 80, 0.003, 183.2, 1700000020000),
       (3, 1, 2, 'pipe_cp_async', 'bf16', 4096, 4096, 4096, 'failed', 'illegal address',
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1700000030000);
)sql";

// What v2 of ablationd ran on a v1 database, as a literal for the same reason as kV1Schema.
constexpr const char* kV1ToV2 = R"sql(
ALTER TABLE runs ADD COLUMN kind TEXT NOT NULL DEFAULT 'ablation'
  CHECK (kind IN ('ablation', 'verify'));
ALTER TABLE runs ADD COLUMN clock_policy TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN l2_bytes INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN smem_per_block_optin INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN smem_per_sm INTEGER NOT NULL DEFAULT 0;

ALTER TABLE measurements ADD COLUMN total_seconds REAL;
ALTER TABLE measurements ADD COLUMN l2 TEXT NOT NULL DEFAULT '';
ALTER TABLE measurements ADD COLUMN clock_policy TEXT NOT NULL DEFAULT '';
ALTER TABLE measurements ADD COLUMN verification TEXT NOT NULL DEFAULT '';
ALTER TABLE measurements ADD COLUMN telemetry_available INTEGER NOT NULL DEFAULT 0;
ALTER TABLE measurements ADD COLUMN telemetry_note TEXT NOT NULL DEFAULT '';
ALTER TABLE measurements ADD COLUMN sm_clock_mhz_mean REAL;
ALTER TABLE measurements ADD COLUMN sm_clock_mhz_min REAL;
ALTER TABLE measurements ADD COLUMN sm_clock_mhz_max REAL;
ALTER TABLE measurements ADD COLUMN mem_clock_mhz_mean REAL;
ALTER TABLE measurements ADD COLUMN mem_clock_mhz_min REAL;
ALTER TABLE measurements ADD COLUMN mem_clock_mhz_max REAL;
ALTER TABLE measurements ADD COLUMN power_w_mean REAL;
ALTER TABLE measurements ADD COLUMN power_w_min REAL;
ALTER TABLE measurements ADD COLUMN power_w_max REAL;
ALTER TABLE measurements ADD COLUMN temperature_c_mean REAL;
ALTER TABLE measurements ADD COLUMN temperature_c_min REAL;
ALTER TABLE measurements ADD COLUMN temperature_c_max REAL;
ALTER TABLE measurements ADD COLUMN throttle_reasons TEXT NOT NULL DEFAULT '';
ALTER TABLE measurements ADD COLUMN throttled_samples INTEGER;
ALTER TABLE measurements ADD COLUMN registers_per_thread INTEGER;
ALTER TABLE measurements ADD COLUMN static_smem_bytes INTEGER;
ALTER TABLE measurements ADD COLUMN dynamic_smem_bytes INTEGER;
ALTER TABLE measurements ADD COLUMN local_bytes_per_thread INTEGER;
ALTER TABLE measurements ADD COLUMN max_blocks_per_sm INTEGER;
ALTER TABLE measurements ADD COLUMN max_warps_per_sm INTEGER;
ALTER TABLE measurements ADD COLUMN theoretical_occupancy REAL;
ALTER TABLE measurements ADD COLUMN limiter TEXT NOT NULL DEFAULT '';
ALTER TABLE measurements ADD COLUMN threads_per_block INTEGER;
UPDATE measurements SET telemetry_note = 'not recorded: measured before schema v2';
CREATE INDEX measurements_shape ON measurements (m, n, k, dtype);
CREATE TABLE measurement_samples (
  measurement_id INTEGER PRIMARY KEY REFERENCES measurements (id) ON DELETE CASCADE,
  sample_count   INTEGER NOT NULL,
  sample_ms      BLOB    NOT NULL
);
CREATE TABLE verifications (
  id              INTEGER PRIMARY KEY,
  run_id          INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  variant         TEXT    NOT NULL,
  dtype           TEXT    NOT NULL,
  m               INTEGER NOT NULL,
  n               INTEGER NOT NULL,
  k               INTEGER NOT NULL,
  against         TEXT    NOT NULL DEFAULT '',
  max_abs         REAL    NOT NULL DEFAULT 0,
  max_rel         REAL    NOT NULL DEFAULT 0,
  rel_frobenius   REAL    NOT NULL DEFAULT 0,
  mismatches      INTEGER NOT NULL DEFAULT 0,
  nan_count       INTEGER NOT NULL DEFAULT 0,
  unwritten_count INTEGER NOT NULL DEFAULT 0,
  tolerance       REAL    NOT NULL DEFAULT 0,
  passed          INTEGER NOT NULL CHECK (passed IN (0, 1)),
  error           TEXT    NOT NULL DEFAULT '',
  created_at_ms   INTEGER NOT NULL
);
CREATE INDEX verifications_run ON verifications (run_id);
CREATE INDEX verifications_variant ON verifications (variant, dtype, m, n, k);
CREATE TABLE run_tags (
  run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  tag    TEXT    NOT NULL,
  UNIQUE (run_id, tag)
);
CREATE INDEX run_tags_tag ON run_tags (tag, run_id);
PRAGMA user_version = 2;
)sql";

// A v2 measurement with telemetry, occupancy and samples, as v2 of ablationd wrote it.
constexpr const char* kV2Rows = R"sql(
UPDATE runs SET clock_policy = 'observe', l2_bytes = 62914560 WHERE id = 1;
INSERT INTO run_tags (run_id, tag) VALUES (1, 'nightly');
INSERT INTO measurements (id, run_id, sequence, variant, dtype, m, n, k, status, error,
                          median_ms, mean_ms, stddev_ms, min_ms, max_ms, q1_ms, q3_ms,
                          samples, noise, tflops, created_at_ms, total_seconds, l2,
                          clock_policy, verification, telemetry_available, telemetry_note,
                          sm_clock_mhz_mean, power_w_max, throttle_reasons, throttled_samples,
                          registers_per_thread, max_blocks_per_sm, theoretical_occupancy,
                          limiter, threads_per_block)
VALUES (4, 1, 3, 'abl_L1_R1_bl1_s4_sw1', 'bf16', 4096, 4096, 4096, 'ok', '',
        0.5, 0.51, 0.002, 0.49, 0.55, 0.498, 0.503, 40, 0.002, 274.9, 1700000040000, 0.02,
        'cold', 'observe', 'passed', 1, '', 1980, 690.5, 'sw_power_cap', 3, 128, 2, 0.25,
        'registers', 256);
INSERT INTO measurement_samples (measurement_id, sample_count, sample_ms)
VALUES (4, 1, X'000000000000E03F');
)sql";

TEST_F(MigrationsTest, FreshDatabaseEndsAtLatestVersionInWalMode) {
  const std::string path = PathOf("fresh.db");
  {
    auto store = Store::Open(path);
    EXPECT_FALSE(store->read_only());
  }
  RawDb raw(path);
  EXPECT_EQ(raw.Int("PRAGMA user_version"), kSchemaVersion);
  EXPECT_EQ(kSchemaVersion, 4);
  EXPECT_EQ(raw.Text("PRAGMA journal_mode"), "wal");
  for (const char* table :
       {"runs", "measurements", "measurement_samples", "verifications", "run_tags"}) {
    EXPECT_EQ(raw.Int(std::string("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND "
                                  "name = '") +
                      table + "'"),
              1)
        << table;
  }
  EXPECT_EQ(raw.Int("SELECT count(*) FROM sqlite_master WHERE name = 'run_tags_tag'"), 1);
}

TEST_F(MigrationsTest, ReopeningKeepsVersionAndRows) {
  const std::string path = PathOf("reopen.db");
  int64_t id = 0;
  {
    auto store = Store::Open(path);
    RunRecord run;
    run.tags = {"nightly"};
    id = store->CreateRun(run);
  }
  auto store = Store::Open(path);
  auto run = store->GetRun(id);
  ASSERT_TRUE(run.has_value());
  EXPECT_EQ(run->tags, std::vector<std::string>{"nightly"});
  RawDb raw(path);
  EXPECT_EQ(raw.Int("PRAGMA user_version"), kSchemaVersion);
}

TEST_F(MigrationsTest, V1DatabaseIsMigratedKeepingItsRows) {
  const std::string path = PathOf("v1.db");
  {
    RawDb raw(path);
    raw.Exec(kV1Schema);
    raw.Exec(kV1Rows);
    ASSERT_EQ(raw.Int("PRAGMA user_version"), 1);
  }

  auto store = Store::Open(path);
  {
    RawDb raw(path);
    EXPECT_EQ(raw.Int("PRAGMA user_version"), kSchemaVersion);
    EXPECT_EQ(raw.Text("PRAGMA journal_mode"), "wal");
  }

  auto run = store->GetRun(1);
  ASSERT_TRUE(run.has_value());
  EXPECT_EQ(run->state, "succeeded");
  EXPECT_EQ(run->kind, "ablation");  // the v2 default: v1 had no verify runs
  EXPECT_EQ(run->clock_policy, "");  // unknown for v1 rows
  EXPECT_EQ(run->device.name, "NVIDIA H200");
  EXPECT_EQ(run->device.uuid, "GPU-1234");
  EXPECT_EQ(run->device.compute_capability, "9.0");
  EXPECT_EQ(run->device.sm_count, 132);
  EXPECT_EQ(run->device.driver_version, "560.35");
  EXPECT_EQ(run->device.cuda_runtime_version, "12.6");
  EXPECT_EQ(run->device.cublas_version, "12.6.4");
  EXPECT_EQ(run->device.memory_bytes, 150000000000);
  EXPECT_EQ(run->device.l2_bytes, 0);
  EXPECT_EQ(run->daemon_version, "0.0.9");
  EXPECT_EQ(run->git_revision, "abc123");
  EXPECT_EQ(run->request_json, R"({"variants":["abl_*"]})");
  EXPECT_EQ(run->requested_by, "alice");
  EXPECT_EQ(run->created_at_ms, 1700000000000);
  EXPECT_EQ(run->started_at_ms, 1700000001000);
  EXPECT_EQ(run->finished_at_ms, 1700000060000);
  EXPECT_EQ(run->planned, 3);
  EXPECT_TRUE(run->tags.empty());
  EXPECT_EQ(run->ok, 2);
  EXPECT_EQ(run->failed, 1);

  auto second = store->GetRun(2);
  ASSERT_TRUE(second.has_value());
  EXPECT_EQ(second->state, "failed");
  EXPECT_EQ(second->error, "worker died");
  EXPECT_EQ(second->started_at_ms, 0);  // NULL in v1 reads as "not started"
  EXPECT_EQ(second->device.index, 1);

  const auto measurements = store->MeasurementsOfRun(1, /*include_samples=*/true);
  ASSERT_EQ(measurements.size(), 3u);
  const MeasurementRecord& first = measurements[0];
  EXPECT_EQ(first.id, 1);
  EXPECT_EQ(first.variant, "abl_L0_R0_bl0_s1_sw1");
  EXPECT_EQ(first.dtype, "bf16");
  EXPECT_EQ(first.m, 4096);
  EXPECT_EQ(first.status, "ok");
  EXPECT_DOUBLE_EQ(first.stats.median_ms, 1.25);
  EXPECT_DOUBLE_EQ(first.stats.mean_ms, 1.26);
  EXPECT_DOUBLE_EQ(first.stats.stddev_ms, 0.01);
  EXPECT_DOUBLE_EQ(first.stats.min_ms, 1.2);
  EXPECT_DOUBLE_EQ(first.stats.max_ms, 1.4);
  EXPECT_DOUBLE_EQ(first.stats.q1_ms, 1.24);
  EXPECT_DOUBLE_EQ(first.stats.q3_ms, 1.27);
  EXPECT_EQ(first.stats.samples, 50);
  EXPECT_DOUBLE_EQ(first.stats.noise, 0.004);
  EXPECT_DOUBLE_EQ(first.tflops, 109.9);
  EXPECT_EQ(first.created_at_ms, 1700000010000);
  // v2 columns on a v1 row: empty / not recorded, and saying so.
  EXPECT_DOUBLE_EQ(first.stats.total_seconds, 0);
  EXPECT_EQ(first.l2, "");
  EXPECT_EQ(first.clock_policy, "");
  EXPECT_EQ(first.verification, "");
  EXPECT_FALSE(first.telemetry.available);
  EXPECT_THAT(first.telemetry.note, HasSubstr("before schema v2"));
  EXPECT_TRUE(first.telemetry.throttle_reasons.empty());
  EXPECT_EQ(first.occupancy.registers_per_thread, 0);
  EXPECT_EQ(first.occupancy.limiter, "");
  EXPECT_TRUE(first.sample_ms.empty());
  EXPECT_EQ(measurements[2].error, "illegal address");
  {
    RawDb raw(path);
    EXPECT_EQ(raw.Text("SELECT coalesce(power_w_mean, 'null') FROM measurements WHERE id = 1"),
              "null");
  }

  // The migrated database takes v2 rows, and old and new live side by side.
  MeasurementRecord added;
  added.run_id = 1;
  added.sequence = 3;
  added.variant = "abl_L1_R1_bl1_s4_sw1";
  added.dtype = "bf16";
  added.m = added.n = added.k = 4096;
  added.l2 = "cold";
  added.sample_ms = {0.5, 0.6};
  const int64_t id = store->InsertMeasurement(added);
  EXPECT_EQ(id, 4);
  EXPECT_EQ(store->MeasurementsOfRun(1, true).back().sample_ms, (std::vector<double>{0.5, 0.6}));
  RunRecord tagged;
  tagged.tags = {"nightly"};
  const int64_t run_id = store->CreateRun(tagged);
  EXPECT_EQ(run_id, 3);
  RunFilter filter;
  filter.tag = "nightly";
  ASSERT_EQ(store->ListRuns(filter).runs.size(), 1u);
}

TEST_F(MigrationsTest, V2DatabaseIsMigratedKeepingItsRows) {
  const std::string path = PathOf("v2.db");
  {
    RawDb raw(path);
    raw.Exec(kV1Schema);
    raw.Exec(kV1Rows);
    raw.Exec(kV1ToV2);
    raw.Exec(kV2Rows);
    ASSERT_EQ(raw.Int("PRAGMA user_version"), 2);
  }

  auto store = Store::Open(path);
  {
    RawDb raw(path);
    EXPECT_EQ(raw.Int("PRAGMA user_version"), kSchemaVersion);
    // The new columns are NULL ("not recorded") in every older row, not 0.
    EXPECT_EQ(raw.Int("SELECT count(*) FROM measurements WHERE bytes_per_second IS NULL AND "
                      "fragment_loads_per_second IS NULL"),
              4);
  }

  auto run = store->GetRun(1);
  ASSERT_TRUE(run.has_value());
  EXPECT_EQ(run->clock_policy, "observe");
  EXPECT_EQ(run->device.l2_bytes, 62914560);
  EXPECT_EQ(run->tags, std::vector<std::string>{"nightly"});
  EXPECT_EQ(run->ok, 3);
  EXPECT_EQ(run->failed, 1);

  const auto measurements = store->MeasurementsOfRun(1, /*include_samples=*/true);
  ASSERT_EQ(measurements.size(), 4u);
  EXPECT_THAT(measurements[0].telemetry.note, HasSubstr("before schema v2"));
  const MeasurementRecord& v2 = measurements[3];
  EXPECT_EQ(v2.variant, "abl_L1_R1_bl1_s4_sw1");
  EXPECT_DOUBLE_EQ(v2.tflops, 274.9);
  EXPECT_DOUBLE_EQ(v2.stats.total_seconds, 0.02);
  EXPECT_EQ(v2.l2, "cold");
  EXPECT_EQ(v2.verification, "passed");
  EXPECT_TRUE(v2.telemetry.available);
  EXPECT_DOUBLE_EQ(v2.telemetry.sm_clock_mhz_mean, 1980);
  EXPECT_DOUBLE_EQ(v2.telemetry.power_w_max, 690.5);
  EXPECT_EQ(v2.telemetry.throttle_reasons, std::vector<std::string>{"sw_power_cap"});
  EXPECT_EQ(v2.telemetry.throttled_samples, 3);
  EXPECT_EQ(v2.occupancy.registers_per_thread, 128);
  EXPECT_EQ(v2.occupancy.limiter, "registers");
  EXPECT_EQ(v2.sample_ms, std::vector<double>{0.5});
  for (const MeasurementRecord& m : measurements) {
    EXPECT_EQ(m.bytes_per_second, 0) << m.id;
    EXPECT_EQ(m.fragment_loads_per_second, 0) << m.id;
  }

  // v3 rows with the new rates live beside the old ones.
  MeasurementRecord added;
  added.run_id = 1;
  added.sequence = 4;
  added.variant = "smem2reg_R1_bl0_sw1";
  added.dtype = "bf16";
  added.m = added.n = added.k = 4096;
  added.bytes_per_second = 1.5e13;
  added.fragment_loads_per_second = 2.5e11;
  const int64_t id = store->InsertMeasurement(added);
  EXPECT_EQ(id, 5);
  const MeasurementRecord back = store->MeasurementsOfRun(1, false).back();
  EXPECT_DOUBLE_EQ(back.bytes_per_second, 1.5e13);
  EXPECT_DOUBLE_EQ(back.fragment_loads_per_second, 2.5e11);
  EXPECT_DOUBLE_EQ(back.tflops, 0);
}

TEST_F(MigrationsTest, NewerDatabaseIsRefusedAndLeftUntouched) {
  const std::string path = PathOf("newer.db");
  {
    RawDb raw(path);
    raw.Exec("CREATE TABLE future (x INTEGER); INSERT INTO future VALUES (42);");
    raw.Exec("PRAGMA user_version = 7");
  }
  const std::string before = ReadFileBytes(path);
  ASSERT_FALSE(before.empty());

  try {
    Store::Open(path);
    FAIL() << "a newer database was opened";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Error::Code::kIncompatible);
    EXPECT_THAT(e.what(), HasSubstr("schema version 7"));
    EXPECT_THAT(e.what(), HasSubstr("version " + std::to_string(kSchemaVersion)));
    EXPECT_THAT(e.what(), HasSubstr(path));
  }
  try {
    Store::OpenReadOnly(path);
    FAIL() << "a newer database was opened read-only";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Error::Code::kIncompatible);
    EXPECT_THAT(e.what(), HasSubstr("schema version 7"));
  }

  EXPECT_EQ(ReadFileBytes(path), before);
  EXPECT_FALSE(std::filesystem::exists(path + "-wal"));
  RawDb raw(path);
  EXPECT_EQ(raw.Int("PRAGMA user_version"), 7);
  EXPECT_EQ(raw.Text("PRAGMA journal_mode"), "delete");
}

TEST_F(MigrationsTest, ReadOnlyReaderRefusesAnOlderOrMissingDatabase) {
  const std::string path = PathOf("v1.db");
  {
    RawDb raw(path);
    raw.Exec(kV1Schema);
  }
  try {
    Store::OpenReadOnly(path);
    FAIL() << "a v1 database was opened read-only";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Error::Code::kIncompatible);
    EXPECT_THAT(e.what(), HasSubstr("schema version 1"));
  }
  RawDb raw(path);
  EXPECT_EQ(raw.Int("PRAGMA user_version"), 1);

  // One version behind is as unreadable: v2 has no rate columns.
  const std::string v2 = PathOf("v2.db");
  {
    RawDb old(v2);
    old.Exec(kV1Schema);
    old.Exec(kV1ToV2);
  }
  try {
    Store::OpenReadOnly(v2);
    FAIL() << "a v2 database was opened read-only";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Error::Code::kIncompatible);
    EXPECT_THAT(e.what(), HasSubstr("schema version 2"));
    EXPECT_THAT(e.what(), HasSubstr("version " + std::to_string(kSchemaVersion)));
  }

  const std::string missing = PathOf("missing.db");
  try {
    Store::OpenReadOnly(missing);
    FAIL() << "a missing database was opened";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr(missing));
  }
  EXPECT_FALSE(std::filesystem::exists(missing));
}

TEST_F(MigrationsTest, NotADatabaseIsRefusedNamingThePath) {
  const std::string path = PathOf("garbage.db");
  {
    std::ofstream out(path, std::ios::binary);
    out << std::string(4096, 'x');
  }
  try {
    Store::Open(path);
    FAIL() << "garbage opened";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr(path));
    EXPECT_THAT(e.what(), HasSubstr("not a database"));
  }
}

}  // namespace
}  // namespace ablation::db
