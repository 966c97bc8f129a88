// Provenance (v15) and the history read: series rows keyed by the run's hardware fingerprint.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "db/migrations.h"
#include "tests/db/old_schemas.h"
#include "tests/db/store_test_support.h"

namespace ablation::db {
namespace {

using testing::StoreTest;

class StoreHistoryTest : public StoreTest {
 protected:
  // An ablation run started at `started_ms` on a GPU of `fingerprint`, with one ok measurement of
  // `variant` at 4096^3 bf16 (median `median_ms`) and a failed one.
  int64_t Night(const std::string& fingerprint, int64_t started_ms, double median_ms,
                const std::string& variant = "abl_L1_R1_bl0_s3_sw1",
                v1::Regime regime = v1::REGIME_SUSTAINED, std::vector<std::string> tags = {},
                v1::L2Mode l2 = v1::L2_MODE_COLD) {
    v1::Run run = testing::MakeRun(std::move(tags));
    run.set_host_name("node7");
    run.set_node_labels("pool=h200,zone=a");
    run.set_kernel_revision("abcdef123456");
    const int64_t id = store_->CreateRun(run);
    v1::DeviceIdentity device = testing::H200();
    device.set_vbios_version("96.00.AF.00.01");
    device.set_power_limit_w(700);
    device.set_ecc_mode("on");
    device.set_hardware_fingerprint(fingerprint);
    store_->MarkRunStarted(id, device, started_ms);
    v1::Measurement m = testing::FullMeasurement(id);
    m.set_variant(variant);
    m.mutable_shape()->set_n(4096);
    m.mutable_shape()->set_k(4096);
    m.mutable_stats()->set_median_ms(median_ms);
    m.set_regime(regime);
    m.set_l2(l2);
    store_->InsertMeasurement(m);
    m.set_status(v1::MEASUREMENT_STATUS_FAILED);
    m.set_error("launch failed");
    m.mutable_stats()->set_median_ms(99);
    store_->InsertMeasurement(m);
    return id;
  }
  // The store closed, its database taken back to `version` by `undo` (old_schemas.h), and
  // opened again: migrated to kSchemaVersion.
  void ReopenFrom(int version, void (*undo)(testing::RawDb&)) {
    store_.reset();
    {
      testing::RawDb raw(path_);
      undo(raw);
      raw.Exec("PRAGMA user_version = " + std::to_string(version));
    }
    store_ = Store::Open(path_);
  }
  SeriesFilter Filter() {
    SeriesFilter f;
    f.variant_glob = "abl_*";
    return f;
  }
};

TEST_F(StoreHistoryTest, ProvenanceIsStoredAndReadBack) {
  const int64_t id = Night("fp-a", testing::kBaseMs, 1.0);
  const auto run = store_->GetRun(id);
  ASSERT_TRUE(run.has_value());
  EXPECT_EQ(run->host_name(), "node7");
  EXPECT_EQ(run->node_labels(), "pool=h200,zone=a");
  EXPECT_EQ(run->kernel_revision(), "abcdef123456");
  EXPECT_EQ(run->device().vbios_version(), "96.00.AF.00.01");
  EXPECT_DOUBLE_EQ(run->device().power_limit_w(), 700);
  EXPECT_EQ(run->device().ecc_mode(), "on");
  EXPECT_EQ(run->device().hardware_fingerprint(), "fp-a");
  EXPECT_EQ(run->daemon_version(), "0.1.0");
  EXPECT_EQ(run->device().driver_version(), "560.35.03");
}

TEST_F(StoreHistoryTest, RowsComeBySeriesThenTimeOkOnly) {
  const int64_t a1 = Night("fp-a", testing::kBaseMs + 2000, 1.1);
  const int64_t b1 = Night("fp-b", testing::kBaseMs + 1000, 2.0);
  const int64_t a0 = Night("fp-a", testing::kBaseMs, 1.0);  // created later, started earlier
  const auto rows = store_->SeriesRows(Filter());
  ASSERT_EQ(rows.size(), 3u);  // the failed rows are left out
  EXPECT_EQ(rows[0].fingerprint, "fp-a");
  EXPECT_EQ(rows[0].run_id, a0);
  EXPECT_DOUBLE_EQ(rows[0].median_ms, 1.0);
  EXPECT_EQ(rows[0].time_ms, testing::kBaseMs);
  EXPECT_EQ(rows[1].run_id, a1);
  EXPECT_EQ(rows[2].fingerprint, "fp-b");
  EXPECT_EQ(rows[2].run_id, b1);
  EXPECT_EQ(rows[0].regime, "sustained");
  EXPECT_EQ(rows[0].dtype, "bf16");
  EXPECT_EQ(rows[0].m, 4096);
  EXPECT_EQ(rows[0].device_uuid, "GPU-0f1e2d3c");
}

TEST_F(StoreHistoryTest, FiltersNarrowTheRows) {
  Night("fp-a", testing::kBaseMs, 1.0, "abl_L1_R1_bl0_s3_sw1", v1::REGIME_SUSTAINED, {"nightly"});
  const int64_t burst =
      Night("fp-a", testing::kBaseMs + 10, 1.0, "abl_L1_R1_bl0_s3_sw1", v1::REGIME_BURST);
  const int64_t other = Night("fp-b", testing::kBaseMs + 20, 1.0, "abl_L1_R0_bl0_s3_sw1");
  SeriesFilter f = Filter();
  f.regime = "burst";
  ASSERT_EQ(store_->SeriesRows(f).size(), 1u);
  EXPECT_EQ(store_->SeriesRows(f)[0].run_id, burst);
  f = Filter();
  f.variant_glob = "abl_L1_R0_bl0_s3_sw1";
  ASSERT_EQ(store_->SeriesRows(f).size(), 1u);
  EXPECT_EQ(store_->SeriesRows(f)[0].run_id, other);
  f = Filter();
  f.tag = "nightly";
  EXPECT_EQ(store_->SeriesRows(f).size(), 1u);
  f = Filter();
  f.since_ms = testing::kBaseMs + 10;
  EXPECT_EQ(store_->SeriesRows(f).size(), 2u);
  f = Filter();
  f.device = "GPU-0f1e2d3c";
  EXPECT_EQ(store_->SeriesRows(f).size(), 3u);
  f.device = "1";  // the index
  EXPECT_EQ(store_->SeriesRows(f).size(), 3u);
  f.device = "GPU-other";
  EXPECT_TRUE(store_->SeriesRows(f).empty());
  f = Filter();
  f.dtype = "fp16";
  EXPECT_TRUE(store_->SeriesRows(f).empty());
  f = Filter();
  f.m = 1024;
  EXPECT_TRUE(store_->SeriesRows(f).empty());
}

TEST_F(StoreHistoryTest, ARunSelectsTheSeriesItHasAPointIn) {
  Night("fp-a", testing::kBaseMs, 1.0);
  Night("fp-a", testing::kBaseMs + 1, 1.0, "abl_L1_R0_bl0_s3_sw1");
  Night("fp-b", testing::kBaseMs + 2, 1.0);  // same item, another fingerprint
  const int64_t tonight = Night("fp-a", testing::kBaseMs + 3, 1.2);
  SeriesFilter f = Filter();
  f.run_id = tonight;
  const auto rows = store_->SeriesRows(f);
  ASSERT_EQ(rows.size(), 2u);  // the fp-a series of abl_L1_R1 only: its earlier night and tonight
  for (const auto& r : rows) {
    EXPECT_EQ(r.fingerprint, "fp-a");
    EXPECT_EQ(r.variant, "abl_L1_R1_bl0_s3_sw1");
  }
}

// A night measured with the L2 hot stands in a series of its own: its rows come after the cold
// series' (each series' rows together), say their mode, and a run selects only its mode's series.
TEST_F(StoreHistoryTest, EachL2ModeIsASeriesOfItsOwn) {
  const std::string v = "abl_L1_R1_bl0_s3_sw1";
  const int64_t cold0 = Night("fp-a", testing::kBaseMs, 1.0);
  const int64_t hot =
      Night("fp-a", testing::kBaseMs + 1, 0.7, v, v1::REGIME_SUSTAINED, {}, v1::L2_MODE_HOT);
  const int64_t cold1 = Night("fp-a", testing::kBaseMs + 2, 1.0);
  const auto rows = store_->SeriesRows(Filter());
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].run_id, cold0);
  EXPECT_EQ(rows[0].l2, "cold");
  EXPECT_EQ(rows[1].run_id, cold1);
  EXPECT_EQ(rows[2].run_id, hot);
  EXPECT_EQ(rows[2].l2, "hot");
  SeriesFilter f = Filter();
  f.run_id = hot;
  const auto in_hot = store_->SeriesRows(f);
  ASSERT_EQ(in_hot.size(), 1u);
  EXPECT_EQ(in_hot[0].run_id, hot);
  f.run_id = cold1;
  EXPECT_EQ(store_->SeriesRows(f).size(), 2u);
}

