// Inline PTX for Hopper's own data paths (sm_90a): mbarriers, the bulk tensor copy engine (TMA),
// warpgroup MMA (wgmma, HGMMA in SASS), setmaxnreg and thread-block clusters. Written as PTX for
// the same reason as kernels/common/ptx.cuh: each rung emits exactly the instruction it claims to
// measure. Only the sm90 family includes this header; it assembles for sm_90a only.
#pragma once

#include <cuda.h>  // CUtensorMap (a 128-byte opaque struct; no driver library is linked for it)

#include <cstdint>

#include "kernels/common/ptx.cuh"

namespace ablation::kernels::sm90 {

using ptx::SmemAddr;

// ---- mbarrier ----------------------------------------------------------------------------------

/// Initialises a shared-memory mbarrier expecting `count` arrivals per phase.
__device__ __forceinline__ void MbarInit(uint64_t* bar, uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(SmemAddr(bar)), "r"(count)
               : "memory");
}

/// Makes barrier initialisation visible to the async proxy and to the other CTAs of a cluster.
__device__ __forceinline__ void FenceBarrierInit() {
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}

/// Arrives once and adds `bytes` to the transaction count the current phase waits for.
__device__ __forceinline__ void MbarArriveExpectTx(uint64_t* bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(SmemAddr(bar)),
               "r"(bytes)
               : "memory");
}

/// Arrives once on a barrier of this CTA.
__device__ __forceinline__ void MbarArrive(uint64_t* bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(SmemAddr(bar)) : "memory");
}

/// The shared::cluster address of the variable at shared address `addr` in CTA `cta_rank` of the
/// cluster (this CTA included).
__device__ __forceinline__ uint32_t MapaShared(uint32_t addr, uint32_t cta_rank) {
  uint32_t remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(remote) : "r"(addr), "r"(cta_rank));
  return remote;
}

/// Arrives once on the barrier at shared::cluster address `remote` (from MapaShared). Plain
/// arrive: it orders nothing but the barrier (the consumer's shared-memory reads by wgmma have
/// completed at wgmma.wait_group); an explicit .release.cluster made every release a cluster-scope
/// fence.
__device__ __forceinline__ void MbarArriveRemote(uint32_t remote) {
  asm volatile("mbarrier.arrive.shared::cluster.b64 _, [%0];\n" ::"r"(remote) : "memory");
}

/// Spins until the phase with parity `parity` of the barrier at shared address `addr` has
/// completed (the form of the hot loops: the address computed once, not converted each time).
__device__ __forceinline__ void MbarWaitAt(uint32_t addr, uint32_t parity) {
  asm volatile(
      "{\n"
      ".reg .pred done;\n"
      "WAIT:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
      "@!done bra WAIT;\n"
      "}\n" ::"r"(addr),
      "r"(parity)
      : "memory");
}

/// Spins until the phase with parity `parity` has completed.
__device__ __forceinline__ void MbarWait(uint64_t* bar, uint32_t parity) {
  MbarWaitAt(SmemAddr(bar), parity);
}

// ---- bulk copy without a tensor map (cp.async.bulk) ---------------------------------------------

/// 1-D bulk copy global -> shared of `bytes` (a multiple of 16; both addresses 16-byte aligned),
/// completing `bytes` on `bar` of this CTA: the copy engine without a tensor map, which a kernel
/// with no host code of its own (a user kernel) cannot make.
__device__ __forceinline__ void BulkLoad(void* smem_dst, const void* gmem_src, uint32_t bytes,
                                         uint64_t* bar) {
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::
          "r"(SmemAddr(smem_dst)),
      "l"(gmem_src), "r"(bytes), "r"(SmemAddr(bar))
      : "memory");
}

// ---- TMA (cp.async.bulk.tensor) ----------------------------------------------------------------

/// 2-D tile load global -> shared at element coordinates (c0 innermost, c1), completing `bytes`
/// on `bar` of this CTA.
__device__ __forceinline__ void TmaLoad2d(void* smem_dst, const CUtensorMap* map, uint64_t* bar,
                                          int c0, int c1) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%3, %4}], [%2];\n" ::"r"(SmemAddr(smem_dst)),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(SmemAddr(bar)), "r"(c0), "r"(c1)
      : "memory");
}

