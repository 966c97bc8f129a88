// The SIMT (FP32 FFMA) ladder, the CUDA-core side of the SIMT vs Tensor Core comparison: tile
// shape and the five rungs. Host-only, so the catalog states names, tile and shared memory without
// CUDA and the launchers bind the same names.
#pragma once

#include <cstdint>

namespace ablation::kernels::simt_gemm {

inline constexpr int kBlockM = 128;
inline constexpr int kBlockN = 128;
inline constexpr int kBlockK = 8;
inline constexpr int kThreads = 256;  // 16 x 16 threads, 8 x 8 outputs each
inline constexpr int kThreadM = 8;
inline constexpr int kThreadN = 8;
/// One stage: the A tile (128 x 8) and the B tile (8 x 128), fp32, no padding.
inline constexpr int64_t kStageBytes = int64_t(kBlockM * kBlockK + kBlockK * kBlockN) * 4;  // 8 KiB

/// One rung of the ladder; each switches on one more knob than the previous.
struct SimtRung {
  const char* name;
  int a_transposed;   ///< 1: A stored as As[k][m], the inner loop reads A as float4
  int swizzle;        ///< 1: XOR swizzle of the transposed A store (bank-conflict free)
  int coalesced_c;    ///< 1: C written with float4 stores, 256 contiguous bytes per warp row
  int double_buffer;  ///< 1: two smem stages, the next tile's ld.global overlaps the FFMAs
};

inline constexpr SimtRung kSimtRungs[] = {
    {"simt_tiling", 0, 0, 0, 0},
    {"simt_at", 1, 0, 0, 0},
    {"simt_at_swizzle", 1, 1, 0, 0},
    {"simt_at_swizzle_rw", 1, 1, 1, 0},
    {"simt_at_swizzle_dbf_rw", 1, 1, 1, 1},
};
inline constexpr int kSimtRungCount = int(sizeof(kSimtRungs) / sizeof(kSimtRungs[0]));

constexpr int64_t SmemBytes(int double_buffer) { return (double_buffer ? 2 : 1) * kStageBytes; }

}  // namespace ablation::kernels::simt_gemm