TEST_F(StoreHistoryTest, VariantMeasuredByNameOrGlob) {
  Night("fp-a", testing::kBaseMs, 1.0);
  EXPECT_TRUE(store_->VariantMeasured("abl_L1_R1_bl0_s3_sw1"));
  EXPECT_TRUE(store_->VariantMeasured("abl_*"));
  EXPECT_FALSE(store_->VariantMeasured("abl_L9*"));
  EXPECT_FALSE(store_->VariantMeasured("cublas_default"));
}

// v14 -> v17: the provenance columns (v15) arrive with '' (NULL for the power limit), and who
// cancelled (v16); the rows stay.
TEST_F(StoreHistoryTest, V14DatabaseGainsProvenanceKeepingItsRows) {
  const int64_t id = Night("fp-a", testing::kBaseMs, 1.0);
  store_.reset();
  {
    testing::RawDb raw(path_);
    testing::UndoV18(raw);
    for (const char* column : {"vbios_version", "power_limit_w", "ecc_mode", "hardware_fingerprint",
                               "host_name", "node_labels", "kernel_revision", "cancelled_by"}) {
      raw.Exec(std::string("ALTER TABLE runs DROP COLUMN ") + column);
    }
    // v17's objects too (they were made by the fresh database's migration).
    for (const char* sql :
         {"DROP TRIGGER runs_final_to_outbox", "DROP TRIGGER runs_created_final_to_outbox",
          "DROP TABLE fleet_outbox", "DROP TABLE daemon_identity"})
      raw.Exec(sql);
    raw.Exec("PRAGMA user_version = 14");
  }
  store_ = Store::Open(path_);
  testing::RawDb raw(path_);
  EXPECT_EQ(raw.Int("PRAGMA user_version"), kSchemaVersion);
  const auto run = store_->GetRun(id);
  ASSERT_TRUE(run.has_value());
  EXPECT_EQ(run->device().hardware_fingerprint(), "");
  EXPECT_EQ(run->host_name(), "");
  EXPECT_FALSE(run->device().has_power_limit_w());
  EXPECT_EQ(run->device().uuid(), "GPU-0f1e2d3c");
  EXPECT_EQ(raw.Int("SELECT count(*) FROM measurements WHERE run_id = " + std::to_string(id)), 2);
  // Rows stored before v15 form a series of their own (fingerprint '').
  const auto rows = store_->SeriesRows(Filter());
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].fingerprint, "");
}

