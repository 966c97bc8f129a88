// The report of a stored run with hardware counters: ladder A's shared-load instructions, bank
// conflicts, LSU and the ratio beside the smem -> register micro-benchmark, ladder B's tensor pipe
// and stall mix, the architecture table's achieved occupancy. The counters are what the daemon
// makes of real H200 ncu output (tests/core/testdata/ncu, through its own parser and counter
// table), written to and read back from a real store, as GetRun with include_counters gives them.
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "client/output/render_counters.h"
#include "client/report/report.h"
#include "db/store.h"
#include "server/core/inspect/ncu_csv.h"
#include "server/core/inspect/profiler.h"
#include "server/core/plan/counters.h"
#include "tests/client/support/served_catalog.h"

namespace ablation::client::report {
namespace {

namespace v1 = ::ablation::v1;
using ::testing::HasSubstr;
using ::testing::Not;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The counters the daemon stores for a fixture's launch: the default set, sm_90's names.
std::vector<v1::Counter> FixtureCounters(const std::string& variant) {
  std::vector<core::CounterSelection> selection;
  EXPECT_TRUE(core::SelectCounters({}, "sm_90", &selection).ok());
  const std::string text = ReadFile(std::string(NCU_TESTDATA_DIR) + "/" + variant + ".csv");
  EXPECT_FALSE(text.empty()) << variant;
  return core::CountersFromNcu(core::ParseNcuCsv(text), selection, "2025.3.1.0");
}

v1::DeviceIdentity H200() {
  v1::DeviceIdentity d;
  d.set_name("NVIDIA H200");
  d.set_uuid("GPU-0f1e2d3c");
  d.set_compute_capability("9.0");
  d.set_sm_count(132);
  d.set_driver_version("580.159.04");
  d.set_cuda_runtime_version("13.0");
  d.set_cublas_version("13.1.0");
  return d;
}

class CountersReport : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = (std::filesystem::temp_directory_path() /
             ("counters_report_" + std::to_string(::getpid()) + ".db"))
                .string();
    std::filesystem::remove(path_);
    store_ = db::Store::Open(path_);
    v1::Run run;
    run.set_state(v1::RUN_STATE_QUEUED);
    run.set_kind(v1::RUN_KIND_ABLATION);
    run.set_clock_policy("observe");
    run.set_rounds(1);
    run.add_tags("paper");
    run_ = store_->CreateRun(run);
    store_->MarkRunStarted(run_, H200(), 1'764'590'400'000);
  }
  void TearDown() override {
    store_.reset();
    for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path_ + suffix);
  }

  // One round of an item at 4096^3 bf16: samples around `ms`, NVML telemetry, occupancy, and the
  // fixture's counters when `profiled`.
  void Add(const std::string& variant, double ms, bool profiled) {
    v1::Measurement m;
    m.set_run_id(run_);
    m.set_sequence(++sequence_);
    m.set_variant(variant);
    m.set_dtype("bf16");
    m.mutable_shape()->set_m(4096);
    m.mutable_shape()->set_n(4096);
    m.mutable_shape()->set_k(4096);
    m.set_status(v1::MEASUREMENT_STATUS_OK);
    for (int i = 0; i < 20; ++i) m.add_sample_ms(ms * (1 + 0.001 * std::sin(double(i))));
    m.mutable_stats()->set_median_ms(ms);
    m.mutable_stats()->set_samples(20);
    const bool micro = variant.rfind("smem2reg_", 0) == 0;
    m.set_tflops(micro ? 0 : 2.0 * 4096 * 4096 * 4096 / (ms * 1e-3) / 1e12);
    if (micro) {
      m.set_bytes_per_second(3.0 * 4096 * 4096 * 4096 / 32 * 2 / (ms * 1e-3));
      m.set_fragment_loads_per_second(variant.find("_R1_") != std::string::npos ? 82e9 : 246e9);
    }
    v1::Telemetry& t = *m.mutable_telemetry();
    t.set_available(true);
    t.set_sm_clock_mhz_mean(1830);
    t.set_sm_clock_mhz_min(1755);
    t.set_power_w_mean(690);
    t.set_throttled_samples(5);
    t.add_throttle_reasons("sw_power_cap");
    m.mutable_occupancy()->set_theoretical_occupancy(0.25);
    m.mutable_occupancy()->set_limiter("registers");
    if (profiled)
      for (const v1::Counter& c : FixtureCounters(variant)) *m.add_counters() = c;
    store_->InsertMeasurement(m);
  }

  v1::Report Build() {
    v1::GetRunResponse response;
    *response.mutable_run() = *store_->GetRun(run_);
    std::vector<v1::Measurement> rows = store_->MeasurementsOfRun(run_, true);
    store_->FillCounters(rows);
    for (auto& m : rows) *response.add_measurements() = std::move(m);
    static const auto* presets = new std::vector<v1::Preset>(testing::ServedPresets());
    static const auto* variants = new std::vector<v1::Variant>(testing::ServedVariants());
    return BuildReport(response, *presets, *variants);
  }

  void AddLadders(bool profiled) {
    Add("cublas_bf16", 0.184, false);
    Add("abl_L1_R0_bl0_s3_sw1", 0.543, profiled);      // A1
    Add("abl_L1_R0_bl1_s3_sw1", 0.512, profiled);      // A2
    Add("abl_L1_R1_bl0_s3_sw1", 0.427, profiled);      // A3, B4
    Add("abl_L1_R1_bl0_s2_sw1", 0.430, profiled);      // B3
    Add("abl_L1_R1_bl0_s4_sw1_rb1", 0.362, profiled);  // B6
  }

  std::string path_;
  std::unique_ptr<db::Store> store_;
  std::int64_t run_ = 0;
  int sequence_ = 0;
};

