// The statistics a measurement reply carries (MeasureResult.stats), computed from the reply's own
// samples with ComputeStats (sampling.h). The daemon stores them as they come, so the real worker
// and its test double both fill them here, and nothing else computes them.
#pragma once

#include "ablation/v1/worker.pb.h"

namespace ablation::worker {

/// Sets result->stats from result->sample_ms: median, mean, stddev, min, max, q1, q3 (ms), the
/// sample count, the noise (0 where it is not finite: fewer than two samples, or a mean that is
/// not positive) and total_seconds (the sum of the samples, in seconds).
void SetStatsFromSamples(::ablation::worker::v1::MeasureResult* result);

}  // namespace ablation::worker
