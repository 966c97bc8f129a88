// Timing one window: the variants of one problem interleaved sample by sample, cycle after cycle,
// each sample between CUDA events and clock probes, until the window's GPU time (and cycle count)
// is reached. Inputs first (resident where an earlier task left them), then the optional warm-up
// launches, then the samples; the reply carries each variant's samples and statistics, the
// window's totals, the L2 mode and the occupancy. The regime (how the GPU is brought to its
// state before the window) is the daemon's: server/core/gpu/regime.h.
#pragma once

#include <string>

#include "ablation/v1/worker.pb.h"
#include "kernels/registry.h"
#include "server/worker/device.h"
#include "server/worker/resident.h"

namespace ablation::worker {

/// "" and *result filled (everything but task_id and ok), or why the window failed (with
/// result->failed_variant naming the variant whose launch failed, where one did); the cost as far
/// as it got either way. A variant that cannot run the problem is left out of the window (its
/// MemberResult says why) and the others are measured. Inputs, rotation copies and occupancy come
/// from `res` where an earlier task left them, and stay there.
std::string RunMeasure(Device& d, Resident& res, const kernels::Registry& registry,
                       const ::ablation::worker::v1::MeasureTask& task,
                       ::ablation::worker::v1::MeasureResult* result);

}  // namespace ablation::worker
