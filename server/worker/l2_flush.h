// The L2 flush of a cold sample: every line of the L2 evicted, and none left dirty. CUDA-free
// header: streams are cudaStream_t passed as void*.
//
// A flush by writes alone (cudaMemset of a buffer of twice the L2, as nvbench and Triton do) evicts
// the previous sample's lines but may leave the flush's own dirty lines in the L2, for the sample
// after it to write back while it runs. How many it leaves is the hardware's business, and on the
// H100 it cost little at 128 MB a launch: the Triton softmax read 95.6% of the measured bandwidth
// after such a flush (evidence/2026-12-05-h100-triton). So the writes are followed by
// `discard.global.L2` over the flush buffer (PTX ISA 7.4, sm_80 and later): a write of
// indeterminate values that lets the L2 drop those lines without writing them back, whatever the
// hardware would have done, for one short kernel outside the events. PTX calls it a hint; the GPU
// test (tests/worker/gpu/l2_flush_gpu_test.cu) times a read after each kind of flush.
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