/// As TmaLoad2d, but the tile lands at the same offset in every CTA of `cta_mask` and completes
/// on each one's barrier at the same offset (TMA multicast within a cluster).
__device__ __forceinline__ void TmaLoad2dMulticast(void* smem_dst, const CUtensorMap* map,
                                                   uint64_t* bar, int c0, int c1,
                                                   uint16_t cta_mask) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
      ".multicast::cluster [%0], [%1, {%4, %5}], [%2], %3;\n" ::"r"(SmemAddr(smem_dst)),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(SmemAddr(bar)), "h"(cta_mask), "r"(c0), "r"(c1)
      : "memory");
}

/// Hints the copy engine to fetch the tensor map into its cache.
__device__ __forceinline__ void TmaPrefetchMap(const CUtensorMap* map) {
  asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<uint64_t>(map)) : "memory");
}

/// 2-D tile store shared -> global at element coordinates (c0 innermost, c1), in this thread's
/// current bulk async-group. The shared-memory source must have been made visible to the async
/// proxy (FenceProxyAsyncShared by every writer, then a barrier).
__device__ __forceinline__ void TmaStore2d(const CUtensorMap* map, const void* smem_src, int c0,
                                           int c1) {
  asm volatile(
      "cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%2, %3}], [%1];\n" ::"l"(
          reinterpret_cast<uint64_t>(map)),
      "r"(SmemAddr(smem_src)), "r"(c0), "r"(c1)
      : "memory");
}

/// Closes this thread's current bulk async-group (the stores issued since the last commit).
__device__ __forceinline__ void TmaStoreCommit() {
  asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
}

/// Waits until at most N of this thread's bulk async-groups still read their shared memory.
template <int N>
__device__ __forceinline__ void TmaStoreWaitRead() {
  asm volatile("cp.async.bulk.wait_group.read %0;\n" ::"n"(N) : "memory");
}

/// Waits until all of this thread's bulk async-groups have completed (their writes done).
__device__ __forceinline__ void TmaStoreWaitAll() {
  asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory");
}

/// Makes this thread's generic-proxy shared-memory writes visible to the async proxy (TMA).
__device__ __forceinline__ void FenceProxyAsyncShared() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

/// Named barrier `id` (1..15; 0 is __syncthreads) over `threads` threads, a multiple of 32.
__device__ __forceinline__ void NamedBarrierSync(int id, int threads) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

/// Stores four 8x8 bf16 matrices to shared memory: register i holds this lane's two elements of
/// matrix i (row lane/4, columns 2(lane%4)..+1, the mma accumulator layout); lane l gives the
/// address of row l%8 of matrix l/8 (16 contiguous bytes).
__device__ __forceinline__ void StMatrixX4(void* smem_row, uint32_t r0, uint32_t r1, uint32_t r2,
                                           uint32_t r3) {
  asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};\n" ::"r"(
                   SmemAddr(smem_row)),
               "r"(r0), "r"(r1), "r"(r2), "r"(r3)
               : "memory");
}

// ---- clusters ----------------------------------------------------------------------------------

__device__ __forceinline__ uint32_t ClusterCtaRank() {
  uint32_t r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
  return r;
}

/// All threads of all CTAs of the cluster: arrive (release) and wait (acquire).
__device__ __forceinline__ void ClusterSync() {
  asm volatile(
      "barrier.cluster.arrive.release.aligned;\n"
      "barrier.cluster.wait.acquire.aligned;\n" ::
          : "memory");
}

// ---- registers ---------------------------------------------------------------------------------

/// Raises this warpgroup's register limit (producer/consumer specialisation).
template <int kRegs>
__device__ __forceinline__ void SetMaxNRegInc() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(kRegs));
}

/// Lowers this warpgroup's register limit, giving registers back to the others.
template <int kRegs>
__device__ __forceinline__ void SetMaxNRegDec() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(kRegs));
}

// ---- wgmma -------------------------------------------------------------------------------------

/// Shared-memory matrix descriptor of a K-major operand tile whose rows are 128 bytes (64 bf16)
/// written with the 128-byte swizzle, 8-row core-matrix groups 1024 bytes apart. The tile must
/// start 1024-byte aligned; a k-step inside the row advances `smem` by 32 bytes.
/// The start address lives in bits 0..13 in 16-byte units: a descriptor plus (bytes >> 4) is the
/// descriptor of the tile `bytes` further on (shared memory is below 256 KiB, so no carry).
__device__ __forceinline__ uint64_t SmemDescK128B(uint32_t addr) {
  uint64_t desc = (addr & 0x3FFFF) >> 4;  // start address, 16-byte units
  desc |= uint64_t(1) << 16;              // leading byte offset (unused for swizzled K-major)
  desc |= uint64_t(1024 >> 4) << 32;      // stride byte offset: 8 rows x 128 B
  desc |= uint64_t(1) << 62;              // layout: 128-byte swizzle
  return desc;
}
__device__ __forceinline__ uint64_t SmemDescK128B(const void* smem) {
  return SmemDescK128B(SmemAddr(smem));
}

