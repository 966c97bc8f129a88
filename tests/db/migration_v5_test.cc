// Schema v5 from a v4 database built by hand: the typed verification reference and measurement
// outcome, backfilled from the text the older rows hold; `against` kept and still written; the
// v4 views unchanged and still reading right.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "db/error.h"
#include "db/migrations.h"
#include "db/store.h"
#include "tests/db/db_test_support.h"
#include "tests/db/old_schemas.h"
#include "tests/db/store_test_support.h"

namespace ablation::db {
namespace {

using testing::CodeOf;
using ::testing::HasSubstr;
using testing::RawDb;

// v4 rows whose text the migration reads: every kind of `against` and `verification` there is.
constexpr const char* kV4Rows = R"sql(
INSERT INTO runs (id, kind, state, created_at_ms) VALUES (3, 'verify', 'succeeded', 1700000200000);
INSERT INTO verifications (id, run_id, variant, dtype, m, n, k, against, max_abs, passed,
                           created_at_ms)
VALUES (1, 3, 'abl_L0_R0_bl0_s1_sw1', 'bf16', 64, 64, 64, 'cpu', 0.001, 1, 1700000201000),
       (2, 3, 'abl_L0_R0_bl0_s1_sw1', 'bf16', 4096, 4096, 4096, 'cublas', 0.002, 1, 1700000202000),
       (3, 3, 'abl_L1_R1_bl0_s3_sw1', 'bf16', 256, 256, 256, 'abl_L0_R0_bl0_s1_sw1', 0.5, 0,
        1700000203000),
       (4, 3, 'simt_naive', 'fp32', 64, 64, 64, '', 0, 0, 1700000204000);
INSERT INTO measurements (id, run_id, sequence, variant, dtype, m, n, k, status, error,
                          created_at_ms, verification)
VALUES (5, 1, 4, 'abl_L1_R1_bl0_s3_sw1', 'bf16', 4096, 4096, 4096, 'failed',
        'verification failed against cublas: rel frobenius 0.3', 1700000050000,
        'failed against cublas: rel frobenius 0.3, max abs 2, 17 mismatches'),
       (6, 1, 5, 'cublas_default', 'bf16', 8192, 8192, 8192, 'ok', '', 1700000051000,
        'not checked: the reference itself at this size'),
       (7, 1, 6, 'smem2reg_R1_bl0_sw1', 'bf16', 4096, 4096, 4096, 'ok', '', 1700000052000,
        'not checked: smem2reg computes no product');
INSERT INTO run_tags (run_id, tag) VALUES (3, 'nightly');
)sql";

class MigrationV5Test : public testing::TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    path_ = PathOf("v4.db");
    RawDb raw(path_);
    testing::BuildV4WithRows(raw, kV4Rows);
    ASSERT_EQ(raw.Int("PRAGMA user_version"), 4);
  }
  std::string path_;
};

