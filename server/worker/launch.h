// A resolved variant's run on the device: its launch arguments on a problem's inputs (resident
// between tasks: resident_inputs.h), and a launch whose every error is caught. Measuring and
// verifying both run variants this way, so that a measured kernel and a verified one see the same
// inputs for the same seed.
#pragma once

#include <string>

#include "kernels/registry.h"
#include "server/worker/device.h"
#include "server/worker/resident_inputs.h"
#include "server/worker/variant_lookup.h"

namespace ablation::worker {

/// The launch arguments of `r` on `in` writing `c`, with the device's stream, handles and
/// workspace; B in the layout the variant wants.
kernels::GemmArgs ArgsFor(const Device& d, const Ready& r, const ProblemInputs& in, void* c);

/// Launches and checks both the launcher's status and cudaGetLastError.
std::string LaunchChecked(Device& d, const Ready& r, const kernels::GemmArgs& args);

}  // namespace ablation::worker
