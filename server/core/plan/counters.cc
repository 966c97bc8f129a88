#include "server/core/plan/counters.h"

#include <algorithm>
#include <cctype>
#include <set>

namespace ablation::core {
namespace {

// The stall reasons ncu's WarpStateStats section reads, as the per-issue ratio: the average
// number of warps stalled for that reason per cycle in which an instruction issued, so the
// reasons add up to the warp cycles between two issued instructions (a CPI breakdown). Chosen
// over smsp__pcsamp_warps_issue_stalled_*: those are PC samples, statistical, and need ncu's
// sampling pass; the ratio comes from the counters of the same replay as everything else.
constexpr std::string_view kStallReasons[] = {"long_scoreboard",
                                              "short_scoreboard",
                                              "mio_throttle",
                                              "lg_throttle",
                                              "math_pipe_throttle",
                                              "barrier",
                                              "wait",
                                              "not_selected",
                                              "selected",
                                              "dispatch_stall",
                                              "no_instruction",
                                              "branch_resolving",
                                              "membar",
                                              "drain",
                                              "sleeping",
                                              "tex_throttle",
                                              "imc_miss",
                                              "misc"};

std::vector<CounterConcept> Build() {
  std::vector<CounterConcept> c = {
      {"shared_load_instructions", "lsu", "smsp__sass_inst_executed_op_shared_ld.sum",
       "smsp__sass_inst_executed_op_shared_ld.sum", "inst",
       "ld.shared (LDS) warp instructions executed. SASS-patched: on sm_90 the hardware count "
       "smsp__inst_executed_op_shared_ld also counts ~3M instructions of a kernel with no LDS"},
      {"ldmatrix_instructions", "lsu", "smsp__sass_inst_executed_op_ldsm.sum",
       "smsp__sass_inst_executed_op_ldsm.sum", "inst",
       "ldmatrix (LDSM) warp instructions executed"},
      {"shared_load_wavefronts", "lsu", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
       "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum", "",
       "shared-memory load wavefronts (LDS and LDSM): the passes the data took, conflicts "
       "included; the same for the same bytes"},
      {"shared_load_bank_conflicts", "lsu",
       "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
       "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum", "",
       "bank conflicts of shared-memory loads (LDS and LDSM)"},
      {"lsu_pipe_utilisation", "lsu", "sm__inst_executed_pipe_lsu.avg.pct_of_peak_sustained_active",
       "sm__inst_executed_pipe_lsu.avg.pct_of_peak_sustained_active", "%",
       "LSU pipe instructions against the pipe's peak while the SM was active"},
      {"tensor_pipe_hmma_utilisation", "tensor",
       "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active",
       "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active", "%",
       "cycles the tensor pipe ran HMMA (mma.sync fp16/bf16/tf32)"},
      {"tensor_pipe_imma_utilisation", "tensor",
       "sm__pipe_tensor_op_imma_cycles_active.avg.pct_of_peak_sustained_active",
       "sm__pipe_tensor_op_imma_cycles_active.avg.pct_of_peak_sustained_active", "%",
       "cycles the tensor pipe ran IMMA (mma.sync int8)"},
      {"tensor_pipe_hgmma_utilisation", "tensor", "",
       "sm__inst_executed_pipe_tensor_op_gmma.avg.pct_of_peak_sustained_active", "%",
       "warpgroup MMA (wgmma: HGMMA, IGMMA) instructions against the pipe's peak; sm_90 on"},
      {"achieved_occupancy", "occupancy", "sm__warps_active.avg.pct_of_peak_sustained_active",
       "sm__warps_active.avg.pct_of_peak_sustained_active", "%",
       "active warps against the SM's maximum, while the SM was active"},
      {"issue_slot_utilisation", "stalls", "smsp__issue_active.avg.pct_of_peak_sustained_active",
       "smsp__issue_active.avg.pct_of_peak_sustained_active", "%",
       "cycles in which a scheduler issued an instruction"},
      {"l2_throughput", "memory", "lts__t_bytes.sum.per_second", "lts__t_bytes.sum.per_second",
       "byte/s", "bytes through the L2 slices per second"},
      {"dram_throughput", "memory", "dram__bytes.sum.per_second", "dram__bytes.sum.per_second",
       "byte/s", "DRAM bytes read and written per second"},
      {"launch_duration", "", "gpu__time_duration.sum", "gpu__time_duration.sum", "ns",
       "the profiled launch under the profiler, to see that it is representative; never a "
       "timing sample"},
  };
  // Built once and kept for the process's life, so the views below point into them.
  static const std::vector<std::string>* names = [] {
    auto* v = new std::vector<std::string>();
    for (std::string_view r : kStallReasons) {
      v->push_back("stall_" + std::string(r));
      v->push_back("smsp__average_warps_issue_stalled_" + std::string(r) +
                   "_per_issue_active.ratio");
    }
    return v;
  }();
  for (size_t i = 0; i < names->size(); i += 2)
    c.push_back({(*names)[i], "stalls", (*names)[i + 1], (*names)[i + 1], "cycles/inst",
                 "warps stalled for this reason per issued instruction (WarpStateStats)"});
  return c;
}

bool IsRawMetricName(const std::string& w) {
  if (w.find("__") == std::string::npos || w.size() > 200) return false;
  return std::all_of(w.begin(), w.end(), [](char ch) {
    return std::islower(static_cast<unsigned char>(ch)) ||
           std::isdigit(static_cast<unsigned char>(ch)) || ch == '_' || ch == '.';
  });
}

std::string SetNames() {
  std::string out;
  for (const auto& s : CounterSets()) out += (out.empty() ? "" : ", ") + std::string(s.name);
  return out;
}

}  // namespace

const std::vector<CounterConcept>& CounterConcepts() {
  static const std::vector<CounterConcept> concepts = Build();
  return concepts;
}

const std::vector<CounterSet>& CounterSets() {
  static const std::vector<CounterSet> sets = {
      {"default", "every concept below"},
      {"lsu", "shared-load instructions (ld.shared, ldmatrix), wavefronts, bank conflicts, LSU"},
      {"tensor", "tensor pipe utilisation: HMMA, IMMA, HGMMA where present"},
      {"memory", "L2 and DRAM throughput"},
      {"occupancy", "achieved occupancy"},
      {"stalls", "issue-slot utilisation and the warp stall reasons"},
  };
  return sets;
}

std::string CounterFamily(std::string_view arch) {
  if (arch.size() < 5 || arch.substr(0, 3) != "sm_") return "";
  int cc = 0;
  for (char ch : arch.substr(3)) {
    if (!std::isdigit(static_cast<unsigned char>(ch))) break;
    cc = cc * 10 + (ch - '0');
  }
  if (cc >= 90) return "sm_90";
  if (cc >= 80) return "sm_80";
  return "";
}

Status SelectCounters(const std::vector<std::string>& words, std::string_view arch,
                      std::vector<CounterSelection>* out) {
  out->clear();
  const std::string family = CounterFamily(arch);
  if (family.empty())
    return InvalidArgument(
        "the counter table names metrics for sm_80 and later; the device "
        "is " +
        (arch.empty() ? std::string("of unknown architecture") : std::string(arch)));
  std::vector<std::string> list;
  for (const auto& w : words) {
    for (size_t b = 0; b <= w.size();) {
      size_t e = w.find(',', b);
      if (e == std::string::npos) e = w.size();
      std::string item = w.substr(b, e - b);
      item.erase(0, item.find_first_not_of(' '));
      item.erase(item.find_last_not_of(' ') + 1);
      if (!item.empty()) list.push_back(item);
      b = e + 1;
    }
  }
  if (list.empty()) list.push_back("default");
  std::set<std::string> seen;
  auto add = [&](const CounterConcept& c, bool named) {
    const std::string_view ncu = family == "sm_90" ? c.sm90 : c.sm80;
    if (ncu.empty() && !named) return;  // a set takes what the architecture has
    if (!seen.insert(std::string(c.name)).second) return;
    CounterSelection s{std::string(c.name), std::string(ncu), std::string(c.unit), ""};
    if (ncu.empty()) s.note = "no such counter on " + family;
    out->push_back(std::move(s));
  };
  for (const auto& word : list) {
    const auto& sets = CounterSets();
    const bool is_set =
        std::any_of(sets.begin(), sets.end(), [&](const CounterSet& s) { return s.name == word; });
    if (is_set) {
      for (const auto& c : CounterConcepts())
        if (word == "default" || c.group == word) add(c, false);
      continue;
    }
    const auto& cat = CounterConcepts();
    auto concept_it = std::find_if(cat.begin(), cat.end(),
                                   [&](const CounterConcept& c) { return c.name == word; });
    if (concept_it != cat.end()) {
      add(*concept_it, true);
      continue;
    }
    if (IsRawMetricName(word)) {
      // A concept's own metric asked for by its raw name is that concept.
      auto same = std::find_if(cat.begin(), cat.end(), [&](const CounterConcept& c) {
        return (family == "sm_90" ? c.sm90 : c.sm80) == word;
      });
      if (same != cat.end()) {
        add(*same, true);
      } else if (seen.insert(word).second) {
        out->push_back({word, word, "", ""});  // the tool says its unit
      }
      continue;
    }
    if (word.find("__") != std::string::npos)
      return InvalidArgument("metrics: '" + word +
                             "' is not an Nsight Compute metric name (lower case, digits, '_' "
                             "and '.', as smsp__issue_active.avg)");
    return InvalidArgument("metrics: unknown set or counter '" + word + "'; sets: " + SetNames() +
                           "; or a concept (shared_load_instructions, ...) or a raw ncu metric "
                           "name");
  }
  return Status::Ok();
}

}  // namespace ablation::core
