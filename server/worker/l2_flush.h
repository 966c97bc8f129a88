// The L2 flush of a cold sample: every line of the L2 evicted, and none left dirty. CUDA-free
// header: streams are cudaStream_t passed as void*.
//
// A flush by writes alone (cudaMemset of a buffer of twice the L2, as nvbench and Triton do) evicts
// the previous sample's lines but leaves the L2 full of the flush's own dirty lines; the sample
// after it then writes them back while it runs, and a memory-bound kernel is charged for up to an
// L2 of write traffic that is not its own. So the writes are followed by `discard.global.L2` over
// the flush buffer (PTX ISA 7.4, sm_80 and later): a write of indeterminate values that tells the
// L2 it may drop those lines without writing them back. PTX calls it a hint: whether the hardware
// drops them is what the GPU test (tests/worker/gpu/l2_flush_gpu_test.cu) measures.
#pragma once

#include <cstddef>
#include <string>

namespace ablation::worker {

/// Enqueues on `stream`: `buffer` (`bytes` of device memory, at least twice the L2, 128-byte
/// aligned as cudaMalloc gives it) set to `value`'s low byte, then every whole 128-byte line of it
/// discarded from the L2. `value` should change from one flush to the next, so that no layer can
/// treat the writes as redundant. The buffer's contents are undefined afterwards. "" or the CUDA
/// error of the step that failed.
std::string EnqueueL2Flush(void* stream, void* buffer, size_t bytes, unsigned value);

/// Enqueues the discard alone: every whole 128-byte line of `buffer` dropped from the L2 without a
/// write-back (what EnqueueL2Flush does after its writes). "" or the launch's CUDA error.
std::string EnqueueL2Discard(void* stream, void* buffer, size_t bytes);

}  // namespace ablation::worker
