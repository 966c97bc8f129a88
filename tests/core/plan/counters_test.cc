#include "server/core/plan/counters.h"

#include <gtest/gtest.h>

#include <set>

namespace ablation::core {
namespace {

const CounterSelection* Find(const std::vector<CounterSelection>& s, const std::string& metric) {
  for (const auto& c : s)
    if (c.metric == metric) return &c;
  return nullptr;
}

TEST(CounterConcepts, ArchitectureFamilies) {
  EXPECT_EQ(CounterFamily("sm_80"), "sm_80");
  EXPECT_EQ(CounterFamily("sm_86"), "sm_80");
  EXPECT_EQ(CounterFamily("sm_89"), "sm_80");
  EXPECT_EQ(CounterFamily("sm_90"), "sm_90");
  EXPECT_EQ(CounterFamily("sm_100"), "sm_90");
  EXPECT_EQ(CounterFamily("sm_75"), "");
  EXPECT_EQ(CounterFamily(""), "");
  EXPECT_EQ(CounterFamily("gfx90a"), "");
}

TEST(CounterConcepts, ConceptsAreUniqueAndNamedOnBothArchitecturesButHgmma) {
  std::set<std::string> names;
  for (const auto& c : CounterConcepts()) {
    EXPECT_TRUE(names.insert(std::string(c.name)).second) << c.name;
    EXPECT_FALSE(c.sm90.empty()) << c.name;
    if (c.name != "tensor_pipe_hgmma_utilisation") EXPECT_FALSE(c.sm80.empty()) << c.name;
    EXPECT_NE(c.sm90.find("__"), std::string_view::npos) << c.name;
  }
  // The default set answers both ladders: shared loads, conflicts, LSU, tensor pipe, occupancy,
  // L2 and DRAM, issue slots and stalls.
  for (const char* needed :
       {"shared_load_instructions", "ldmatrix_instructions", "shared_load_bank_conflicts",
        "lsu_pipe_utilisation", "tensor_pipe_hmma_utilisation", "tensor_pipe_imma_utilisation",
        "tensor_pipe_hgmma_utilisation", "achieved_occupancy", "l2_throughput", "dram_throughput",
        "issue_slot_utilisation", "stall_long_scoreboard", "stall_short_scoreboard",
        "stall_mio_throttle", "stall_math_pipe_throttle", "stall_barrier"})
    EXPECT_TRUE(names.count(needed)) << needed;
}

TEST(CounterConcepts, SharedLoadsAreTheSassCountOnSm90) {
  std::vector<CounterSelection> s;
  ASSERT_TRUE(SelectCounters({"shared_load_instructions"}, "sm_90", &s).ok());
  ASSERT_EQ(s.size(), 1u);
  // The metric name usually quoted for shared loads (smsp__inst_executed_pipe_lsu_mem_shared_op_ld)
  // is unknown to ncu 2025.3 on sm_90.
  EXPECT_EQ(s[0].ncu_name, "smsp__sass_inst_executed_op_shared_ld.sum");
  EXPECT_EQ(s[0].unit, "inst");
}

TEST(CounterConcepts, DefaultSetPerArchitecture) {
  std::vector<CounterSelection> hopper, ampere;
  ASSERT_TRUE(SelectCounters({}, "sm_90", &hopper).ok());
  ASSERT_TRUE(SelectCounters({"default"}, "sm_86", &ampere).ok());
  EXPECT_EQ(hopper.size(), CounterConcepts().size());
  EXPECT_EQ(ampere.size() + 1, hopper.size());  // no HGMMA before sm_90
  EXPECT_EQ(Find(ampere, "tensor_pipe_hgmma_utilisation"), nullptr);
  ASSERT_NE(Find(hopper, "tensor_pipe_hgmma_utilisation"), nullptr);
  EXPECT_EQ(Find(hopper, "tensor_pipe_hgmma_utilisation")->ncu_name,
            "sm__inst_executed_pipe_tensor_op_gmma.avg.pct_of_peak_sustained_active");
  for (const auto& c : hopper) EXPECT_TRUE(c.note.empty()) << c.metric;
}

TEST(CounterConcepts, SetsConceptsAndRawNamesMix) {
  std::vector<CounterSelection> s;
  ASSERT_TRUE(
      SelectCounters({"lsu,occupancy", "stall_wait", "smsp__inst_executed_op_shared_ld.sum", "lsu"},
                     "sm_90", &s)
          .ok());
  ASSERT_NE(Find(s, "shared_load_instructions"), nullptr);
  ASSERT_NE(Find(s, "achieved_occupancy"), nullptr);
  ASSERT_NE(Find(s, "stall_wait"), nullptr);
  EXPECT_EQ(Find(s, "dram_throughput"), nullptr);
  // A raw name is its own metric, its unit left to the tool; duplicates collapse.
  const CounterSelection* raw = Find(s, "smsp__inst_executed_op_shared_ld.sum");
  ASSERT_NE(raw, nullptr);
  EXPECT_EQ(raw->ncu_name, raw->metric);
  EXPECT_EQ(raw->unit, "");
  EXPECT_EQ(s.size(), 5u + 1u + 1u + 1u);
  // A concept's own metric asked for by its raw name is the concept.
  ASSERT_TRUE(SelectCounters({"dram__bytes.sum.per_second"}, "sm_90", &s).ok());
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].metric, "dram_throughput");
}

TEST(CounterConcepts, AConceptTheArchitectureLacksIsNotedWhenNamed) {
  std::vector<CounterSelection> s;
  ASSERT_TRUE(SelectCounters({"tensor_pipe_hgmma_utilisation"}, "sm_80", &s).ok());
  ASSERT_EQ(s.size(), 1u);
  EXPECT_TRUE(s[0].ncu_name.empty());
  EXPECT_EQ(s[0].note, "no such counter on sm_80");
}

TEST(CounterConcepts, RefusalsNameTheWord) {
  std::vector<CounterSelection> s;
  Status st = SelectCounters({"lsu,bandwidth"}, "sm_90", &s);
  EXPECT_EQ(st.code(), Code::kInvalidArgument);
  EXPECT_NE(st.message().find("unknown set or counter 'bandwidth'"), std::string::npos);
  EXPECT_NE(st.message().find("lsu, tensor, memory"), std::string::npos);
  st = SelectCounters({"DRAM__bytes.sum;rm -rf"}, "sm_90", &s);
  EXPECT_NE(st.message().find("is not an Nsight Compute metric name"), std::string::npos);
  st = SelectCounters({}, "sm_75", &s);
  EXPECT_NE(st.message().find("the device is sm_75"), std::string::npos);
}

}  // namespace
}  // namespace ablation::core