const v1::ReportSection& Section(const v1::Report& r, const std::string& id) {
  for (const auto& s : r.sections())
    if (s.id() == id) return s;
  throw std::runtime_error("no section " + id);
}

const v1::ReportRow& Row(const v1::ReportSection& s, const std::string& rung) {
  for (const auto& r : s.rows())
    if (r.rung() == rung) return r;
  throw std::runtime_error("no row " + rung);
}

const v1::Counter* CounterOf(const v1::ReportRow& row, const std::string& metric) {
  for (const auto& c : row.counters())
    if (c.metric() == metric) return &c;
  return nullptr;
}

TEST_F(CountersReport, LadderAGainsLoadInstructionsConflictsLsuAndTheRatio) {
  AddLadders(true);
  Add("smem2reg_R0_bl0_sw1", 0.2724, false);
  Add("smem2reg_R1_bl0_sw1", 0.2049, false);
  const v1::Report report = Build();
  EXPECT_EQ(report.run().counters_tool(), "ncu 2025.3.1.0");
  const v1::ReportSection& a = Section(report, "ladder-a");
  EXPECT_THAT(a.counters(),
              ::testing::ElementsAre("shared_load_instructions", "ldmatrix_instructions",
                                     "shared_load_bank_conflicts", "lsu_pipe_utilisation"));
  // Only the section's counters, with sm_90's metric names as the counter table gave them.
  const v1::ReportRow& a1 = Row(a, "A1");
  ASSERT_EQ(a1.counters_size(), 4);
  const v1::Counter* lds = CounterOf(a1, "shared_load_instructions");
  ASSERT_NE(lds, nullptr);
  EXPECT_EQ(lds->ncu_name(), "smsp__sass_inst_executed_op_shared_ld.sum");
  EXPECT_DOUBLE_EQ(lds->value(), 67108864);
  EXPECT_NEAR(CounterOf(a1, "lsu_pipe_utilisation")->value(), 60.8, 0.1);
  // ld.shared against ldmatrix: 4x the instructions with B as [k][n], 3x as [n][k].
  EXPECT_EQ(a1.shared_load_ratio_vs(), "A3");
  EXPECT_NEAR(a1.shared_load_ratio(), 4.0, 0.01);
  EXPECT_NEAR(Row(a, "A2").shared_load_ratio(), 3.0, 0.01);
  EXPECT_NEAR(Row(a, "A3").shared_load_ratio(), 1.0, 1e-12);
  EXPECT_FALSE(Row(a, "cuBLAS").has_shared_load_ratio());
  // Beside each rung, the micro-benchmark of its load path.
  EXPECT_EQ(a1.micro().variant(), "smem2reg_R0_bl0_sw1");
  EXPECT_EQ(Row(a, "A3").micro().variant(), "smem2reg_R1_bl0_sw1");
  EXPECT_FALSE(Row(a, "A2").has_micro());  // smem2reg_R0_bl1_sw1 not measured
  EXPECT_NEAR(Row(a, "A3").micro().fragment_loads_per_second(), 82e9, 1e8);
  // The conditions of every row: NVML clocks, power, throttling, occupancy.
  EXPECT_EQ(a1.conditions().sm_clock_mhz_mean(), 1830);
  EXPECT_EQ(a1.conditions().sm_clock_mhz_min(), 1755);
  EXPECT_EQ(a1.conditions().power_w_mean(), 690);
  EXPECT_DOUBLE_EQ(a1.conditions().throttled_share(), 0.25);
  EXPECT_DOUBLE_EQ(a1.theoretical_occupancy(), 0.25);

  const std::string md = RenderReportMarkdown(report);
  EXPECT_THAT(md, HasSubstr("| rung | variant | SM MHz mean / min | power W | throttled | "
                            "theoretical occupancy | LDS inst | LDSM inst | bank conflicts | LSU % "
                            "| LDS+LDSM inst vs A3 | smem->reg micro-benchmark | micro TB/s | "
                            "micro G loads/s |"));
  EXPECT_THAT(md, HasSubstr("| A1 | `abl_L1_R0_bl0_s3_sw1` | 1830 / 1755 | 690 | 25% "
                            "(sw_power_cap) | 25% (registers) | 67.11M | 0 | 13.88k | 60.8 | "
                            "4.00x | smem2reg_R0_bl0_sw1 |"));
  EXPECT_THAT(md, HasSubstr("LDS inst: smsp__sass_inst_executed_op_shared_ld.sum"));
  // CSV: the conditions and every counter of the row, exact, in the stored unit.
  const std::string csv = RenderReportCsv(report);
  EXPECT_THAT(csv, HasSubstr(",1830,1755,690,0.25,0.25,4,shared_load_instructions=67108864;"
                             "ldmatrix_instructions=0;shared_load_bank_conflicts="));
  const std::string html = RenderReportHtml(report);
  EXPECT_THAT(html, HasSubstr("<table class=\"conditions\">"));
  EXPECT_THAT(html, HasSubstr("<th>LDS+LDSM inst vs A3</th>"));
  EXPECT_THAT(html, HasSubstr("counters</th><td>ncu 2025.3.1.0</td>"));
}

