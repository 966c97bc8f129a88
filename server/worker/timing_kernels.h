// Small helper kernels of the timing loop. CUDA-free header: streams are cudaStream_t passed as
// void*, and every function returns "" or the CUDA error of the launch.
#pragma once

#include <cstdint>
#include <string>

#include "kernels/common/problem.h"
#include "server/protocol/clocks.h"

namespace ablation::worker {

/// Enqueues a one-thread kernel that writes *out: %globaltimer, %clock64 and %smid. It first
/// waits for the timer to tick (the timer may advance only every microsecond or so) and reads the
/// cycle counter right after the tick, so that the timer's granularity does not enter the clock
/// computed from two probes (EffectiveSmMhz); the wait is at most one tick. `out` is device memory.
std::string EnqueueProbe(void* stream, protocol::ClockProbe* out);

/// Enqueues a one-thread kernel that holds the stream until the host writes a non-zero `gate[0]`
/// (host memory mapped for the device, cudaHostAllocMapped), so that a whole batch of samples is
/// enqueued before the first one runs and no host launch latency falls between a sample's events
/// (nvbench's blocking kernel). After `timeout_ns` of waiting it gives up and writes 1 to
/// gate[1]: the host was held up (or the queue could not take the batch), and the batch's
/// samples may hold host time.
std::string EnqueueGate(void* stream, volatile int* gate, uint64_t timeout_ns);

/// Enqueues the comparison of a timed launch's output with its reference, both `count` elements
/// of dtype's output type (bf16, fp16, fp32, int32), on the device: sums[0] = sum of (out -
/// ref)^2, sums[1] = sum of ref^2, sums[2] = elements of `out` that are not finite (the poison
/// included). `sums` (3 doubles of device memory) is zeroed first, in the stream.
std::string EnqueueErrorSums(void* stream, const void* out, const void* ref, size_t count,
                             kernels::DType dtype, double* sums);

}  // namespace ablation::worker
