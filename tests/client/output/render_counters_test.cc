#include "client/output/render_counters.h"

#include <gtest/gtest.h>

#include "client/output/table.h"

namespace ablation::client {
namespace {

v1::Counter C(std::string metric, double value, std::string unit) {
  v1::Counter c;
  c.set_metric(std::move(metric));
  c.set_ncu_name("x__" + c.metric());
  c.set_value(value);
  c.set_unit(std::move(unit));
  c.set_tool("ncu");
  return c;
}

// What the H200 read for ladder A's rungs A1 (ld.shared) and A3 (ldmatrix), in part.
v1::Measurement Rung(std::string variant, double lds, double ldsm, double lsu) {
  v1::Measurement m;
  m.set_variant(std::move(variant));
  m.set_dtype("bf16");
  m.mutable_shape()->set_m(4096);
  m.mutable_shape()->set_n(4096);
  m.mutable_shape()->set_k(4096);
  m.set_status(v1::MEASUREMENT_STATUS_OK);
  m.mutable_stats()->set_median_ms(0.5428);
  m.mutable_stats()->set_samples(928);
  *m.add_counters() = C("shared_load_instructions", lds, "inst");
  *m.add_counters() = C("ldmatrix_instructions", ldsm, "inst");
  *m.add_counters() = C("lsu_pipe_utilisation", lsu, "%");
  *m.add_counters() = C("dram_throughput", 395.1e9, "byte/s");
  *m.add_counters() = C("stall_wait", 1.81, "cycles/inst");
  *m.add_counters() = C("stall_selected", 1.0, "cycles/inst");
  *m.add_counters() = C("stall_mio_throttle", 1.2, "cycles/inst");
  *m.add_counters() = C("stall_barrier", 0.61, "cycles/inst");
  return m;
}

int Column(const Table& t, const std::string& key) {
  for (size_t i = 0; i < t.columns.size(); ++i)
    if (t.columns[i].key == key) return int(i);
  return -1;
}

TEST(RenderCounters, TopStallsLeaveOutTheIssuingWarp) {
  const v1::Measurement m = Rung("a", 1, 0, 1);
  EXPECT_EQ(TopStalls({m.counters().begin(), m.counters().end()}, 2),
            "wait 1.81, mio_throttle 1.20");
  EXPECT_EQ(TopStalls({}, 3), "");
}

TEST(RenderCounters, ShortColumnsForPeopleEveryCounterForMachines) {
  const std::vector<v1::Measurement> ms = {Rung("abl_L1_R0_bl0_s3_sw1", 67108864, 0, 60.84),
                                           Rung("abl_L1_R1_bl0_s3_sw1", 0, 16777216, 27.55)};
  const Table people = MeasurementsWithCounters(ms);
  const int lds = Column(people, "shared_load_instructions");
  const int lsu = Column(people, "lsu_pipe_utilisation");
  const int dram = Column(people, "dram_throughput");
  ASSERT_GE(lds, 0);
  ASSERT_GE(lsu, 0);
  ASSERT_GE(dram, 0);
  EXPECT_EQ(people.columns[size_t(lds)].title, "LDS inst");
  EXPECT_EQ(people.rows[0][size_t(lds)].text, "67.11M");
  EXPECT_EQ(people.rows[0][size_t(lds)].Exact(), "67108864");
  EXPECT_EQ(people.rows[1][size_t(Column(people, "ldmatrix_instructions"))].text, "16.78M");
  EXPECT_EQ(people.rows[1][size_t(lsu)].text, "27.6");
  EXPECT_EQ(people.rows[0][size_t(dram)].text, "395.1");         // GB/s for people
  EXPECT_EQ(people.rows[0][size_t(dram)].Exact(), "3.951e+11");  // byte/s for machines
  EXPECT_EQ(people.rows[0][size_t(Column(people, "top_stalls"))].text,
            "wait 1.81, mio_throttle 1.20, barrier 0.61");
  EXPECT_LT(Column(people, "stall_wait"), 0);  // stalls are one column for people

  const Table machines = MeasurementsWithAllCounters(ms);
  EXPECT_GE(Column(machines, "stall_wait"), 0);
  EXPECT_GE(Column(machines, "stall_selected"), 0);
  EXPECT_LT(Column(machines, "top_stalls"), 0);
  const std::string csv = RenderCsv(machines);
  EXPECT_NE(csv.find("shared_load_instructions,ldmatrix_instructions,lsu_pipe_utilisation"),
            std::string::npos)
      << csv;
  EXPECT_NE(csv.find(",67108864,0,60.84,3.951e+11,1.81,"), std::string::npos) << csv;
}

TEST(RenderCounters, ARowWithoutCountersShowsDashesAndItsNote) {
  v1::Measurement refused = Rung("abl_L1_R0_bl1_s3_sw1", 0, 0, 0);
  refused.clear_counters();
  refused.set_counters_note("not profiled: the GPU's performance counters are restricted");
  const Table t = MeasurementsWithCounters({Rung("a", 1, 2, 3), refused});
  EXPECT_EQ(t.rows[1][size_t(Column(t, "shared_load_instructions"))].text, "-");
  EXPECT_EQ(t.rows[1][size_t(Column(t, "counters_note"))].text, refused.counters_note());
  EXPECT_EQ(t.columns[size_t(Column(t, "counters_note"))].title, "counters");
}

TEST(RenderCounters, WithoutCountersTheTableIsTheMeasurementsTableAsBefore) {
  v1::Measurement m = Rung("a", 1, 2, 3);
  m.clear_counters();
  const Table t = MeasurementsWithCounters({m});
  EXPECT_LT(Column(t, "shared_load_instructions"), 0);
  EXPECT_LT(Column(t, "counters_note"), 0);
}

TEST(RenderCounters, ProfileTablesOneRowPerCounterAndPerKernel) {
  v1::ProfileResponse r;
  r.set_tool("/usr/local/cuda/bin/ncu");
  r.set_tool_version("2025.3.1.0");
  r.set_arch("sm_90");
  r.mutable_device()->set_name("NVIDIA H200");
  for (const auto& m : {Rung("abl_L1_R0_bl0_s3_sw1", 67108864, 0, 60.84),
                        Rung("abl_L1_R1_bl0_s3_sw1", 0, 16777216, 27.55)}) {
    auto* k = r.add_kernels();
    k->set_variant(m.variant());
    k->set_dtype(m.dtype());
    *k->mutable_shape() = m.shape();
    *k->mutable_counters() = m.counters();
  }
  auto* failed = r.add_kernels();
  failed->set_variant("cublas_bf16");
  failed->set_error("variant cublas_bf16 runs a library, not a kernel of ours");

  const Table long_form = ProfileCountersTable(r);
  EXPECT_EQ(long_form.rows.size(), 8u + 8u + 1u);
  EXPECT_EQ(long_form.rows[3][4].text, "395.1");
  EXPECT_EQ(long_form.rows[3][5].text, "GB/s");
  EXPECT_EQ(long_form.rows.back()[7].text,
            "error: variant cublas_bf16 runs a library, not a kernel of ours");

  const std::string text = RenderProfile(r);
  EXPECT_NE(text.find("profiled with /usr/local/cuda/bin/ncu 2025.3.1.0 on NVIDIA H200 (sm_90)"),
            std::string::npos);
  EXPECT_NE(text.find("top stalls (cycles per issued instruction): wait 1.81"), std::string::npos);
  EXPECT_NE(text.find("error: variant cublas_bf16 runs a library"), std::string::npos);
  const Table summary = ProfileSummaryTable(r, false);
  EXPECT_EQ(summary.rows.size(), 3u);
  EXPECT_GE(Column(summary, "error"), 0);
}

}  // namespace
}  // namespace ablation::client
