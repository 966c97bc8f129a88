// Timing one variant on one problem: inputs, warm-up, occupancy, then samples between CUDA events
// until the stopping rule (sampling.h) ends them; the reply carries the samples, their statistics,
// the L2 mode and the occupancy.
#pragma once

#include <string>

#include "ablation/v1/worker.pb.h"
#include "kernels/registry.h"
#include "server/worker/device.h"
#include "server/worker/resident.h"

namespace ablation::worker {

/// "" and *result filled (everything but task_id and ok), or why the measurement failed; the
/// cost as far as it got either way. Inputs, rotation copies and occupancy come from `res` where
/// an earlier measurement left them, and stay there.
std::string RunMeasure(Device& d, Resident& res, const kernels::Registry& registry,
                       const ::ablation::worker::v1::MeasureTask& task,
                       ::ablation::worker::v1::MeasureResult* result);

}  // namespace ablation::worker
