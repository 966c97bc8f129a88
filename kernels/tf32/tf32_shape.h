// The TF32 Tensor Core pair, the Tensor Core side of the SIMT vs Tensor Core comparison (TF32
// runs at about half the FP16 Tensor Core rate, so its TFLOPS are not to be set against bf16's):
// tile shape and the two variants. Host-only, so the catalog states names, tile and shared memory
// without CUDA and the launchers bind the same names.
#pragma once

#include <cstdint>

namespace ablation::kernels::tf32_gemm {

inline constexpr int kBlockM = 128;
inline constexpr int kBlockN = 128;
inline constexpr int kBlockK = 16;
inline constexpr int kThreads = 256;  // 8 warps, 2 (M) x 4 (N)
inline constexpr int kWarpM = 64;
inline constexpr int kWarpN = 32;
inline constexpr int kStages = 2;  // double buffer
/// One stage: the A tile (128 x 16) and the B tile (16 x 128), fp32 words holding tf32 values.
inline constexpr int64_t kStageBytes =
    int64_t(kBlockM * kBlockK + kBlockK * kBlockN) * 4;       // 16 KiB
inline constexpr int64_t kSmemBytes = kStages * kStageBytes;  // 32 KiB

struct Tf32Variant {
  const char* name;
  int load_mode;  ///< 0: ld.global.v4 + st.shared.v4 through registers, 1: cp.async.cg 16 B
};

inline constexpr Tf32Variant kTf32Variants[] = {
    {"tf32_sync_swizzle_dbf", 0},
    {"tf32_cpasync_swizzle_dbf", 1},
};
inline constexpr int kTf32VariantCount = int(sizeof(kTf32Variants) / sizeof(kTf32Variants[0]));

}  // namespace ablation::kernels::tf32_gemm
