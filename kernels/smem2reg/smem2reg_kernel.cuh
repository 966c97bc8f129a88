// The smem2reg micro-benchmark kernel: the ablation GEMM's block (256 threads, 8 warps of 64x32,
// BM=BN=128, BK=32) with its shared-memory layouts and its fragment reads, called through the same
// device functions (ablation_gemm.cuh), but no mma. A block fills two stages once, then issues
// the fragment loads of K/32 k-tiles, alternating between the stages as a pipelined GEMM does,
// so the time is that of the loads alone: the instruction cost that the full kernel hides behind
// the tensor cores, where ldmatrix against ld.shared would look like no difference at all.
#pragma once

#include <cstdint>

#include "kernels/ablation/ablation_gemm.cuh"
#include "kernels/smem2reg/smem2reg_catalog.h"

namespace ablation::kernels::smem2reg {

namespace ag = ::ablation::kernels::ablation_gemm;

/// The ablation configuration whose layouts and fragment reads a smem2reg variant uses: stages
/// filled by cp.async, two of them, no register double buffer (one fragment set per k-step, as in
/// the RB=0 GEMM).
template <int READ_MODE_,  /// smem->reg: 0 ld.shared per fragment element, 1 ldmatrix
          int B_LAYOUT_,   /// B in smem: 0 Bs[BK][BN], 1 Bs[BN][BK]
          int SWIZZLE_>    /// smem rows: 0 plain, 1 XOR-swizzled 16-byte chunks
using Config = ag::Config<1, READ_MODE_, B_LAYOUT_, kSmem2RegStages, SWIZZLE_, 0>;

/// XOR of every fragment register of one k-step: each load result feeds the checksum, so none can
/// be dropped, and it costs about one LOP3 per two registers.
__device__ __forceinline__ uint32_t Fold(const ag::Fragments& f) {
  uint32_t x = 0;
#pragma unroll
  for (int mi = 0; mi < ag::kMmaM; ++mi)
#pragma unroll
    for (int j = 0; j < 4; ++j) x ^= f.a[mi][j];
#pragma unroll
  for (int ni = 0; ni < ag::kMmaN; ++ni)
#pragma unroll
    for (int j = 0; j < 2; ++j) x ^= f.b[ni][j];
  return x;
}

/// One block: the fragment loads of K/32 k-tiles of a 128x128 tile of the GEMM M x N x K, and a
/// 32-bit checksum per thread written to checksum[block * 256 + thread]. The checksum depends only
/// on the data each lane's fragments hold, so every read mode, B layout and swizzle gives the same
/// one for the same A and B (B given K x N for b_layout 0, N x K for 1). Preconditions as for the
/// ablation kernel (can_implement and the launcher check them). T: any 16-bit element type; the
/// kernel moves bits.
template <typename T, class Cfg>
__global__ void __launch_bounds__(ag::kThreads, 2)
    Smem2RegKernel(const T* __restrict__ A, const T* __restrict__ B,
                   uint32_t* __restrict__ checksum, int M, int N, int K) {
  static_assert(Cfg::kStages == 2, "the loop alternates between two stages");
  extern __shared__ __align__(1024) uint8_t smem[];
  const uint32_t smem_a = ptx::SmemAddr(smem);
  const uint32_t smem_b = smem_a + Cfg::kStages * ag::kTileBytes;

  const int2 origin = ag::BlockOrigin(M, N);
  const int tid = int(threadIdx.x);
  const int lane = tid & 31;
  const int warp = tid >> 5;
  const int k_tiles = K / ag::kBlockK;

  // Stage s holds k-tile s (k-tile 0 twice when K = 32), through the GEMM's own tile loader.
  {
    ag::TileLoader<T, Cfg> loader(A, B, N, K, origin.x, origin.y, tid, smem_a, smem_b);
    loader.IssueAsync(0, 0);
    if (k_tiles > 1) loader.Advance();
    loader.IssueAsync(ag::kTileBytes, ag::kTileBytes);
    ptx::CpAsyncCommitGroup();
    ptx::CpAsyncWaitGroup<0>();
    __syncthreads();
  }

  const ag::FragmentOffsets<Cfg> off(warp / ag::kWarpsN, warp % ag::kWarpsN, lane, smem_a, smem_b);
  ag::Fragments frag;
  uint32_t sum = 0;
  uint32_t read_stage = 0;
  // Not unrolled, like the GEMM's k-tile loop. The k-steps are unrolled: with no mma to wait for,
  // their loads are independent and the load pipe sees a k-tile's worth at once.
#pragma unroll 1
  for (int kt = 0; kt < k_tiles; ++kt) {
    uint32_t x = 0;
#pragma unroll
    for (int ks = 0; ks < ag::kKSteps; ++ks) {
      ag::LoadFragments<Cfg>(read_stage, read_stage, ks, off, frag);
      x ^= Fold(frag);
    }
    // Rotate before mixing in: the two stages' contributions do not cancel over even counts.
    sum = __funnelshift_l(sum, sum, 1) ^ x;
    read_stage ^= uint32_t(ag::kTileBytes);
  }
  checksum[blockIdx.x * ag::kThreads + tid] = sum;
}

}  // namespace ablation::kernels::smem2reg