TEST_F(MigrationV5Test, BackfillsReferenceAndOutcomeFromTheirText) {
  auto store = Store::Open(path_);
  RawDb raw(path_);
  EXPECT_EQ(raw.Int("PRAGMA user_version"), kSchemaVersion);  // through v5 and on

  // verifications: against -> reference, reference_variant; against itself kept.
  EXPECT_EQ(raw.Text("SELECT group_concat(reference || ':' || reference_variant, ' ') FROM "
                     "(SELECT * FROM verifications ORDER BY id)"),
            "cpu: cublas: variant:abl_L0_R0_bl0_s1_sw1 :");
  EXPECT_EQ(raw.Text("SELECT group_concat(against, ' ') FROM (SELECT * FROM verifications "
                     "ORDER BY id)"),
            "cpu cublas abl_L0_R0_bl0_s1_sw1 ");
  // measurements: verification -> verification_outcome.
  EXPECT_EQ(raw.Text("SELECT group_concat(id || '=' || verification_outcome, ' ') FROM "
                     "(SELECT * FROM measurements ORDER BY id)"),
            "1= 2= 3= 4=passed 5=failed 6=not_checked 7=not_checked");
  EXPECT_EQ(raw.Text("SELECT verification FROM measurements WHERE id = 5"),
            "failed against cublas: rel frobenius 0.3, max abs 2, 17 mismatches");

  // Through the store, typed.
  const auto verifications = store->VerificationsOfRun(3);
  ASSERT_EQ(verifications.size(), 4u);
  EXPECT_EQ(verifications[0].reference(), v1::REFERENCE_CPU);
  EXPECT_EQ(verifications[1].reference(), v1::REFERENCE_CUBLAS);
  EXPECT_EQ(verifications[2].reference(), v1::REFERENCE_VARIANT);
  EXPECT_EQ(verifications[2].reference_variant(), "abl_L0_R0_bl0_s1_sw1");
  EXPECT_DOUBLE_EQ(verifications[2].max_abs_error(), 0.5);
  EXPECT_FALSE(verifications[2].passed());
  EXPECT_EQ(verifications[3].reference(), v1::REFERENCE_UNSPECIFIED);
  EXPECT_EQ(verifications[3].reference_variant(), "");
  EXPECT_EQ(verifications[3].shape().m(), 64);
  EXPECT_EQ(store->GetRun(3)->ok(), 2);  // a verify run counts its verifications
  EXPECT_EQ(store->GetRun(3)->failed(), 2);

  const auto measurements = store->MeasurementsOfRun(1, false);
  ASSERT_EQ(measurements.size(), 7u);
  EXPECT_EQ(measurements[0].verification_outcome(), v1::VERIFICATION_OUTCOME_UNSPECIFIED);
  EXPECT_EQ(measurements[3].verification_outcome(), v1::VERIFICATION_OUTCOME_PASSED);
  EXPECT_EQ(measurements[4].verification_outcome(), v1::VERIFICATION_OUTCOME_FAILED);
  EXPECT_EQ(measurements[4].status(), v1::MEASUREMENT_STATUS_FAILED);
  EXPECT_EQ(measurements[5].verification_outcome(), v1::VERIFICATION_OUTCOME_NOT_CHECKED);
  EXPECT_EQ(measurements[6].verification_outcome(), v1::VERIFICATION_OUTCOME_NOT_CHECKED);

  // New rows beside the migrated ones: `against` written from the typed reference.
  v1::VerifyResult v;
  v.set_run_id(3);
  v.set_variant("abl_L1_R1_bl0_s3_sw1");
  v.set_reference(v1::REFERENCE_VARIANT);
  v.set_reference_variant("cublas_default");
  EXPECT_EQ(store->InsertVerification(v), 5);
  EXPECT_EQ(raw.Text("SELECT against || '|' || reference || '|' || reference_variant FROM "
                     "verifications WHERE id = 5"),
            "cublas_default|variant|cublas_default");
}

TEST_F(MigrationV5Test, ViewsReadTheMigratedRowsAsBefore) {
  auto store = Store::Open(path_);
  RawDb raw(path_);
  // The v4 views, v9's latest_counters and v10's run_cost.
  EXPECT_EQ(raw.Int("SELECT count(*) FROM sqlite_master WHERE type = 'view'"), 6);
  // latest_result: the ok rows of run 1 (1, 2, 4 at 4096^3; 6 at 8192^3; 7 a smem2reg), the
  // failed 3 and 5 left out.
  EXPECT_EQ(raw.Text("SELECT group_concat(measurement_id, ' ') FROM (SELECT measurement_id FROM "
                     "latest_result ORDER BY measurement_id)"),
            "1 2 4 6 7");
  EXPECT_EQ(raw.Text("SELECT verification FROM latest_result WHERE measurement_id = 6"),
            "not checked: the reference itself at this size");
  // run_summary: verify runs count their verifications, and the one that did not pass.
  EXPECT_EQ(raw.Text("SELECT kind || ' ' || verified || ' ' || verify_failed || ' ' || tags FROM "
                     "run_summary WHERE run_id = 3"),
            "verify 4 2 nightly");
  EXPECT_EQ(raw.Text("SELECT measured || ' ' || ok || ' ' || failed FROM run_summary WHERE "
                     "run_id = 1"),
            "7 5 2");
  // nightly_history: run 1 is tagged nightly (v2 rows): its ok measurements.
  EXPECT_EQ(raw.Int("SELECT count(*) FROM nightly_history WHERE run_id = 1"), 5);
  EXPECT_EQ(raw.Int("SELECT count(*) FROM nightly_change"), 5);
}

