// The fixed tile shape of the ablation family, the same for every variant so that only the knobs
// differ: BM=BN=128, BK=32, 8 warps of 64x32, mma m16n8k16. Host-only so the catalog can state
// tile and shared memory without CUDA.
#pragma once

#include <cstdint>

namespace ablation::kernels::ablation_gemm {

inline constexpr int kBlockM = 128;
inline constexpr int kBlockN = 128;
inline constexpr int kBlockK = 32;
inline constexpr int kThreads = 256;
inline constexpr int kWarpM = 64;
inline constexpr int kWarpN = 32;
/// Bytes of one input element (bf16 and fp16 alike).
inline constexpr int kElementBytes = 2;
/// One stage holds an A tile (BM x BK) and a B tile (BK x BN), no padding (swizzle or not).
inline constexpr int64_t kStageBytes =
    int64_t(kBlockM * kBlockK + kBlockK * kBlockN) * kElementBytes;  // 16 KiB

/// Dynamic shared memory of a variant: the stages and nothing else (the epilogue writes C from
/// registers, so no staging buffer is added).
constexpr int64_t SmemBytes(int stages) { return stages * kStageBytes; }

}  // namespace ablation::kernels::ablation_gemm