/// `x` as the compiler may keep in a uniform register (lane 0's value, the same in every lane
/// when x is warp-uniform already): descriptors and barrier addresses derived from it then stay
/// on the uniform datapath instead of being recomputed per lane and moved over (R2UR) per wgmma.
__device__ __forceinline__ int WarpUniform(int x) { return __shfl_sync(0xffffffffu, x, 0); }

/// Orders register accesses before the following wgmma (required before the first one of a batch).
__device__ __forceinline__ void WgmmaFence() {
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}

__device__ __forceinline__ void WgmmaCommit() {
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}

/// Waits until at most N committed wgmma groups are pending.
template <int N>
__device__ __forceinline__ void WgmmaWait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}

/// Keeps the compiler from moving accesses of `r` across the asynchronous wgmma boundary.
__device__ __forceinline__ void FenceOperand(float& r) { asm volatile("" : "+f"(r)::"memory"); }

/// The 128 fp32 accumulators of an m64n256 wgmma as "+f" operands %0..%127 (both wgmma below).
#define ABLATION_WGMMA_D128(d)                                                                    \
  "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), \
      "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]),    \
      "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]),  \
      "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]),  \
      "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]),  \
      "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]),  \
      "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]),  \
      "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]),  \
      "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]),  \
      "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]),  \
      "+f"(d[71]), "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]),  \
      "+f"(d[78]), "+f"(d[79]), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]),  \
      "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]),  \
      "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), "+f"(d[96]), "+f"(d[97]), "+f"(d[98]),  \
      "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]), "+f"(d[104]),          \
      "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]),         \
      "+f"(d[111]), "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]),         \
      "+f"(d[117]), "+f"(d[118]), "+f"(d[119]), "+f"(d[120]), "+f"(d[121]), "+f"(d[122]),         \
      "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])

/// The same 128 accumulators in a wgmma's PTX: "{%0, ..., %127},".
#define ABLATION_WGMMA_D128_LIST                                                                 \
  "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "                      \
  "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "             \
  "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "             \
  "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "             \
  "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "             \
  "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, "             \
  "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, " \
  "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, "   \
  "%127},"

/// The statement of a bf16 wgmma from shared memory in the functions below: SHAPE its PTX
/// shape ("m64n256k16"), DLIST its accumulators' list ("{%0, ..., %127},"), A, B and P the operand
/// numbers of the two descriptors and of scale_d (the accumulators' count and the two after it),
/// the rest the accumulators as "+f" operands. A macro because an asm statement's text and
/// operand list must be literal.
#define ABLATION_WGMMA_BF16(SHAPE, DLIST, A, B, P, ...)                              \
  asm volatile(                                                                      \
      "{\n"                                                                          \
      ".reg .pred p;\n"                                                              \
      "setp.ne.b32 p, %" #P                                                          \
      ", 0;\n"                                                                       \
      "wgmma.mma_async.sync.aligned." SHAPE ".f32.bf16.bf16 " DLIST " %" #A ", %" #B \
      ", p, 1, 1, 0, 0;\n"                                                           \
      "}\n"                                                                          \
      : __VA_ARGS__                                                                  \
      : "l"(desc_a), "l"(desc_b), "r"(scale_d))

/// wgmma m64n256k16, A and B from shared memory (K-major, 128-byte swizzle), bf16 in, fp32
/// accumulators in place; `scale_d` 0 overwrites d (the first k-step of a tile), 1 accumulates.
__device__ __forceinline__ void WgmmaM64N256K16Bf16(float (&d)[128], uint64_t desc_a,
                                                    uint64_t desc_b, int scale_d) {
  ABLATION_WGMMA_BF16("m64n256k16", ABLATION_WGMMA_D128_LIST, 128, 129, 130,
                      ABLATION_WGMMA_D128(d));
}

/// The 32 fp32 accumulators of an m64n64 wgmma as "+f" operands %0..%31.
#define ABLATION_WGMMA_D32(d)                                                                     \
  "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), \
      "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]),    \
      "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]),  \
      "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]),  \
      "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
