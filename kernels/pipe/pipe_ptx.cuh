// Inline PTX the pipe_ family needs beyond kernels/common/ptx.cuh: the zero-filling cp.async of
// ragged edges, ldmatrix x4 .trans, the int8 mma.sync and 16-byte shared stores. Valid on sm_80+.
#pragma once

#include <cstdint>

namespace ablation::kernels::pipe::ptx {

/// cp.async.cg of one 16-byte chunk of which only the first `src_bytes` (0..16) are read; the rest
/// of the 16 destination bytes are zero-filled. src must be 16-byte aligned (any valid address
/// when src_bytes is 0: nothing is read).
__device__ __forceinline__ void CpAsyncCg16ZeroFill(uint32_t smem_dst, const void* gmem_src,
                                                    uint32_t src_bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_dst), "l"(gmem_src),
               "r"(src_bytes)
               : "memory");
}

/// 16-byte st.shared.
__device__ __forceinline__ void StShared128(uint32_t smem_addr, const uint4& v) {
  asm volatile("st.shared.v4.b32 [%0], {%1, %2, %3, %4};\n" ::"r"(smem_addr), "r"(v.x), "r"(v.y),
               "r"(v.z), "r"(v.w)
               : "memory");
}

/// ldmatrix x4 .trans: four 8x8 b16 matrices, each transposed on the way (B stored K x N).
__device__ __forceinline__ void LdmatrixX4Trans(uint32_t (&r)[4], uint32_t smem_addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_addr));
}

/// mma.sync m16n8k32, A row-major s8, B column-major s8, s32 accumulate in place (IMMA).
__device__ __forceinline__ void MmaM16N8K32S8(int32_t (&d)[4], const uint32_t (&a)[4],
                                              const uint32_t (&b)[2]) {
  asm volatile(
      "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 "
      "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
      : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

}  // namespace ablation::kernels::pipe::ptx
