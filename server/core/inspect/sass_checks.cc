// The inspection's answer: each kernel's verdict and the checks a variant's SASS is held to (its
// main loop overlaps loads and compute; no spills; the instructions its family promises).
// Running the disassembler and choosing the kernel are in sass_inspect.cc.
#include <cstdint>
#include <map>

#include "server/core/inspect/sass_inspect.h"

namespace ablation::core {

namespace {

void FillKernel(const SassVerdict& v, v1::SassKernel* k) {
  k->set_loop_found(v.loop_found);
  k->set_loop_start(v.loop_start);
  k->set_loop_end(v.loop_end);
  k->set_loop_instructions(v.loop_instructions);
  k->set_compute_opcode(v.compute_opcode);
  k->set_compute_per_iteration(v.compute_per_iteration);
  k->set_compute_in_inner_loops(v.compute_in_inner_loops);
  k->set_load_opcode(v.load_opcode);
  k->set_loads(v.loads);
  k->set_overlapping_loads(v.overlapping_loads);
  k->set_overlap(v.overlap);
  k->set_barrier_after_compute(v.barrier_after_compute);
  k->set_local_loads(v.local_loads);
  k->set_local_stores(v.local_stores);
  k->set_verdict(!v.loop_found ? "no main loop" : v.overlap ? "overlap" : "no overlap");
  k->set_summary(DescribeVerdict(v));
}

void AddCheck(v1::SassKernel* k, const std::string& name, bool passed, const std::string& detail) {
  auto* c = k->add_checks();
  c->set_name(name);
  c->set_passed(passed);
  c->set_detail(detail);
}

/// Instructions of `f` whose mnemonic is `mnemonic` and whose opcode contains `part`, between two
/// offsets (inclusive; the whole function by default).
int CountInstructions(const SassFunction& f, std::string_view mnemonic, std::string_view part = "",
                      int64_t first = INT64_MIN, int64_t last = INT64_MAX) {
  int n = 0;
  for (const auto& i : f.instructions)
    n += i.offset >= first && i.offset <= last && i.mnemonic == mnemonic &&
         i.opcode.find(part) != std::string::npos;
  return n;
}

// The checks of the main loop of the kernel asked about: its loads overlap its compute, and a
// barrier (or an mbarrier arrive) keeps a stage from being refilled while it is read.
void AddLoopChecks(const SassVerdict& v, const SassFunction& function, const SassTarget& target,
                   v1::SassKernel* k) {
  const int tma_loads = target.expect_tma ? CountInstructions(function, "UTMALDG") : 0;
  if (v.overlap) {
    AddCheck(k, "overlap", true,
             std::to_string(v.overlapping_loads) + " of " + std::to_string(v.loads) + " " +
                 v.load_opcode + " reach " + v.compute_opcode + " with no BAR.SYNC between (" +
                 HexOffset(v.first_overlap_load) + " -> " + HexOffset(v.overlap_compute) + ")");
  } else if (v.loads == 0 && tma_loads > 0) {
    AddCheck(k, "overlap", true,
             "no load in the compute loop: the TMA loads (UTMALDG) are issued by a producer in "
             "its own loop and complete on mbarriers while the consumers compute");
  } else if (v.loads == 0) {
    AddCheck(k, "overlap", false, "no global load in the main loop");
  } else {
    AddCheck(k, "overlap", false,
             "every " + v.load_opcode + " is separated from " + v.compute_opcode +
                 " by a BAR.SYNC (" + HexOffset(v.blocking_barrier) + "): load, sync, compute");
  }
  // An mbarrier pipeline (the sm90 family's TMA rungs) releases a stage with an arrive
  // (SYNCS.ARRIVE) instead of a block barrier.
  const int arrives = target.expect_tma && !v.barrier_after_compute
                          ? CountInstructions(function, "SYNCS", "ARRIVE", v.loop_start, v.loop_end)
                          : 0;
  if (arrives > 0) {
    AddCheck(k, "barrier_after_compute", true,
             std::to_string(arrives) +
                 " mbarrier arrives (SYNCS.ARRIVE) release the stages in "
                 "the main loop; no block barrier needed");
  } else if (!v.barrier_after_compute && v.barrier_before_refill) {
    AddCheck(k, "barrier_after_compute", true,
             "BAR.SYNC at " + HexOffset(v.refill_barrier) +
                 " between the last shared-memory reads and every refill; the " + v.compute_opcode +
                 " after it compute from fragments already in registers");
  } else {
    AddCheck(k, "barrier_after_compute", v.barrier_after_compute,
             v.barrier_after_compute ? "BAR.SYNC at " + HexOffset(v.barrier_after) +
                                           " after the last " + v.compute_opcode
                                     : "no BAR.SYNC between the compute and the next iteration's");
  }
}

// The checks of the kernel's code: its compute count beside its family's, the tensor instruction
// and loads its family names, no spills; and the annotated excerpt of its main loop.
void AddCodeChecks(const SassVerdict& v, const SassFunction& function,
                   const std::vector<SassTarget>& targets, const std::vector<SassVerdict>& verdicts,
                   const std::vector<bool>& judged, v1::SassKernel* k) {
  const int tma_loads = targets[0].expect_tma ? CountInstructions(function, "UTMALDG") : 0;
  std::string counts =
      std::to_string(v.compute_per_iteration) + " " + v.compute_opcode + " per iteration";
  if (v.compute_in_inner_loops > 0)
    counts += " (" + std::to_string(v.compute_in_inner_loops) + " in an inner loop)";
  bool same = true;
  int compared = 0;
  std::string others;
  for (size_t i = 1; i < targets.size(); ++i) {
    if (!judged[i] || !verdicts[i].loop_found) continue;
    ++compared;
    others += (others.empty() ? "" : ", ") + targets[i].variant + " " +
              std::to_string(verdicts[i].compute_per_iteration);
    same &= verdicts[i].compute_per_iteration == v.compute_per_iteration &&
            verdicts[i].compute_opcode == v.compute_opcode;
  }
  if (compared == 0)
    AddCheck(k, "compute_count", true, counts + "; no family variant to compare with");
  else
    AddCheck(k, "compute_count", same, counts + (same ? ", as in " : ", unlike ") + others);
  const int local = v.local_loads + v.local_stores;
  // A family that names its tensor instruction (the sm90 family: "wgmma" -> HGMMA, "mma.sync"
  // -> HMMA) and its loads ("tma" -> UTMALDG) is held to them.
  if (!targets[0].expect_tensor.empty()) {
    const bool ok = v.compute_opcode == targets[0].expect_tensor;
    AddCheck(k, "tensor_instruction", ok,
             "main loop computes with " + v.compute_opcode + (ok ? ", as " : ", not ") +
                 targets[0].expect_tensor + " as the variant's mainloop says");
  }
  if (targets[0].expect_tma) {
    AddCheck(k, "tma_loads", tma_loads > 0,
             tma_loads > 0 ? std::to_string(tma_loads) + " UTMALDG in the kernel"
                           : "no UTMALDG: the variant says TMA loads");
  }
  AddCheck(k, "spills", local == 0,
           local == 0 ? "no LDL/STL"
                      : std::to_string(v.local_loads) + " LDL, " + std::to_string(v.local_stores) +
                            " STL (" + std::to_string(v.local_in_loop) + " in the main loop)");
  for (const auto& line : v.excerpt) {
    auto* l = k->add_excerpt();
    l->set_offset(line.offset);
    l->set_marker(line.marker);
    l->set_text(line.text);
  }
}

}  // namespace

v1::SassResponse BuildSassResponse(const std::string& listing,
                                   const std::vector<SassTarget>& targets) {
  v1::SassResponse response;
  std::map<std::string, const SassFunction*> by_name;
  std::vector<SassFunction> functions = ParseSass(listing);
  for (const auto& f : functions) by_name[f.name] = &f;
  if (!functions.empty()) response.set_arch(functions.front().arch);

  std::vector<SassVerdict> verdicts(targets.size());
  std::vector<bool> judged(targets.size(), false);
  for (size_t i = 0; i < targets.size(); ++i) {
    const auto& t = targets[i];
    v1::SassKernel* k = i == 0 ? response.mutable_kernel() : response.add_family();
    k->set_variant(t.variant);
    k->set_dtype(t.dtype);
    k->set_symbol(t.symbol);
    k->set_build(t.build);
    if (!t.error.empty()) {
      k->set_error(t.error);
      k->set_verdict("error");
      continue;
    }
    auto it = by_name.find(t.symbol);
    if (it == by_name.end()) {
      k->set_error("the disassembler printed no SASS for " + t.symbol);
      k->set_verdict("error");
      continue;
    }
    verdicts[i] = InspectFunction(*it->second);
    judged[i] = true;
    FillKernel(verdicts[i], k);
  }

  // The checks of the kernel asked about.
  v1::SassKernel* k = response.mutable_kernel();
  if (!judged[0] || !verdicts[0].loop_found) return response;
  const SassVerdict& v = verdicts[0];
  const SassFunction& function = *by_name[targets[0].symbol];
  AddLoopChecks(v, function, targets[0], k);
  AddCodeChecks(v, function, targets, verdicts, judged, k);
  return response;
}

}  // namespace ablation::core
