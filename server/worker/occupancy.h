// The occupancy a measured kernel of ours reaches on this device: the driver's count of resident
// blocks, and which resource limits it (ComputeOccupancyLimits, since the driver does not say).
#pragma once

#include <string>

#include "ablation/v1/ablation.pb.h"
#include "server/worker/device.h"
#include "server/worker/variant_lookup.h"

namespace ablation::worker {

/// Fills *occ for r's kernel; leaves it untouched for a library entry (cuBLAS), which has no
/// kernel of ours to describe. Call after the variant has launched: a launcher may set the
/// kernel's dynamic shared memory limit on first use, and the calculator honours it.
std::string FillOccupancy(Device& d, const Ready& r, ::ablation::v1::Occupancy* occ);

}  // namespace ablation::worker
