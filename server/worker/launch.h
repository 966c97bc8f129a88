// A resolved variant's run on the device: its problem's buffers (memory checked before anything
// is allocated, inputs seeded, output poisoned), its launch arguments, and a launch whose every
// error is caught. Measuring and verifying both run variants this way, so that a measured kernel
// and a verified one see the same inputs for the same seed.
#pragma once

#include <cstdint>
#include <string>

#include "kernels/common/buffers.h"
#include "kernels/registry.h"
#include "server/worker/device.h"
#include "server/worker/variant_lookup.h"

namespace ablation::worker {

/// Device buffers of one problem: A, the logical K x N B, its N x K transpose when a variant
/// wants it, the output and, for a GPU reference, the reference's output.
struct Buffers {
  kernels::DeviceBuffer a, b_kn, b_nk, c, c_ref;
};

/// Checks that `outputs` (1 or 2) outputs and the inputs fit in free memory, allocates them,
/// fills A and B from SeedsFor(seed), transposes B when need_nk, poisons C and synchronises.
std::string MakeInputs(Device& d, const kernels::Problem& p, uint64_t seed, bool need_nk,
                       int outputs, Buffers* b);

/// The launch arguments of `r` on `b` writing `c`, with the device's stream, handles and
/// workspace; B in the layout the variant wants.
kernels::GemmArgs ArgsFor(const Device& d, const Ready& r, const Buffers& b, void* c);

/// Launches and checks both the launcher's status and cudaGetLastError.
std::string LaunchChecked(Device& d, const Ready& r, const kernels::GemmArgs& args);

}  // namespace ablation::worker
