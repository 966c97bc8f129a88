// The hardware counters the daemon reads, by concept: one name that means the same thing on every
// architecture ("shared_load_instructions"), and each architecture's Nsight Compute metric for it.
// Names differ where the hardware does (HGMMA exists from sm_90 on) and where a metric reads
// "n/a" on one architecture but has an equivalent (smsp__inst_executed_pipe_lsu_mem_shared_op_ld
// is unknown to ncu 2025.3 on sm_90; the SASS-patched smsp__sass_inst_executed_op_shared_ld counts
// the same LDS instructions there and on sm_80). Every sm_90 name here was read on an H200 with
// ncu 2025.3.1 (tests/core/testdata/ncu); every sm_80 name is one `ncu --query-metrics --chip
// ga100` lists.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "server/core/base/status.h"

namespace ablation::core {

/// One concept: its metric on each architecture family ("" where there is none) and its unit.
struct CounterConcept {
  std::string_view name;   ///< "shared_load_instructions"
  std::string_view group;  ///< the set it belongs to besides "default": lsu, tensor, ...
  std::string_view sm80;   ///< Ampere and Ada (sm_80, sm_86, sm_89)
  std::string_view sm90;   ///< Hopper and later
  std::string_view unit;   ///< as stored: "inst", "%", "byte/s", "ns", "cycles/inst", "" (a count)
  std::string_view what;   ///< one line: what it counts, and why this metric
};

/// Every concept, in the order they are shown.
const std::vector<CounterConcept>& CounterConcepts();

/// The named sets `--metrics` takes, each with a line that says what it is for.
struct CounterSet {
  std::string_view name;
  std::string_view what;
};
const std::vector<CounterSet>& CounterSets();

/// The family whose names apply to a device architecture: "sm_80" for sm_80..sm_89, "sm_90" for
/// sm_90 and later; "" for anything older or unreadable ("sm_75", "").
std::string CounterFamily(std::string_view arch);

/// One counter to read: its name in the reply, the tool's name for it, its unit. A concept that
/// the architecture does not have, asked for by name, has no ncu_name and a note saying so.
struct CounterSelection {
  std::string metric;
  std::string ncu_name;
  std::string unit;
  std::string note;
};

/// Resolves `--metrics` words for `arch`: set names, concept names and raw ncu metric names
/// (anything with "__"), each word possibly a comma-separated list; none means the default set.
/// A concept the architecture lacks is left out of a set and noted when named alone; duplicates
/// collapse. InvalidArgument names an unknown word (with the sets), a malformed raw name, or an
/// architecture the counter table has no names for.
Status SelectCounters(const std::vector<std::string>& words, std::string_view arch,
                      std::vector<CounterSelection>* out);

}  // namespace ablation::core
