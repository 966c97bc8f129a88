// The ncu CSV parser and the counter table on REAL output: tests/core/testdata/ncu holds what
// ncu 2025.3.1 printed on an H200 for ladder A's rungs and B3/B6 at 4096^3 bf16 (README there).
#include "server/core/inspect/ncu_csv.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "server/core/inspect/profiler.h"
#include "server/core/plan/counters.h"

namespace ablation::core {
namespace {

std::string Fixture(const std::string& name) {
  std::ifstream f(std::string(NCU_TESTDATA_DIR) + "/" + name);
  EXPECT_TRUE(f.good()) << name;
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

double Value(const NcuLaunch& launch, const std::string& metric) {
  auto it = launch.metrics.find(metric);
  EXPECT_NE(it, launch.metrics.end()) << metric;
  if (it == launch.metrics.end()) return -1;
  return ParseNcuNumber(it->second.text).value_or(-1);
}

TEST(NcuCsv, SplitsQuotedRecordsWithCommasInside) {
  EXPECT_EQ(SplitCsvRecord(R"csv("0","void k<1, 2>(int)","4,118,558.05","")csv"),
            (std::vector<std::string>{"0", "void k<1, 2>(int)", "4,118,558.05", ""}));
  EXPECT_EQ(SplitCsvRecord(R"csv("a ""quoted"" b",x)csv"),
            (std::vector<std::string>{"a \"quoted\" b", "x"}));
}

TEST(NcuCsv, NumbersDropThousandsSeparatorsAndRefuseNotApplicable) {
  EXPECT_DOUBLE_EQ(*ParseNcuNumber("4,118,558,814,953.05"), 4118558814953.05);
  EXPECT_DOUBLE_EQ(*ParseNcuNumber("60.84"), 60.84);
  EXPECT_DOUBLE_EQ(*ParseNcuNumber("0"), 0);
  EXPECT_FALSE(ParseNcuNumber("n/a"));
  EXPECT_FALSE(ParseNcuNumber(""));
  EXPECT_FALSE(ParseNcuNumber("12 MB"));
}

TEST(NcuCsv, ReadsTheRawPageOfLadderARungsOnTheH200) {
  const NcuOutput a1 = ParseNcuCsv(Fixture("abl_L1_R0_bl0_s3_sw1.csv"));
  ASSERT_EQ(a1.launches.size(), 1u);
  const NcuLaunch& l = a1.launches[0];
  EXPECT_EQ(l.cc, "9.0");
  EXPECT_EQ(l.id, "0");
  EXPECT_NE(l.kernel_name.find("AblationGemmKernel<__nv_bfloat16, Config<1, 0, 0, 3, 1, 0>>"),
            std::string::npos);
  // ld.shared, B as [k][n]: 4 LDS per LDSM of the ldmatrix rung, no LDSM at all.
  EXPECT_EQ(Value(l, "smsp__sass_inst_executed_op_shared_ld.sum"), 67108864);
  EXPECT_EQ(Value(l, "smsp__sass_inst_executed_op_ldsm.sum"), 0);
  EXPECT_EQ(Value(l, "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"), 13882);
  EXPECT_DOUBLE_EQ(Value(l, "sm__inst_executed_pipe_lsu.avg.pct_of_peak_sustained_active"), 60.84);
  EXPECT_EQ(l.metrics.at("lts__t_bytes.sum.per_second").unit, "byte/s");
  EXPECT_EQ(l.metrics.at("gpu__time_duration.sum").unit, "ns");
  EXPECT_EQ(l.metrics.at("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum").unit, "");
  // ncu's own lines are kept apart, not taken for records.
  EXPECT_EQ(a1.warnings.size(), 1u);
  EXPECT_NE(a1.warnings[0].find("unmodified GPU clocks"), std::string::npos);
  EXPECT_TRUE(a1.errors.empty());

  const NcuLaunch a3 = ParseNcuCsv(Fixture("abl_L1_R1_bl0_s3_sw1.csv")).launches.at(0);
  EXPECT_EQ(Value(a3, "smsp__sass_inst_executed_op_shared_ld.sum"), 0);
  EXPECT_EQ(Value(a3, "smsp__sass_inst_executed_op_ldsm.sum"), 16777216);
  // The same data through the LSU in fewer instructions: wavefronts as A2's, LSU half of A1's.
  const NcuLaunch a2 = ParseNcuCsv(Fixture("abl_L1_R0_bl1_s3_sw1.csv")).launches.at(0);
  EXPECT_NEAR(Value(a3, "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"),
              Value(a2, "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"), 1e5);
  EXPECT_LT(2 * Value(a3, "sm__inst_executed_pipe_lsu.avg.pct_of_peak_sustained_active"),
            Value(l, "sm__inst_executed_pipe_lsu.avg.pct_of_peak_sustained_active"));
}

TEST(NcuCsv, ReadsAutoScaledUnitsAmongTheProgramsOwnLines) {
  const NcuOutput out = ParseNcuCsv(Fixture("abl_L1_R1_bl0_s3_sw1.auto_units_with_stderr.txt"));
  ASSERT_EQ(out.launches.size(), 1u);
  EXPECT_EQ(Value(out.launches[0], "smsp__sass_inst_executed_op_ldsm.sum"), 16777216);
}

TEST(NcuCsv, ReadsTheDetailsPageLayoutToo) {
  const std::string text =
      "==PROF== Connected to process 1\n"
      "\"ID\",\"Process ID\",\"Kernel Name\",\"CC\",\"Section Name\",\"Metric Name\",\"Metric "
      "Unit\",\"Metric Value\"\n"
      "\"0\",\"1\",\"k(int)\",\"8.0\",\"Raw\",\"sm__warps_active.avg.pct_of_peak_sustained_"
      "active\",\"%\",\"41.5\"\n"
      "\"0\",\"1\",\"k(int)\",\"8.0\",\"Raw\",\"dram__bytes.sum.per_second\",\"byte/"
      "s\",\"1,000\"\n";
  const NcuOutput out = ParseNcuCsv(text);
  ASSERT_EQ(out.launches.size(), 1u);
  EXPECT_EQ(out.launches[0].cc, "8.0");
  EXPECT_DOUBLE_EQ(Value(out.launches[0], "sm__warps_active.avg.pct_of_peak_sustained_active"),
                   41.5);
  EXPECT_EQ(out.launches[0].metrics.at("dram__bytes.sum.per_second").unit, "byte/s");
}

TEST(NcuCsv, EveryDefaultSm90CounterIsInTheRealOutput) {
  std::vector<CounterSelection> selected;
  ASSERT_TRUE(SelectCounters({}, "sm_90", &selected).ok());
  const NcuLaunch l = ParseNcuCsv(Fixture("abl_L1_R1_bl0_s4_sw1_rb1.csv")).launches.at(0);
  for (const auto& s : selected) {
    // HGMMA was named after the capture; the end-to-end run on the H200 read it (0 for mma.sync).
    if (s.metric == "tensor_pipe_hgmma_utilisation") continue;
    EXPECT_TRUE(l.metrics.count(s.ncu_name)) << s.metric << " = " << s.ncu_name;
  }
  const std::vector<v1::Counter> counters = CountersFromNcu({{l}, {}, {}}, selected, "2025.3.1.0");
  ASSERT_EQ(counters.size(), selected.size());
  for (const auto& c : counters) {
    EXPECT_EQ(c.tool(), "ncu");
    EXPECT_EQ(c.tool_version(), "2025.3.1.0");
    if (c.metric() == "tensor_pipe_hmma_utilisation") EXPECT_DOUBLE_EQ(c.value(), 67.0);
    if (c.metric() == "stall_math_pipe_throttle") {
      EXPECT_DOUBLE_EQ(c.value(), 2.66);
      EXPECT_EQ(c.unit(), "cycles/inst");  // the counter table's, not ncu's "inst"
    }
    if (c.metric() == "tensor_pipe_hgmma_utilisation") {
      EXPECT_FALSE(c.has_value());
      EXPECT_NE(c.note().find("ncu printed no value"), std::string::npos) << c.note();
    }
  }
}

}  // namespace
}  // namespace ablation::core
