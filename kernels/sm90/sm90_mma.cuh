// The mma.sync rungs of the Hopper ladder (M1, H1): 128x256x64 block tile, 8 warps in 2 x 4, each
// a 64x64 warp tile (4 x 8 mma.sync m16n8k16 per k16 step), 4 shared-memory stages, ldmatrix.x4
// fragments double-buffered in registers, 16-byte epilogue stores (QuadTranspose, sm90_common.cuh).
// Tiles are stored as 128-byte rows with the 128-byte swizzle (16-byte chunk c of row r at chunk
// c ^ (r & 7)): the layout TMA writes, so M1 and H1 differ only in who fills a stage (the
// `issue` and `wait_tile` of Sm90MmaKernel). B is N x K (K-major). The template argument is a
// Knobs value (sm90_config.h); the tuning tool varies the warp layout, the tile, the stages and
// the cross-stage fragments.
#pragma once

#include <cuda_bf16.h>

#include <cstdint>
#include <type_traits>

#include "kernels/common/ptx.cuh"
#include "kernels/sm90/sm90_common.cuh"
#include "kernels/sm90/sm90_config.h"
#include "kernels/sm90/sm90_ptx.cuh"

namespace ablation::kernels::sm90 {

/// The constants of the mma.sync kernel derived from its knobs (Knobs, sm90_config.h: mainloop,
/// warps_m, warps_n, cross_stage, block_n, stages, min_blocks).
template <Knobs K>
struct MmaTraits {
  static_assert(K.mainloop != Mainloop::kWgmma && K.epilogue == Epilogue::kWide,
                "the mma.sync rungs: cp.async or TMA loads, 16-byte stores");
  /// Block tile 128 x kBN x 64 in kSt stages; kMinBlocks CTAs per SM (launch bounds).
  static constexpr int kBN = K.block_n;
  static constexpr int kSt = K.stages;
  static constexpr int kMinBlocks = K.min_blocks;
  static constexpr int kStageB = kATileBytes + kBN * kBlockK * 2;
  static constexpr int64_t kSmemBytes = int64_t(kSt) * kStageB + 1024 + 2 * 8 * kSt;
  static constexpr bool kCrossStage = K.cross_stage;
  /// TMA loads (one thread, completing on an mbarrier) instead of cp.async by every thread.
  static constexpr bool kTma = K.mainloop == Mainloop::kMmaTma;
  static constexpr int kWarpsM = K.warps_m;
  static constexpr int kWarpsN = K.warps_n;
  static constexpr int kThreads = 32 * kWarpsM * kWarpsN;
  static constexpr int kWarpM = kBlockM / kWarpsM;
  static constexpr int kWarpN = kBN / kWarpsN;
  static constexpr int kMi = kWarpM / 16;  // m16 tiles per warp
  static constexpr int kNi = kWarpN / 8;   // n8 tiles per warp
  static_assert(kMi >= 1 && kNi >= 2 && kNi % 2 == 0, "warp tile of m16 x (2 n8) multiples");
};

namespace mma_detail {

/// The cp.async of a stage, planned once per block. Pass i of thread t copies 16-byte chunk t % 8
/// of row t / 8 + i * (kThreads / 8): every pass starts 8-row aligned, so the thread's chunk keeps
/// its swizzled column and a pass is 4 KiB further in shared memory (an immediate offset), and
/// one row stride further in global memory. Per k-tile that leaves one pointer per operand and
/// one add per pass; computing every chunk's address in the loop (row * k, the swizzle) cost
/// about a hundred integer instructions per k-tile per warp, beside 128 mma.
template <int kThreads, int kBN>
struct CpAsyncPlan {
  static constexpr int kRowsPerPass = kThreads / 8;
  static constexpr int kPassesA = kBlockM / kRowsPerPass;
  static constexpr int kPassesB = kBN / kRowsPerPass;
  static constexpr uint32_t kPassBytes = kRowsPerPass * 128;
  static_assert(kRowsPerPass % 8 == 0 && kBlockM % kRowsPerPass == 0 && kBN % kRowsPerPass == 0,
                "passes of whole 8-row swizzle groups");
  const char* ga;      ///< this thread's first A chunk of k-tile 0
  const char* gb;      ///< and B's
  int64_t pass_bytes;  ///< global bytes between passes: kRowsPerPass rows of K
  uint32_t soff;       ///< this thread's chunk in the first pass of a tile in shared memory

  /// (m and n: the guarded plan's.)
  __device__ __forceinline__ CpAsyncPlan(const __nv_bfloat16* a, const __nv_bfloat16* b, int64_t k,
                                         int m0, int n0, int, int) {
    const int row = threadIdx.x >> 3, chunk = threadIdx.x & 7;
    ga = reinterpret_cast<const char*>(a + (m0 + row) * k + chunk * 8);
    gb = reinterpret_cast<const char*>(b + (n0 + row) * k + chunk * 8);
    pass_bytes = int64_t(kRowsPerPass) * k * 2;
    soff = Swizzled(row, chunk);
  }

