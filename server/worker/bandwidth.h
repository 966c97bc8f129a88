// The device memory's achievable bandwidth, measured by the worker's own copy kernel: what a
// kernel of its own contract's bytes per second are held against (its memory roof).
#pragma once

#include <string>

namespace ablation::worker {

/// Copies `bytes` (rounded down to 16-byte words) between two fresh buffers with a grid-stride
/// kernel of 16-byte loads and stores, 3 launches to warm up then 20 timed with events on
/// `stream`; *bytes_per_second is the median launch's bytes read plus written over its time.
/// "" or what failed (nothing is left allocated).
std::string MeasureCopyBandwidth(size_t bytes, void* stream, double* bytes_per_second);

}  // namespace ablation::worker
