// What a window does around its samples and not in them (measure.cc): the L2's persisting lines
// cleared, the warm-up, a member's occupancy (cached per kernel), the proto's name of the L2
// method.
#pragma once

#include <string>
#include <vector>

#include "ablation/v1/ablation.pb.h"
#include "server/protocol/sampling.h"
#include "server/worker/device.h"
#include "server/worker/resident.h"
#include "server/worker/sample_batch.h"
#include "server/worker/sample_plan.h"
#include "server/worker/variant_lookup.h"

namespace ablation::worker {

/// The proto's name of the worker's L2 method (the protocol's RequestedL2Mode names what was
/// asked).
::ablation::v1::L2Mode ToL2Mode(L2Method method);

/// The warm-up: at least warmup_count cycles of the window's launches and warmup_seconds of wall
/// time (bounded by max_seconds: a kernel of seconds a launch), synchronised after each cycle,
/// so that module loading, the launch path's caches and cuBLAS's heuristics are behind the
/// samples. The clocks are the regime's business (the daemon settles or cools the GPU around the
/// windows). *cycle_ms: the wall time of the last cycle, the first batch's estimate (high for
/// small kernels, whose launches the synchronisation dominates, which only makes it short).
std::string WarmUp(Device& d, const std::vector<WindowMember>& members,
                   const protocol::SamplingOptions& o, double* cycle_ms);

/// No line of the L2 stays pinned from before: the persisting-L2 limit is set to 0 and what
/// persists is reset, before every measurement. Not every device has a persisting L2 (the limit
/// needs compute capability 8.0): where the call is refused, the error is cleared and logged once.
void ResetPersistingL2(Device& d);

/// The occupancy of r's kernel, from the resident answer when this kernel has had one; nothing
/// for a library entry (cuBLAS), which has no kernel of ours to describe.
std::string CachedOccupancy(Device& d, Resident& res, const Ready& r,
                            ::ablation::v1::Occupancy* occ);

}  // namespace ablation::worker
