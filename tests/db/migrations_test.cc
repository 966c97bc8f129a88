#include "db/migrations.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "db/error.h"
#include "db/store.h"
#include "tests/db/db_test_support.h"
#include "tests/db/old_schemas.h"
#include "tests/db/store_test_support.h"

namespace ablation::db {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::RawDb;
using testing::ReadFileBytes;
using namespace testing;  // the old schemas' literals

class MigrationsTest : public testing::TempDirTest {};

TEST_F(MigrationsTest, FreshDatabaseEndsAtLatestVersionInWalMode) {
  const std::string path = PathOf("fresh.db");
  {
    auto store = Store::Open(path);
    EXPECT_FALSE(store->read_only());
  }
  RawDb raw(path);
  EXPECT_EQ(raw.Int("PRAGMA user_version"), kSchemaVersion);
  EXPECT_EQ(kSchemaVersion, 23);
  EXPECT_EQ(raw.Text("PRAGMA journal_mode"), "wal");
  for (const char* table : {"runs", "measurements", "measurement_samples", "verifications",
                            "run_tags", "library_choices"}) {
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
    v1::Run run = BareRun();
    run.add_tags("nightly");
    id = store->CreateRun(run);
  }
  auto store = Store::Open(path);
  auto run = store->GetRun(id);
  ASSERT_TRUE(run.has_value());
  EXPECT_THAT(run->tags(), ElementsAre("nightly"));
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
  EXPECT_EQ(run->state(), v1::RUN_STATE_SUCCEEDED);
  EXPECT_EQ(run->kind(), v1::RUN_KIND_ABLATION);  // the v2 default: v1 had no verify runs
  EXPECT_EQ(run->clock_policy(), "");             // unknown for v1 rows
  EXPECT_EQ(run->device().name(), "NVIDIA H200");
  EXPECT_EQ(run->device().uuid(), "GPU-1234");
  EXPECT_EQ(run->device().compute_capability(), "9.0");
  EXPECT_EQ(run->device().sm_count(), 132);
  EXPECT_EQ(run->device().driver_version(), "560.35");
  EXPECT_EQ(run->device().cuda_runtime_version(), "12.6");
  EXPECT_EQ(run->device().cublas_version(), "12.6.4");
  EXPECT_EQ(run->device().memory_bytes(), 150000000000);
  EXPECT_EQ(run->device().l2_bytes(), 0);
  EXPECT_EQ(run->daemon_version(), "0.0.9");
  EXPECT_EQ(run->git_revision(), "abc123");
  EXPECT_EQ(run->request_json(), R"({"variants":["abl_*"]})");
  EXPECT_EQ(run->requested_by(), "alice");
  EXPECT_EQ(run->created_at_ms(), 1700000000000);
  EXPECT_EQ(run->started_at_ms(), 1700000001000);
  EXPECT_EQ(run->finished_at_ms(), 1700000060000);
  EXPECT_EQ(run->planned(), 3);
  EXPECT_TRUE(run->tags().empty());
  EXPECT_EQ(run->ok(), 2);
  EXPECT_EQ(run->failed(), 1);

  auto second = store->GetRun(2);
  ASSERT_TRUE(second.has_value());
  EXPECT_EQ(second->state(), v1::RUN_STATE_FAILED);
  EXPECT_EQ(second->error(), "worker died");
  EXPECT_EQ(second->started_at_ms(), 0);  // NULL in v1 reads as "not started"
  EXPECT_EQ(second->device().index(), 1);

  const auto measurements = store->MeasurementsOfRun(1, /*include_samples=*/true);
  ASSERT_EQ(measurements.size(), 3u);
  const v1::Measurement& first = measurements[0];
  EXPECT_EQ(first.id(), 1);
  EXPECT_EQ(first.variant(), "abl_L0_R0_bl0_s1_sw1");
  EXPECT_EQ(first.dtype(), "bf16");
  EXPECT_EQ(first.shape().m(), 4096);
  EXPECT_EQ(first.status(), v1::MEASUREMENT_STATUS_OK);
  EXPECT_DOUBLE_EQ(first.stats().median_ms(), 1.25);
  EXPECT_DOUBLE_EQ(first.stats().mean_ms(), 1.26);
  EXPECT_DOUBLE_EQ(first.stats().stddev_ms(), 0.01);
  EXPECT_DOUBLE_EQ(first.stats().min_ms(), 1.2);
  EXPECT_DOUBLE_EQ(first.stats().max_ms(), 1.4);
  EXPECT_DOUBLE_EQ(first.stats().q1_ms(), 1.24);
  EXPECT_DOUBLE_EQ(first.stats().q3_ms(), 1.27);
  EXPECT_EQ(first.stats().samples(), 50);
  EXPECT_DOUBLE_EQ(first.stats().noise(), 0.004);
  EXPECT_DOUBLE_EQ(first.tflops(), 109.9);
  EXPECT_EQ(first.created_at_ms(), 1700000010000);
  // v2 columns on a v1 row: empty / not recorded, and saying so.
  EXPECT_DOUBLE_EQ(first.stats().total_seconds(), 0);
  EXPECT_EQ(first.l2(), v1::L2_MODE_UNSPECIFIED);
  EXPECT_EQ(first.clock_policy(), "");
  EXPECT_EQ(first.verification(), "");
  EXPECT_EQ(first.verification_outcome(), v1::VERIFICATION_OUTCOME_UNSPECIFIED);
  EXPECT_FALSE(first.telemetry().available());
  EXPECT_THAT(first.telemetry().unavailable_reason(), HasSubstr("before schema v2"));
  EXPECT_TRUE(first.telemetry().throttle_reasons().empty());
  EXPECT_FALSE(first.telemetry().has_power_w_mean());  // NULL: not recorded
  EXPECT_EQ(first.occupancy().registers_per_thread(), 0);
  EXPECT_EQ(first.occupancy().limiter(), "");
  EXPECT_TRUE(first.sample_ms().empty());
  EXPECT_FALSE(first.has_bytes_per_second());
  EXPECT_EQ(measurements[2].error(), "illegal address");
  EXPECT_EQ(measurements[2].status(), v1::MEASUREMENT_STATUS_FAILED);
  {
    RawDb raw(path);
    EXPECT_EQ(raw.Text("SELECT coalesce(power_w_mean, 'null') FROM measurements WHERE id = 1"),
              "null");
  }

  // The migrated database takes v2 rows, and old and new live side by side.
  v1::Measurement added;
  added.set_run_id(1);
  added.set_sequence(3);
  added.set_variant("abl_L1_R1_bl1_s4_sw1");
  added.set_dtype("bf16");
  added.set_status(v1::MEASUREMENT_STATUS_OK);
  added.mutable_shape()->set_m(4096);
  added.mutable_shape()->set_n(4096);
  added.mutable_shape()->set_k(4096);
  added.set_l2(v1::L2_MODE_COLD);
  added.add_sample_ms(0.5);
  added.add_sample_ms(0.6);
  const int64_t id = store->InsertMeasurement(added);
  EXPECT_EQ(id, 4);
  EXPECT_THAT(store->MeasurementsOfRun(1, true).back().sample_ms(), ElementsAre(0.5, 0.6));
  v1::Run tagged = BareRun();
  tagged.add_tags("nightly");
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
  EXPECT_EQ(run->clock_policy(), "observe");
  EXPECT_EQ(run->device().l2_bytes(), 62914560);
  EXPECT_THAT(run->tags(), ElementsAre("nightly"));
  EXPECT_EQ(run->ok(), 3);
  EXPECT_EQ(run->failed(), 1);

  const auto measurements = store->MeasurementsOfRun(1, /*include_samples=*/true);
  ASSERT_EQ(measurements.size(), 4u);
  EXPECT_THAT(measurements[0].telemetry().unavailable_reason(), HasSubstr("before schema v2"));
  const v1::Measurement& v2 = measurements[3];
  EXPECT_EQ(v2.variant(), "abl_L1_R1_bl1_s4_sw1");
  EXPECT_DOUBLE_EQ(v2.tflops(), 274.9);
  EXPECT_DOUBLE_EQ(v2.stats().total_seconds(), 0.02);
  EXPECT_EQ(v2.l2(), v1::L2_MODE_COLD);
  EXPECT_EQ(v2.verification(), "passed");
  EXPECT_EQ(v2.verification_outcome(), v1::VERIFICATION_OUTCOME_PASSED);  // backfilled by v5
  EXPECT_TRUE(v2.telemetry().available());
  EXPECT_DOUBLE_EQ(v2.telemetry().sm_clock_mhz_mean(), 1980);
  EXPECT_DOUBLE_EQ(v2.telemetry().power_w_max(), 690.5);
  EXPECT_THAT(v2.telemetry().throttle_reasons(), ElementsAre("sw_power_cap"));
  EXPECT_EQ(v2.telemetry().throttled_samples(), 3);
  EXPECT_EQ(v2.occupancy().registers_per_thread(), 128);
  EXPECT_EQ(v2.occupancy().limiter(), "registers");
  EXPECT_THAT(v2.sample_ms(), ElementsAre(0.5));
  for (const v1::Measurement& m : measurements) {
    EXPECT_FALSE(m.has_bytes_per_second()) << m.id();
    EXPECT_FALSE(m.has_fragment_loads_per_second()) << m.id();
    EXPECT_EQ(m.bytes_per_second(), 0) << m.id();
  }

  // v3 rows with the new rates live beside the old ones.
  v1::Measurement added;
  added.set_run_id(1);
  added.set_sequence(4);
  added.set_variant("smem2reg_R1_bl0_sw1");
  added.set_dtype("bf16");
  added.set_status(v1::MEASUREMENT_STATUS_OK);
  added.mutable_shape()->set_m(4096);
  added.mutable_shape()->set_n(4096);
  added.mutable_shape()->set_k(4096);
  added.set_bytes_per_second(1.5e13);
  added.set_fragment_loads_per_second(2.5e11);
  const int64_t id = store->InsertMeasurement(added);
  EXPECT_EQ(id, 5);
  const v1::Measurement back = store->MeasurementsOfRun(1, false).back();
  EXPECT_DOUBLE_EQ(back.bytes_per_second(), 1.5e13);
  EXPECT_DOUBLE_EQ(back.fragment_loads_per_second(), 2.5e11);
  EXPECT_DOUBLE_EQ(back.tflops(), 0);
}

TEST_F(MigrationsTest, NewerDatabaseIsRefusedAndLeftUntouched) {
  const std::string path = PathOf("newer.db");
  {
    RawDb raw(path);
    raw.Exec("CREATE TABLE future (x INTEGER); INSERT INTO future VALUES (42);");
    raw.Exec("PRAGMA user_version = " + std::to_string(kSchemaVersion + 1));
  }
  const std::string before = ReadFileBytes(path);
  ASSERT_FALSE(before.empty());

  try {
    Store::Open(path);
    FAIL() << "a newer database was opened";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Error::Code::kIncompatible);
    EXPECT_THAT(e.what(), HasSubstr("schema version " + std::to_string(kSchemaVersion + 1)));
    EXPECT_THAT(e.what(), HasSubstr("version " + std::to_string(kSchemaVersion)));
    EXPECT_THAT(e.what(), HasSubstr(path));
  }
  try {
    Store::OpenReadOnly(path);
    FAIL() << "a newer database was opened read-only";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Error::Code::kIncompatible);
    EXPECT_THAT(e.what(), HasSubstr("schema version " + std::to_string(kSchemaVersion + 1)));
  }

  EXPECT_EQ(ReadFileBytes(path), before);
  EXPECT_FALSE(std::filesystem::exists(path + "-wal"));
  RawDb raw(path);
  EXPECT_EQ(raw.Int("PRAGMA user_version"), kSchemaVersion + 1);
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
