// Tensor maps (TMA descriptors) of the sm90 family, encoded on the host through the driver's
// cuTensorMapEncodeTiled, looked up with cudaGetDriverEntryPointByVersion so that nothing links
// libcuda directly (the worker's only driver dependency stays the CUDA runtime).
#pragma once

#include <cuda.h>

#include <cstdint>
#include <string>

namespace ablation::kernels::sm90 {

/// A map of a row-major bf16 matrix `rows` x `k` (K contiguous) whose box is `box_rows` rows of
/// 64 elements (128 bytes) with the 128-byte swizzle. "" or what failed.
std::string EncodeKMajorBf16(CUtensorMap* map, const void* base, int64_t rows, int64_t k,
                             int box_rows);
/// The same for elements of `element_bytes` (2: bf16; 1: e4m3, as bytes): boxes of 128 bytes of
/// a row (128 / element_bytes elements) by `box_rows` rows.
std::string EncodeKMajor(CUtensorMap* map, const void* base, int64_t rows, int64_t k, int box_rows,
                         int element_bytes);

/// "" when this process's current device can run sm_90a code (compute capability 9.0), else a
/// sentence naming the device's capability. Cached: the worker owns one device.
const std::string& Sm90DeviceError();

/// The current device's multiprocessor count (cached).
int Sm90SmCount();

/// Global memory of the stream-K fix-up for one launch: at least `partial_bytes` of partial sums
/// and `flags` 32-bit flags, kept for the process and grown when a launch needs more (the worker
/// owns one device and launches from one thread), and the launch's epoch: a number no flag holds
/// yet (one counter for the process, since every stream-K launch shares the flags). "" or what
/// failed.
std::string StreamKWorkspace(int64_t partial_bytes, int64_t flags, void** partials,
                             uint32_t** flag_words, uint32_t* epoch);

}  // namespace ablation::kernels::sm90
