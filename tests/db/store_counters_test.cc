// The counters table (schema v9): a measurement's counters written with it, a Profile call's
// counters on their own, read back per measurement, and the latest_counters view.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "db/migrations.h"
#include "db/store.h"
#include "tests/db/db_test_support.h"
#include "tests/db/store_test_support.h"

namespace ablation::db {
namespace {

using testing::FullMeasurement;
using testing::H200;
using testing::kBaseMs;
using testing::MakeRun;
using testing::RawDb;
using testing::SameMessage;
using testing::StoreTest;

v1::Counter MakeCounter(std::string metric, std::string ncu, double value, std::string unit) {
  v1::Counter c;
  c.set_metric(std::move(metric));
  c.set_ncu_name(std::move(ncu));
  c.set_value(value);
  c.set_unit(std::move(unit));
  c.set_tool("ncu");
  c.set_tool_version("2025.3.1.0");
  return c;
}

// What the H200 read for ladder A's ld.shared rung (tests/core/testdata/ncu), and one counter
// the tool gave no value for.
std::vector<v1::Counter> RungA1() {
  std::vector<v1::Counter> out = {
      MakeCounter("shared_load_instructions", "smsp__sass_inst_executed_op_shared_ld.sum", 67108864,
                  "inst"),
      MakeCounter("shared_load_bank_conflicts",
                  "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum", 13882, ""),
      MakeCounter("lsu_pipe_utilisation",
                  "sm__inst_executed_pipe_lsu.avg.pct_of_peak_sustained_active", 60.84, "%")};
  v1::Counter none = MakeCounter("tensor_pipe_hgmma_utilisation",
                                 "sm__inst_executed_pipe_tensor_op_gmma.avg."
                                 "pct_of_peak_sustained_active",
                                 0, "%");
  none.clear_value();
  none.set_note("ncu read 'n/a' on cc 9.0");
  out.push_back(none);
  return out;
}

int64_t StartedRun(Store& store) {
  const int64_t run = store.CreateRun(MakeRun());
  store.MarkRunStarted(run, H200(), kBaseMs + 10);
  return run;
}

TEST_F(StoreTest, MeasurementCountersAreWrittenWithItAndReadBackInOrder) {
  const int64_t run = StartedRun(*store_);
  v1::Measurement m = FullMeasurement(run);
  for (const auto& c : RungA1()) *m.add_counters() = c;
  const int64_t id = store_->InsertMeasurement(m);

  RawDb raw(path_);
  EXPECT_EQ(raw.Int("SELECT count(*) FROM counters WHERE measurement_id = " + std::to_string(id) +
                    " AND run_id = " + std::to_string(run)),
            4);
  // The GPU and the architecture come from the run.
  EXPECT_EQ(raw.Text("SELECT device_uuid || ' ' || arch FROM counters LIMIT 1"),
            "GPU-0f1e2d3c sm_90");
  EXPECT_EQ(raw.Text("SELECT variant || ' ' || m || 'x' || n || 'x' || k FROM counters LIMIT 1"),
            "abl_L1_R1_bl0_s3_sw1 4096x2048x1024");
  EXPECT_EQ(raw.Int("SELECT count(*) FROM counters WHERE value IS NULL"), 1);

  std::vector<v1::Measurement> read = store_->MeasurementsOfRun(run, false);
  ASSERT_EQ(read.size(), 1u);
  EXPECT_TRUE(read[0].counters().empty());  // only when asked
  store_->FillCounters(read);
  ASSERT_EQ(read[0].counters_size(), 4);
  const auto written = RungA1();
  for (int i = 0; i < 4; ++i) EXPECT_TRUE(SameMessage(read[0].counters(i), written[size_t(i)]));
  EXPECT_FALSE(read[0].counters(3).has_value());
  EXPECT_TRUE(read[0].counters_note().empty());
}

TEST_F(StoreTest, ARefusedProfileIsANoteRowThatReadsBackAsTheMeasurementsNote) {
  const int64_t run = StartedRun(*store_);
  v1::Measurement m = FullMeasurement(run);
  m.set_counters_note(
      "not profiled: the GPU's performance counters are restricted to "
      "administrators (ncu: ERR_NVGPUCTRPERM); ...");
  const int64_t id = store_->InsertMeasurement(m);
  RawDb raw(path_);
  EXPECT_EQ(raw.Text("SELECT metric || '|' || note FROM counters WHERE measurement_id = " +
                     std::to_string(id)),
            "|" + m.counters_note());
  std::vector<v1::Measurement> read = store_->MeasurementsOfRun(run, false);
  store_->FillCounters(read);
  EXPECT_TRUE(read[0].counters().empty());
  EXPECT_EQ(read[0].counters_note(), m.counters_note());
  // The note row is no counter: the dashboard view leaves it out.
  EXPECT_EQ(raw.Int("SELECT count(*) FROM latest_counters"), 0);
}

TEST_F(StoreTest, AMeasurementWithoutCountersWritesNoRows) {
  const int64_t run = StartedRun(*store_);
  store_->InsertMeasurement(FullMeasurement(run));
  RawDb raw(path_);
  EXPECT_EQ(raw.Int("SELECT count(*) FROM counters"), 0);
}

TEST_F(StoreTest, ProfiledKernelRowsBelongToNoRun) {
  v1::ProfiledKernel k;
  k.set_variant("abl_L1_R1_bl0_s3_sw1");
  k.set_dtype("bf16");
  k.mutable_shape()->set_m(4096);
  k.mutable_shape()->set_n(4096);
  k.mutable_shape()->set_k(4096);
  for (const auto& c : RungA1()) *k.add_counters() = c;
  store_->InsertProfiledKernel(k, "GPU-9b0b9d18", "sm_90");
  RawDb raw(path_);
  EXPECT_EQ(raw.Int("SELECT count(*) FROM counters WHERE run_id IS NULL AND measurement_id IS "
                    "NULL AND device_uuid = 'GPU-9b0b9d18' AND arch = 'sm_90'"),
            4);
  EXPECT_EQ(raw.Text("SELECT tool || ' ' || tool_version FROM counters LIMIT 1"), "ncu 2025.3.1.0");
}

TEST_F(StoreTest, LatestCountersKeepsTheNewestValuePerKernelShapeGpuAndMetric) {
  const int64_t run = StartedRun(*store_);
  v1::Measurement m = FullMeasurement(run);
  for (const auto& c : RungA1()) *m.add_counters() = c;
  store_->InsertMeasurement(m);
  // Read again later by a Profile call on the same GPU: its value is the newest.
  v1::ProfiledKernel k;
  k.set_variant(m.variant());
  k.set_dtype(m.dtype());
  *k.mutable_shape() = m.shape();
  *k.add_counters() = MakeCounter("shared_load_instructions",
                                  "smsp__sass_inst_executed_op_shared_ld.sum", 67108000, "inst");
  store_->InsertProfiledKernel(k, H200().uuid(), "sm_90");
  // Another GPU's reading is its own row.
  store_->InsertProfiledKernel(k, "GPU-other", "sm_90");

  RawDb raw(path_);
  EXPECT_EQ(raw.Int("SELECT count(*) FROM latest_counters"), 4 + 1);
  EXPECT_EQ(raw.Int("SELECT value FROM latest_counters WHERE metric = 'shared_load_instructions' "
                    "AND device_uuid = 'GPU-0f1e2d3c'"),
            67108000);
  EXPECT_EQ(raw.Text("SELECT coalesce(run_id, 'none') FROM latest_counters WHERE metric = "
                     "'shared_load_instructions' AND device_uuid = 'GPU-0f1e2d3c'"),
            "none");
  // The measurement's own timing beside its counters.
  EXPECT_EQ(raw.Text("SELECT median_ms || ' ' || tflops FROM latest_counters WHERE metric = "
                     "'lsu_pipe_utilisation'"),
            "1.01 170.5");
  EXPECT_EQ(raw.Text("SELECT substr(time, 1, 4) FROM latest_counters LIMIT 1").size(), 4u);
}

TEST_F(StoreTest, SchemaV9HasTheCountersTableAndView) {
  RawDb raw(path_);
  EXPECT_GE(kSchemaVersion, 9);
  EXPECT_EQ(raw.Int("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = "
                    "'counters'"),
            1);
  EXPECT_EQ(raw.Int("SELECT count(*) FROM sqlite_master WHERE type = 'view' AND name = "
                    "'latest_counters'"),
            1);
}

}  // namespace
}  // namespace ablation::db