// v20 -> v21: a kernel of its own contract's roofline columns arrive empty on the rows stored
// before (no roofline), and a row that has one keeps it.
TEST_F(StoreHistoryTest, V20DatabaseGainsTheRooflineKeepingItsRows) {
  const int64_t id = Night("fp-a", testing::kBaseMs, 1.0);
  ReopenFrom(20, &testing::UndoV21);
  testing::RawDb raw(path_);
  EXPECT_EQ(raw.Int("PRAGMA user_version"), kSchemaVersion);
  const auto run = store_->GetRun(id);
  ASSERT_TRUE(run.has_value());
  EXPECT_EQ(raw.Int("SELECT count(*) FROM measurements WHERE run_id = " + std::to_string(id) +
                    " AND roofline_bytes_per_second IS NULL AND roofline_bound = ''"),
            raw.Int("SELECT count(*) FROM measurements WHERE run_id = " + std::to_string(id)));
  MeasurementFilter filter;
  filter.run_id = id;
  const auto page = store_->QueryMeasurements(filter);
  ASSERT_FALSE(page.measurements.empty());
  for (const v1::Measurement& m : page.measurements) EXPECT_FALSE(m.has_roofline());
}

// v21 -> v22: the entry a dispatching variant ran arrives empty on the rows stored before, and a
// row stored after keeps the one it names.
TEST_F(StoreHistoryTest, V21DatabaseGainsTheDispatchedEntryKeepingItsRows) {
  const int64_t id = Night("fp-a", testing::kBaseMs, 1.0);
  ReopenFrom(21, &testing::UndoV22);
  testing::RawDb raw(path_);
  EXPECT_EQ(raw.Int("PRAGMA user_version"), kSchemaVersion);
  EXPECT_EQ(raw.Int("SELECT count(*) FROM measurements WHERE dispatched_to = ''"), 2);
  v1::Measurement m = testing::FullMeasurement(id);
  m.set_variant("sm90_s12_buckets");
  m.set_dispatched_to("sm90_h12_rows64_n64_unclustered");
  store_->InsertMeasurement(m);
  MeasurementFilter filter;
  filter.run_id = id;
  filter.variant_glob = "sm90_s12_buckets";
  const auto page = store_->QueryMeasurements(filter);
  ASSERT_EQ(page.measurements.size(), 1u);
  EXPECT_EQ(page.measurements[0].dispatched_to(), "sm90_h12_rows64_n64_unclustered");
}

}  // namespace
}  // namespace ablation::db
