// The input sets a measurement's samples rotate through to find the L2 cold without a flush: the
// measurement's own inputs and, for L2Method::kRotate, copies of them, filled with the same seeded
// values, in one allocation that stays resident with the problem's inputs (resident_inputs.h).
// PlanL2 (sample_plan.h) decides how many, on this device's L2 and free memory.
#pragma once

#include <string>
#include <vector>

#include "kernels/registry.h"
#include "server/protocol/sampling.h"
#include "server/worker/resident_inputs.h"
#include "server/worker/sample_plan.h"
#include "server/worker/variant_lookup.h"

namespace ablation::worker {

/// Plans the L2 method for `o` and gives the sets' launch arguments: `base` (the arguments on the
/// current problem's own inputs) alone, or for a rotation base and plan->copies - 1 copies of A
/// and of B in the variant's layout, each set's arguments those of base with A and B replaced.
/// A rotation whose copies cannot be allocated falls back to the flush, as one that does not fit
/// does; plan->note says why. *reused: the copies were resident already.
std::string MakeInputSets(ResidentInputs& inputs, const Ready& r, const kernels::GemmArgs& base,
                          const protocol::SamplingOptions& o, L2Plan* plan,
                          std::vector<kernels::GemmArgs>* sets, bool* reused);

}  // namespace ablation::worker