TEST_F(MigrationV5Test, ReadOnlyReaderRefusesV4) {
  std::string message;
  EXPECT_EQ(CodeOf([&] { Store::OpenReadOnly(path_); }, &message), Error::Code::kIncompatible);
  EXPECT_THAT(message, HasSubstr("schema version 4"));
  RawDb raw(path_);
  EXPECT_EQ(raw.Int("PRAGMA user_version"), 4);
}

TEST_F(MigrationV5Test, AFailedMigrationLeavesV4Intact) {
  {
    // A column v5 is about to add, already there: its ALTER TABLE fails half way through v5.
    RawDb raw(path_);
    raw.Exec("ALTER TABLE measurements ADD COLUMN verification_outcome TEXT");
  }
  std::string message;
  EXPECT_EQ(CodeOf([&] { Store::Open(path_); }, &message), Error::Code::kStorage);
  EXPECT_THAT(message, HasSubstr("duplicate column name: verification_outcome"));
  RawDb raw(path_);
  EXPECT_EQ(raw.Int("PRAGMA user_version"), 4);
  // v5's first steps (the verifications columns) were rolled back with it.
  EXPECT_EQ(raw.Int("SELECT count(*) FROM pragma_table_info('verifications') WHERE name = "
                    "'reference'"),
            0);
}

// v12: whether the reference failed is a column, backfilled from the error text older workers
// wrote ("reference: ..."); a failed variant whose error merely mentions a reference stays failed.
TEST_F(MigrationV5Test, V12BackfillsReferenceFailedFromTheErrorText) {
  {
    RawDb raw(path_);
    raw.Exec(R"sql(
INSERT INTO verifications (id, run_id, variant, dtype, m, n, k, against, passed, error,
                           created_at_ms)
VALUES (5, 3, 'abl_L0_R0_bl0_s1_sw1', 'bf16', 65536, 65536, 2, 'cpu', 0,
        'reference: the CPU reference needs 34359 MB of host memory', 1700000205000),
       (6, 3, 'abl_L1_R1_bl0_s3_sw1', 'bf16', 256, 256, 256, 'cublas', 0,
        'output differs from the reference: 17 mismatches', 1700000206000);
)sql");
  }
  auto store = Store::Open(path_);
  RawDb raw(path_);
  EXPECT_EQ(raw.Text("SELECT group_concat(id || '=' || reference_failed, ' ') FROM "
                     "(SELECT * FROM verifications ORDER BY id)"),
            "1=0 2=0 3=0 4=0 5=1 6=0");
  const auto rows = store->VerificationsOfRun(3);
  ASSERT_EQ(rows.size(), 6u);
  EXPECT_TRUE(rows[4].reference_failed());
  EXPECT_FALSE(rows[5].reference_failed());
  // New rows keep what the worker said.
  v1::VerifyResult added = rows[4];
  added.clear_id();
  added.set_error("the reference left 3 output elements unwritten");
  const int64_t id = store->InsertVerification(added);
  EXPECT_EQ(raw.Int("SELECT reference_failed FROM verifications WHERE id = " + std::to_string(id)),
            1);
}

}  // namespace
}  // namespace ablation::db
