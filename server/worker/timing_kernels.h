// Small helper kernels of the timing loop. CUDA-free header.
#pragma once

#include <cstdint>
#include <string>

namespace ablation::worker {

/// Enqueues a one-thread kernel that spins for `ns` nanoseconds of GPU time (globaltimer). Put
/// before a sample's start event, it keeps the GPU busy while the host enqueues the event and the
/// launch, so that host launch latency never lands between the events (which it would for a
/// kernel of a few microseconds on an idle stream). Returns "" or the CUDA error.
std::string EnqueueDelay(void* stream, uint32_t ns);

}  // namespace ablation::worker
