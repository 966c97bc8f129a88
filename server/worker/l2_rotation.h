// The input sets a measurement's samples rotate through to find the L2 cold without a flush: the
// measurement's own inputs and, for L2Method::kRotate, copies of them, filled with the same seeded
// values, in one allocation. PlanL2 (sample_plan.h) decides how many, on this device's L2 and
// free memory.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/common/buffers.h"
#include "kernels/registry.h"
#include "server/worker/device.h"
#include "server/worker/launch.h"
#include "server/worker/sample_plan.h"
#include "server/worker/variant_lookup.h"

namespace ablation::worker {

struct InputSets {
  kernels::DeviceBuffer copies;         // every set but the first, A then B, 256-byte aligned
  std::vector<kernels::GemmArgs> args;  // one per set; args[0] is the measurement's own
};

/// Plans the L2 method for `o` and makes the sets: `base` (the arguments on b) alone, or for a
/// rotation base and plan->copies - 1 copies of A and of B in the variant's layout, filled from
/// SeedsFor(seed) as MakeInputs fills b (B transposed from b.b_kn for kNK variants), each set's
/// arguments those of base with A and B replaced. A rotation whose copies cannot be allocated
/// falls back to the flush, as one that does not fit does; plan->note says why.
std::string MakeInputSets(Device& d, const Ready& r, const Buffers& b,
                          const kernels::GemmArgs& base, uint64_t seed, const SamplingOptions& o,
                          L2Plan* plan, InputSets* sets);

}  // namespace ablation::worker