/// The same 32 accumulators in a wgmma's PTX, and the 32 after them: "{%0, ..., %31," and
/// " %32, ..., %63,".
#define ABLATION_WGMMA_D32_LIST                                             \
  "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, " \
  "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"
#define ABLATION_WGMMA_D32_LIST_NEXT                                                 \
  "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, " \
  "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"

/// wgmma m64n128k16 as m64n256k16 above, on a B tile of 128 rows: 64 accumulators a thread (the
/// 128-column builds, Knobs::block_n 128).
__device__ __forceinline__ void WgmmaM64N128K16Bf16(float (&d)[64], uint64_t desc_a,
                                                    uint64_t desc_b, int scale_d) {
  ABLATION_WGMMA_BF16("m64n128k16", ABLATION_WGMMA_D32_LIST ", " ABLATION_WGMMA_D32_LIST_NEXT "},",
                      64, 65, 66, ABLATION_WGMMA_D32(d), ABLATION_WGMMA_D32((d + 32)));
}

/// wgmma m64n112k16 as m64n256k16 above, on a B tile of 112 rows: 56 accumulators a thread (the
/// 112-column build, Knobs::block_n 112: 128x14336x4096 in 128 tiles, one for each of 128 SMs).
__device__ __forceinline__ void WgmmaM64N112K16Bf16(float (&d)[56], uint64_t desc_a,
                                                    uint64_t desc_b, int scale_d) {
  ABLATION_WGMMA_BF16("m64n112k16",
                      ABLATION_WGMMA_D32_LIST
                      ", "
                      "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, "
                      "%47, %48, %49, %50, %51, %52, %53, %54, %55},",
                      56, 57, 58, ABLATION_WGMMA_D32(d), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]),
                      "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]),
                      "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]),
                      "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]),
                      "+f"(d[53]), "+f"(d[54]), "+f"(d[55]));
}

/// wgmma m64n64k16 as m64n256k16 above, on a B tile of 64 rows: 32 accumulators a thread (the
/// 64-column builds of the wgmma kernel, Knobs::block_n 64).
__device__ __forceinline__ void WgmmaM64N64K16Bf16(float (&d)[32], uint64_t desc_a, uint64_t desc_b,
                                                   int scale_d) {
  ABLATION_WGMMA_BF16("m64n64k16", ABLATION_WGMMA_D32_LIST "},", 32, 33, 34, ABLATION_WGMMA_D32(d));
}

/// wgmma m64n16k16 as m64n256k16 above, on a B tile of 16 rows: 8 accumulators a thread (the
/// 16-column builds, Knobs::block_n 16: a few-row problem swapped, its rows the tile's columns).
__device__ __forceinline__ void WgmmaM64N16K16Bf16(float (&d)[8], uint64_t desc_a, uint64_t desc_b,
                                                   int scale_d) {
  ABLATION_WGMMA_BF16("m64n16k16", "{%0, %1, %2, %3, %4, %5, %6, %7},", 8, 9, 10, "+f"(d[0]),
                      "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),
                      "+f"(d[7]));
}

/// wgmma m64n8k16 as m64n256k16 above, on a B tile of 8 rows: 4 accumulators a thread (the
/// 8-column builds, Knobs::block_n 8: a few-row problem swapped, its rows the tile's columns).
__device__ __forceinline__ void WgmmaM64N8K16Bf16(float (&d)[4], uint64_t desc_a, uint64_t desc_b,
                                                  int scale_d) {
  ABLATION_WGMMA_BF16("m64n8k16", "{%0, %1, %2, %3},", 4, 5, 6, "+f"(d[0]), "+f"(d[1]), "+f"(d[2]),
                      "+f"(d[3]));
}

/// wgmma m64n256k32 with e4m3 A and B from shared memory (K-major, the only major order fp8
/// wgmma takes; 128-byte swizzle), fp32 accumulators in place (QGMMA in SASS); `scale_d` as
/// above. A k-step is 32 bytes of each row, as bf16's k16.
__device__ __forceinline__ void WgmmaM64N256K32E4m3(float (&d)[128], uint64_t desc_a,
                                                    uint64_t desc_b, int scale_d) {
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "setp.ne.b32 p, %130, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n256k32.f32.e4m3.e4m3 " ABLATION_WGMMA_D128_LIST
      " %128, %129, p, 1, 1;\n"
      "}\n"
      : ABLATION_WGMMA_D128(d)
      : "l"(desc_a), "l"(desc_b), "r"(scale_d));
}

}  // namespace ablation::kernels::sm90