TEST_F(CountersReport, LadderBGainsTensorPipeAndStallsTheArchitectureTableOccupancy) {
  AddLadders(true);
  const v1::Report report = Build();
  const v1::ReportSection& b = Section(report, "ladder-b");
  const v1::ReportRow& b6 = Row(b, "B6");
  ASSERT_NE(CounterOf(b6, "tensor_pipe_hmma_utilisation"), nullptr);
  EXPECT_NEAR(CounterOf(b6, "tensor_pipe_hmma_utilisation")->value(), 67.0, 0.1);
  EXPECT_EQ(
      TopStalls({b6.counters().begin(), b6.counters().end()}, 1).rfind("math_pipe_throttle", 0),
      0u);
  EXPECT_EQ(CounterOf(b6, "shared_load_instructions"), nullptr);  // not this section's
  EXPECT_FALSE(b6.has_shared_load_ratio());
  const std::string md = RenderReportMarkdown(report);
  EXPECT_THAT(md, HasSubstr("| HMMA % |"));
  EXPECT_THAT(md, HasSubstr("top stalls (cycles/inst)"));
  EXPECT_THAT(md, HasSubstr("math_pipe_throttle 2.66"));
  // HGMMA reads n/a on mma.sync kernels and IMMA 0: no empty column for either.
  EXPECT_THAT(md, Not(HasSubstr("HGMMA %")));
  EXPECT_THAT(md, Not(HasSubstr("IMMA %")));

  const v1::ReportRow& best = Row(Section(report, "arch"), "best bf16");
  EXPECT_EQ(best.variant(), "abl_L1_R1_bl0_s4_sw1_rb1");
  ASSERT_EQ(best.counters_size(), 1);
  EXPECT_EQ(best.counters(0).metric(), "achieved_occupancy");
  EXPECT_NEAR(best.counters(0).value(), 23.8, 0.2);
  EXPECT_THAT(md, HasSubstr("| theoretical occupancy | achieved occupancy % |"));
  EXPECT_THAT(md,
              HasSubstr("achieved occupancy %: sm__warps_active.avg.pct_of_peak_sustained_active"));
}

TEST_F(CountersReport, ARunWithoutCountersRendersWithoutCounterColumns) {
  AddLadders(false);
  const v1::Report report = Build();
  EXPECT_EQ(report.run().counters_tool(), "");
  for (const auto& s : report.sections())
    for (const auto& r : s.rows()) EXPECT_EQ(r.counters_size(), 0) << r.variant();
  const std::string md = RenderReportMarkdown(report);
  for (const char* column : {"LDS inst", "HMMA %", "top stalls", "occupancy %", "LDS+LDSM",
                             "smem->reg micro-benchmark |", "Counters:"})
    EXPECT_THAT(md, Not(HasSubstr(column)));
  // The conditions still show: they come with every row.
  EXPECT_THAT(md, HasSubstr("| rung | variant | SM MHz mean / min | power W | throttled | "
                            "theoretical occupancy |\n"));
  EXPECT_THAT(RenderReportHtml(report), Not(HasSubstr("hardware counters</caption>")));
}

}  // namespace
}  // namespace ablation::client::report
