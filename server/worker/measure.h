// Timing one variant on one problem: warm-up, occupancy, then samples between CUDA events until
// the stopping rule (sampling.h) ends them; the reply carries the samples, their statistics, the
// L2 mode and the occupancy.
#pragma once

#include <string>

#include "ablation/v1/worker.pb.h"
#include "kernels/registry.h"
#include "server/worker/device.h"

namespace ablation::worker {

/// "" and *result filled (everything but task_id and ok), or why the measurement failed.
std::string RunMeasure(Device& d, const kernels::Registry& registry,
                       const ::ablation::worker::v1::MeasureTask& task,
                       ::ablation::worker::v1::MeasureResult* result);

}  // namespace ablation::worker