  /// Copies k-tile `kt` into the stage whose A tile starts at shared address sa, B at sb.
  __device__ __forceinline__ void Issue(uint32_t sa, uint32_t sb, int kt) const {
    const char* pa = ga + int64_t(kt) * (kBlockK * 2);
#pragma unroll
    for (int i = 0; i < kPassesA; ++i, pa += pass_bytes) {
      ptx::CpAsyncCg16(sa + soff + i * kPassBytes, pa);
    }
    const char* pb = gb + int64_t(kt) * (kBlockK * 2);
#pragma unroll
    for (int i = 0; i < kPassesB; ++i, pb += pass_bytes) {
      ptx::CpAsyncCg16(sb + soff + i * kPassBytes, pb);
    }
  }
};

/// The plan off the tile (Knobs::guarded; K a multiple of 8): a chunk past row M or N or past
/// column K is copied with no source bytes, which fills it with zeros, from an address inside
/// the matrix.
template <int kThreads, int kBN>
struct GuardedCpAsyncPlan : CpAsyncPlan<kThreads, kBN> {
  using Plan = CpAsyncPlan<kThreads, kBN>;
  /// Rows of A and B from this thread's first one to the matrix's end, columns of K from its
  /// chunk's first one.
  int rows_a, rows_b, cols_k;
  const char* a_in;  ///< addresses inside the matrices, for the chunks that copy nothing
  const char* b_in;

  __device__ __forceinline__ GuardedCpAsyncPlan(const __nv_bfloat16* a, const __nv_bfloat16* b,
                                                int64_t k, int m0, int n0, int m, int n)
      : Plan(a, b, k, m0, n0, m, n),
        rows_a(m - m0 - int(threadIdx.x >> 3)),
        rows_b(n - n0 - int(threadIdx.x >> 3)),
        cols_k(int(k) - int(threadIdx.x & 7) * 8),
        a_in(reinterpret_cast<const char*>(a)),
        b_in(reinterpret_cast<const char*>(b)) {}

