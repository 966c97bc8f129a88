// Inline PTX for the SM80 data paths the ablation measures: cp.async (LDGSTS), ldmatrix (LDSM) and
// mma.sync m16n8k16 (HMMA). Written as PTX rather than through CUDA intrinsics so that each
// variant emits exactly the instruction it claims to measure. Valid on sm_80 and later.
#pragma once

#include <cstdint>

namespace ablation::kernels::ptx {

/// Shared-memory address of a generic pointer, as the 32-bit operand ldmatrix / cp.async want.
__device__ __forceinline__ uint32_t SmemAddr(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

/// cp.async.cg: 16 bytes global -> shared, bypassing L1 (.cg), with an L2 128-byte prefetch hint.
__device__ __forceinline__ void CpAsyncCg16(uint32_t smem_dst, const void* gmem_src) {
  asm volatile("cp.async.cg.shared.global.L2::128B [%0], [%1], 16;\n" ::"r"(smem_dst), "l"(gmem_src)
               : "memory");
}

/// As CpAsyncCg16, reading `src_bytes` (0 or 16) of the source and filling the rest with zeros:
/// a chunk past a matrix's edge is copied as zeros from an address inside it.
__device__ __forceinline__ void CpAsyncCg16ZeroFill(uint32_t smem_dst, const void* gmem_src,
                                                    uint32_t src_bytes) {
  asm volatile("cp.async.cg.shared.global.L2::128B [%0], [%1], 16, %2;\n" ::"r"(smem_dst),
               "l"(gmem_src), "r"(src_bytes)
               : "memory");
}

/// Closes the group of cp.async issued since the last commit.
__device__ __forceinline__ void CpAsyncCommitGroup() {
  asm volatile("cp.async.commit_group;\n" ::: "memory");
}

/// Waits until at most N committed groups are still in flight (counts groups, not bytes).
template <int N>
__device__ __forceinline__ void CpAsyncWaitGroup() {
  static_assert(N >= 0 && N <= 7, "cp.async.wait_group takes an immediate 0..7");
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

/// ldmatrix x4: four 8x8 b16 matrices; lane l gives the row address of matrix l/8, row l%8.
__device__ __forceinline__ void LdmatrixX4(uint32_t (&r)[4], uint32_t smem_addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_addr));
}

/// ldmatrix x2: two 8x8 b16 matrices; lanes 0..15 give the row addresses.
__device__ __forceinline__ void LdmatrixX2(uint32_t (&r)[2], uint32_t smem_addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0, %1}, [%2];\n"
               : "=r"(r[0]), "=r"(r[1])
               : "r"(smem_addr));
}

/// ldmatrix x2.trans: as x2, each 8x8 matrix transposed on the way (B stored K-major).
__device__ __forceinline__ void LdmatrixX2Trans(uint32_t (&r)[2], uint32_t smem_addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0, %1}, [%2];\n"
               : "=r"(r[0]), "=r"(r[1])
               : "r"(smem_addr));
}

/// One 32-bit ld.shared (two b16 of a fragment register).
__device__ __forceinline__ uint32_t LdShared32(uint32_t smem_addr) {
  uint32_t v;
  asm volatile("ld.shared.b32 %0, [%1];\n" : "=r"(v) : "r"(smem_addr));
  return v;
}

/// One 16-bit ld.shared (one b16 element), zero-extended.
__device__ __forceinline__ uint32_t LdShared16(uint32_t smem_addr) {
  uint16_t v;
  asm volatile("ld.shared.b16 %0, [%1];\n" : "=h"(v) : "r"(smem_addr));
  return v;
}

/// mma.sync m16n8k16, A row-major bf16, B column-major bf16, fp32 accumulate in place.
__device__ __forceinline__ void MmaM16N8K16Bf16(float (&d)[4], const uint32_t (&a)[4],
                                                const uint32_t (&b)[2]) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
      "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

/// mma.sync m16n8k16, A row-major fp16, B column-major fp16, fp32 accumulate in place.
__device__ __forceinline__ void MmaM16N8K16F16(float (&d)[4], const uint32_t (&a)[4],
                                               const uint32_t (&b)[2]) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
      "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

}  // namespace ablation::kernels::ptx