  __device__ __forceinline__ void Issue(uint32_t sa, uint32_t sb, int kt) const {
    const bool k_in = kt * kBlockK < cols_k;
    auto copy = [&](uint32_t s, const char* g, int rows, const char* inside, int passes) {
#pragma unroll
      for (int i = 0; i < passes; ++i, g += this->pass_bytes) {
        const bool in = k_in && i * Plan::kRowsPerPass < rows;
        ptx::CpAsyncCg16ZeroFill(s + this->soff + i * Plan::kPassBytes, in ? g : inside,
                                 in ? 16 : 0);
      }
    };
    copy(sa, this->ga + int64_t(kt) * (kBlockK * 2), rows_a, a_in, Plan::kPassesA);
    copy(sb, this->gb + int64_t(kt) * (kBlockK * 2), rows_b, b_in, Plan::kPassesB);
  }
};

template <class Cfg>
struct Frags {
  uint32_t a[Cfg::kMi][4];
  uint32_t b[Cfg::kNi][2];
};

/// Fragments of k16 step `ks` (0..3) of a stage for this warp's tile.
template <class Cfg>
__device__ __forceinline__ void LoadFrags(Frags<Cfg>& f, uint32_t sa, uint32_t sb, int wm, int wn,
                                          int lane, int ks) {
#pragma unroll
  for (int mi = 0; mi < Cfg::kMi; ++mi) {
    const int row = wm * Cfg::kWarpM + mi * 16 + (lane & 15);
    ptx::LdmatrixX4(f.a[mi], sa + Swizzled(row, ks * 2 + (lane >> 4)));
  }
#pragma unroll
  for (int np = 0; np < Cfg::kNi / 2; ++np) {
    const int row = wn * Cfg::kWarpN + np * 16 + (lane & 7) + ((lane >> 4) << 3);
    uint32_t r[4];
    ptx::LdmatrixX4(r, sb + Swizzled(row, ks * 2 + ((lane >> 3) & 1)));
    f.b[2 * np][0] = r[0];
    f.b[2 * np][1] = r[1];
    f.b[2 * np + 1][0] = r[2];
    f.b[2 * np + 1][1] = r[3];
  }
}

template <class Cfg>
__device__ __forceinline__ void MmaStep(float (&acc)[Cfg::kMi][Cfg::kNi][4], const Frags<Cfg>& f) {
#pragma unroll
  for (int mi = 0; mi < Cfg::kMi; ++mi)
#pragma unroll
    for (int ni = 0; ni < Cfg::kNi; ++ni) ptx::MmaM16N8K16Bf16(acc[mi][ni], f.a[mi], f.b[ni]);
}

/// 16-byte stores of a warp tile: for each m16 tile and each group of four n8 tiles, the four
/// lanes of a quad exchange their bf16x2 words (QuadTranspose) so that lane q holds the 8 columns
/// of n8 tile 4g+q, one 16-byte store per row. kGuarded: stores past row m or column n are
/// skipped (n a multiple of 8).
template <class Cfg, bool kGuarded = false>
__device__ __forceinline__ void StoreWarpTileWide(const float (&acc)[Cfg::kMi][Cfg::kNi][4],
                                                  __nv_bfloat16* c, int m, int64_t n, int row0,
                                                  int col0, int lane) {
  static_assert(Cfg::kNi % 4 == 0, "groups of four n8 tiles");
  const int q = lane & 3;
#pragma unroll
  for (int mi = 0; mi < Cfg::kMi; ++mi)
#pragma unroll
    for (int half = 0; half < 2; ++half)
#pragma unroll
      for (int g = 0; g < Cfg::kNi / 4; ++g) {
        uint32_t mine[4], out[4] = {};
#pragma unroll
        for (int b = 0; b < 4; ++b) {
          mine[b] = PackBf16x2(acc[mi][4 * g + b][2 * half], acc[mi][4 * g + b][2 * half + 1]);
        }
        QuadTranspose(mine, q, out);
        const int row = row0 + mi * 16 + 8 * half;
        const int col = col0 + (4 * g + q) * 8;
        if (kGuarded && (row >= m || col >= n)) continue;
        *reinterpret_cast<uint4*>(c + int64_t(row) * n + col) =
            make_uint4(out[0], out[1], out[2], out[3]);
      }
}

/// The four k16 steps of one stage, the next step's fragments loading while this one's mma issue.
template <class Cfg>
__device__ __forceinline__ void ComputeStage(float (&acc)[Cfg::kMi][Cfg::kNi][4], uint32_t sa,
                                             uint32_t sb, int wm, int wn, int lane) {
  Frags<Cfg> f[2];
  LoadFrags<Cfg>(f[0], sa, sb, wm, wn, lane, 0);
#pragma unroll
  for (int ks = 0; ks < 4; ++ks) {
    if (ks < 3) LoadFrags<Cfg>(f[(ks + 1) & 1], sa, sb, wm, wn, lane, ks + 1);
    const Frags<Cfg>& cur = f[ks & 1];
#pragma unroll
    for (int mi = 0; mi < Cfg::kMi; ++mi)
#pragma unroll
      for (int ni = 0; ni < Cfg::kNi; ++ni) ptx::MmaM16N8K16Bf16(acc[mi][ni], cur.a[mi], cur.b[ni]);
  }
}

}  // namespace mma_detail

/// C = A * B^T for one 128x256 tile per block (1-D grid, tiles row-major). On the tile (the
/// launcher's plan, sm90_shapes.h) M % 128, N % 256, K % 64 == 0; off it K.guarded, N and K
/// multiples of 8.
template <Knobs K>
__global__ void __launch_bounds__(MmaTraits<K>::kThreads, MmaTraits<K>::kMinBlocks)
    Sm90MmaKernel(const __grid_constant__ CUtensorMap map_a,
                  const __grid_constant__ CUtensorMap map_b, const __nv_bfloat16* __restrict__ a,
                  const __nv_bfloat16* __restrict__ b, __nv_bfloat16* __restrict__ c, int m, int n,
                  int k) {
  using namespace mma_detail;
  using Cfg = MmaTraits<K>;
  extern __shared__ uint8_t smem_raw[];
  uint8_t* smem = AlignSmem1024(smem_raw);
  uint64_t* full = reinterpret_cast<uint64_t*>(smem + Cfg::kSt * Cfg::kStageB);

  const int n_tiles = K.guarded ? (n + Cfg::kBN - 1) / Cfg::kBN : n / Cfg::kBN;
  const int m0 = int(blockIdx.x / n_tiles) * kBlockM;
  const int n0 = int(blockIdx.x % n_tiles) * Cfg::kBN;
  const int kt_count = K.guarded ? (k + kBlockK - 1) / kBlockK : k / kBlockK;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int wm = warp / Cfg::kWarpsN, wn = warp % Cfg::kWarpsN;
  auto stage_a = [&](int s) { return smem + s * Cfg::kStageB; };
  auto stage_b = [&](int s) { return smem + s * Cfg::kStageB + kATileBytes; };

  // The cp.async plan (unused with TMA).
  const std::conditional_t<K.guarded, GuardedCpAsyncPlan<Cfg::kThreads, Cfg::kBN>,
                           CpAsyncPlan<Cfg::kThreads, Cfg::kBN>>
      plan(a, b, k, m0, n0, m, n);

  // Fills stage s with k-tile kt (TMA: thread 0 only; cp.async: every thread, one group).
  auto issue = [&](int s, int kt) {
    if constexpr (Cfg::kTma) {
      if (threadIdx.x == 0 && kt < kt_count)
        TmaStage(stage_a(s), &map_a, &map_b, &full[s], kt, m0, n0, Cfg::kStageB);
    } else {
      if (kt < kt_count) plan.Issue(ptx::SmemAddr(stage_a(s)), ptx::SmemAddr(stage_b(s)), kt);
      ptx::CpAsyncCommitGroup();
    }
  };

  if constexpr (Cfg::kTma) {
    if (threadIdx.x == 0) {
      TmaPrefetchMap(&map_a);
      TmaPrefetchMap(&map_b);
      for (int s = 0; s < Cfg::kSt; ++s) MbarInit(&full[s], 1);
      FenceBarrierInit();
    }
    __syncthreads();
  }

  float acc[Cfg::kMi][Cfg::kNi][4] = {};
#pragma unroll
  for (int s = 0; s < Cfg::kSt - 1; ++s) issue(s, s);

  // Waits until k-tile `kt` has landed in its stage. The loads of k-tiles up to kt+S-2 have been
  // issued (cp.async: S-2 newer groups may stay in flight), or, `ahead` (the cross-stage wait for
  // the next k-tile during this one's last step), only up to kt+S-3 (S-3 may).
  auto wait_tile = [&](int kt, bool ahead) {
    if constexpr (Cfg::kTma) {
      MbarWait(&full[kt % Cfg::kSt], uint32_t(kt / Cfg::kSt) & 1);
    } else if (!ahead) {
      ptx::CpAsyncWaitGroup<Cfg::kSt - 2>();
    } else {
      ptx::CpAsyncWaitGroup<Cfg::kSt - 3>();
    }
  };
  if constexpr (Cfg::kCrossStage) {
    Frags<Cfg> f[2];
    wait_tile(0, false);
    __syncthreads();
    LoadFrags<Cfg>(f[0], ptx::SmemAddr(stage_a(0)), ptx::SmemAddr(stage_b(0)), wm, wn, lane, 0);
    // Steps 0..2 of k-tile kt, each loading the next step's fragments while it computes.
    auto first_steps = [&](int kt) {
      const uint32_t sa = ptx::SmemAddr(stage_a(kt % Cfg::kSt));
      const uint32_t sb = ptx::SmemAddr(stage_b(kt % Cfg::kSt));
#pragma unroll
      for (int ks = 0; ks < 3; ++ks) {
        LoadFrags<Cfg>(f[(ks + 1) & 1], sa, sb, wm, wn, lane, ks + 1);
        MmaStep<Cfg>(acc, f[ks & 1]);
      }
    };
    // The last k-tile is peeled off the loop, so that the K loop is one loop that loads and
    // computes (a copy without loads would be what the SASS check reads as the main loop).
    for (int kt = 0; kt + 1 < kt_count; ++kt) {
      first_steps(kt);
      // Step 3: its fragments are in f[1]. Wait for the next k-tile; the barrier also says every
      // warp is done with the stage of kt-1, which is refilled with kt+S-1 before any shared
      // memory is read again (reading the next k-tile's fragments first measured the same, and
      // the SASS check's rule wants no shared load between the barrier and a refill).
      wait_tile(kt + 1, true);
      __syncthreads();
      issue((kt + Cfg::kSt - 1) % Cfg::kSt, kt + Cfg::kSt - 1);
      const int s1 = (kt + 1) % Cfg::kSt;
      LoadFrags<Cfg>(f[0], ptx::SmemAddr(stage_a(s1)), ptx::SmemAddr(stage_b(s1)), wm, wn, lane, 0);
      MmaStep<Cfg>(acc, f[1]);
    }
    first_steps(kt_count - 1);
    MmaStep<Cfg>(acc, f[1]);
  } else {
    for (int kt = 0; kt < kt_count; ++kt) {
      const int s = kt % Cfg::kSt;
      wait_tile(kt, false);
      // Every warp is done with the stage computed in kt-1: refill it with k-tile kt+S-1.
      __syncthreads();
      issue((kt + Cfg::kSt - 1) % Cfg::kSt, kt + Cfg::kSt - 1);
      ComputeStage<Cfg>(acc, ptx::SmemAddr(stage_a(s)), ptx::SmemAddr(stage_b(s)), wm, wn, lane);
    }
  }

  const int row0 = m0 + wm * Cfg::kWarpM + (lane >> 2);
  StoreWarpTileWide<Cfg, K.guarded>(acc, c, m, n, row0, n0 + wn * Cfg::kWarpN, lane);
}

}  // namespace ablation::kernels::sm90
