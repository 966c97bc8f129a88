// The wgmma rungs of the Hopper ladder (H2..H10): 128x256x64 block tile computed by two warpgroups,
// each one 64x256 half with wgmma m64n256k16 (4 per k-tile) from shared memory, TMA loads of 4
// stages completing on mbarriers. Sm90WgmmaKernel composes four parts, each a knob or a policy
// of Knobs (sm90_config.h), so that a rung's change is read in one place (README.md here):
//   WgmmaMainloop (below)       the wgmma of a k-tile, the batches left running (pending);
//   TmaPipeline, PipelineState   stages, barriers, multicast, release (sm90_pipeline.cuh);
//   TileScheduler               tile order, persistent grid, stream-K (sm90_schedule.h);
//   EpilogueOf<K>               16-byte stores, TMA stores, overlapped (sm90_epilogue.cuh).
// H2 runs the main loop in every warp; from H3 on a producer warpgroup loads and two consumer
// warpgroups compute. 2x2 clusters are a configuration of the tuning tool only.
#pragma once

#include <cuda_bf16.h>

#include <cstdint>

#include "kernels/sm90/sm90_common.cuh"
#include "kernels/sm90/sm90_config.h"
#include "kernels/sm90/sm90_epilogue.cuh"
#include "kernels/sm90/sm90_pipeline.cuh"
#include "kernels/sm90/sm90_ptx.cuh"
#include "kernels/sm90/sm90_schedule.h"

namespace ablation::kernels::sm90 {

/// The knobs' combinations the wgmma kernel is written for: each rung builds on the one before.
consteval bool ValidWgmmaKnobs(const Knobs& k) {
  return k.mainloop == Mainloop::kWgmma && (k.pending == 0 || k.pending == 1) &&
         (k.warp_specialized ||
          (!k.persistent && k.cluster_m == 1 && k.epilogue != Epilogue::kTmaStore)) &&
         (!k.stream_k || k.persistent) &&
         (!k.overlap_epilogue || (k.persistent && k.epilogue == Epilogue::kTmaStore)) &&
         (!k.warp_stores || TmaStoresC(k)) && (!k.fp8 || k.warp_specialized) &&
         (!k.fit_grid || k.persistent) &&
         (!k.clusters_where_shared || (k.fit_grid && k.cluster_m == 2)) &&
         (k.block_m == kBlockM || (k.block_m == 64 && k.warp_specialized) ||
          (k.block_m == 192 && k.warp_specialized && k.cluster_n == 1 &&
           k.epilogue == Epilogue::kWide)) &&
         // 4x1 clusters: warp-specialised, each CTA multicasting a quarter of B, whole 128-byte
         // swizzle atoms (8 rows) on a 1024-byte boundary, so block_n of 32 or more.
         (k.cluster_m != 4 || (k.warp_specialized && k.cluster_n == 1 && k.block_n % 32 == 0)) &&
         // 256 columns (m64n256 wgmma); or, with bf16 and the 16-byte or transposed stores (the
         // TMA-store epilogues are written for 256 columns), 128, 112, 64, 16 or 8 (m64n128 ...
         // m64n8), 112 and the two narrowest with no cluster along M (half of a B tile of 8 or 16
         // rows is not a whole 128-byte swizzle atom of 8 rows x 128 bytes on a 1024-byte
         // boundary; along N the pair shares A, whose halves are; 112 is built for one shape
         // without clusters, and not stored transposed).
         (k.block_n == kBlockN ||
          (!k.fp8 && k.epilogue == Epilogue::kWide && !k.overlap_epilogue &&
           (k.block_n == 128 || k.block_n == 64 ||
            (k.block_n == 112 && k.cluster_m == 1 && k.cluster_n == 1 && !k.store_transposed) ||
            ((k.block_n == 16 || k.block_n == 8) && k.cluster_m == 1)))) &&
         k.stages >= 2;
}

/// A consumer warpgroup's main loop: the four wgmma of a k-tile from a stage, on its 64 rows of
/// A and all of B. Knob: pending, the wgmma batches left running when it moves on.
template <Knobs K>
struct WgmmaMainloop {
  /// The warpgroup's descriptors of stage 0; stage s is s * kStageDesc further on.
  uint64_t desc_a, desc_b;
  static constexpr uint64_t kStageDesc = StageBytes(K) >> 4;

  /// For consumer warpgroup `cw` (rows cw*64.. of the tile), warp-uniform, of the stages at
  /// `smem`.
  __device__ __forceinline__ WgmmaMainloop(const uint8_t* smem, int cw) {
    const uint32_t base = SmemAddr(smem);
    desc_a = SmemDescK128B(base + cw * 64 * 128);
    desc_b = SmemDescK128B(base + ATileBytes(K));
  }

  static constexpr int kAcc = Accumulators(K);

  /// Issues the k-tile in stage `s`; returns with at most `pending` batches still running.
  __device__ __forceinline__ void Mma(float (&d)[kAcc], int s, bool accumulate) const {
#pragma unroll
    for (int i = 0; i < kAcc; ++i) FenceOperand(d[i]);
    WgmmaFence();
    const uint64_t da = desc_a + s * kStageDesc, db = desc_b + s * kStageDesc;
#pragma unroll
    for (int kk = 0; kk < kBlockK / 16; ++kk) {  // a k-step is 32 bytes into the swizzled rows
      const int scale_d = (accumulate || kk > 0) ? 1 : 0;
      if constexpr (K.block_n == 8) {
        WgmmaM64N8K16Bf16(d, da + kk * 2, db + kk * 2, scale_d);
      } else if constexpr (K.block_n == 16) {
        WgmmaM64N16K16Bf16(d, da + kk * 2, db + kk * 2, scale_d);
      } else if constexpr (K.block_n == 64) {
        WgmmaM64N64K16Bf16(d, da + kk * 2, db + kk * 2, scale_d);
      } else if constexpr (K.block_n == 112) {
        WgmmaM64N112K16Bf16(d, da + kk * 2, db + kk * 2, scale_d);
      } else if constexpr (K.block_n == 128) {
        WgmmaM64N128K16Bf16(d, da + kk * 2, db + kk * 2, scale_d);
      } else if constexpr (K.fp8) {
        WgmmaM64N256K32E4m3(d, da + kk * 2, db + kk * 2, scale_d);
      } else {
        WgmmaM64N256K16Bf16(d, da + kk * 2, db + kk * 2, scale_d);
      }
    }
    WgmmaCommit();
    WgmmaWait<K.pending>();
#pragma unroll
    for (int i = 0; i < kAcc; ++i) FenceOperand(d[i]);
  }

  /// At a tile's end: waits for the batch left running (pending 1).
  __device__ __forceinline__ void Finish(float (&d)[kAcc]) const {
    if constexpr (K.pending > 0) {
      WgmmaWait<0>();
#pragma unroll
      for (int i = 0; i < kAcc; ++i) FenceOperand(d[i]);
    }
  }
};

/// C = A * B^T, B given N x K (fp8: times scale_a * scale_b, which the other rungs do not read).
/// On the tile (the launcher's plan, sm90_shapes.h) M % (128 * cluster_m), N % (256 *
/// cluster_n), K % BlockK(K) == 0; off it K.guarded, N a multiple of 8, K's rows whole 16-byte
/// chunks.
/// Non-persistent rungs: one unit per cluster; persistent: gridDim.x CTAs.
template <Knobs K>
__global__ void __launch_bounds__(K.Threads(), 1)
    Sm90WgmmaKernel(const __grid_constant__ CUtensorMap map_a,
                    const __grid_constant__ CUtensorMap map_b,
                    const __grid_constant__ CUtensorMap map_c, __nv_bfloat16* __restrict__ c, int m,
                    int n, int k, const __grid_constant__ StreamKArgs sk,
                    const float* __restrict__ scale_a, const float* __restrict__ scale_b) {
  static_assert(ValidWgmmaKnobs(K),
                "the persistent, cluster, TMA-store and 64-row rungs build on H3");
  constexpr bool kTmaStore = TmaStoresC(K);
  extern __shared__ uint8_t smem_raw[];
  uint8_t* smem = AlignSmem1024(smem_raw);
  uint8_t* store_buffers = smem + K.stages * StageBytes(K);  // kTmaStore only
  uint64_t* full =
      reinterpret_cast<uint64_t*>(store_buffers + (kTmaStore ? StoreBufferBytes(K) : 0));
  const TmaPipeline<K> pipe{smem, full, full + K.stages};
  const TileScheduler<K> sched(m, n, k, sk);
  const int rank = sched.kCtas == 1 ? 0 : int(ClusterCtaRank());
  const int unit0 = int(blockIdx.x) / sched.kCtas;  // the unit of a non-persistent CTA
  using Epilogue = EpilogueOf<K>;

  if (threadIdx.x == 0) {
    TmaPrefetchMap(&map_a);
    TmaPrefetchMap(&map_b);
    if constexpr (kTmaStore) TmaPrefetchMap(&map_c);
    pipe.InitBarriers();
  }
  if constexpr (TileScheduler<K>::kCtas > 1) {
    ClusterSync();  // the peer's barriers exist before anything multicasts into them
  } else {
    __syncthreads();
  }

  if constexpr (!K.warp_specialized) {
    // H2: every thread computes; thread 0 also refills the stage the block finished last.
    const int cw = WarpUniform(threadIdx.x / 128);
    const WgmmaMainloop<K> mainloop(smem, cw);
    int m0, n0;
    sched.TileOf(unit0, 0, &m0, &n0);
    auto issue = [&](int s, int kt) {
      if (threadIdx.x == 0 && kt < sched.kt_count)
        TmaStage(pipe.StageA(s), &map_a, &map_b, &pipe.full[s], kt, m0, n0);
    };
    float d[Accumulators(K)] = {};
    for (int s = 0; s < K.stages - 1; ++s) issue(s, s);
    for (int kt = 0; kt < sched.kt_count; ++kt) {
      const int s = kt % K.stages;
      MbarWait(&pipe.full[s], uint32_t(kt / K.stages) & 1);
      __syncthreads();
      issue((kt + K.stages - 1) % K.stages, kt + K.stages - 1);
      mainloop.Mma(d, s, kt > 0);
    }
    Epilogue(c, m, n, store_buffers, &map_c, cw).Store(d, m0, n0);
  } else if (const int wg = threadIdx.x / 128; wg == 0) {
    // The producer warpgroup: one thread loads every k-tile of the schedule.
    SetMaxNRegDec<kProducerRegisters>();
    if (threadIdx.x == 0) {
      PipelineState<K.stages> st;
      sched.ForEachWork([&](int unit, int kb, int ke, int) {
        int m0, n0;
        sched.TileOf(unit, rank, &m0, &n0);
        // One k-tile per call, as the consumers' k_tile below (it keeps the compiled code the
        // rungs were measured with).
        auto load = [&](int kt) {
          pipe.ProducerAcquire(st);
          pipe.ProducerLoad(st, &map_a, &map_b, kt, m0, n0, rank);
          st.Advance();
        };
        for (int kt = kb; kt < ke; ++kt) load(kt);
      });
    }
  } else {
    // The consumer warpgroups: wgmma on each full stage, the epilogue per tile.
    SetMaxNRegInc<ConsumerRegisters(K)>();
    const int cw = WarpUniform(wg) - 1;
    const int t = threadIdx.x & 127, lane = threadIdx.x & 31;
    const WgmmaMainloop<K> mainloop(smem, cw);
    const ConsumerPipeline<K> consumer(pipe, lane);
    Epilogue epilogue(c, m, n, store_buffers, &map_c, cw);
    // fp8: C = scale_a * scale_b * (A * B^T), one product for the kernel.
    float alpha = 1.0f;
    if constexpr (K.fp8) alpha = *scale_a * *scale_b;
    float d[Accumulators(K)] = {};
    PipelineState<K.stages> st;
    sched.ForEachWork([&](int unit, int kb, int ke, int sku) {
      int m0, n0;
      sched.TileOf(unit, rank, &m0, &n0);
      auto lag = consumer.BeginTile();
      auto k_tile = [&](int kt) {
        consumer.Wait(st);
        mainloop.Mma(d, st.stage, kt > kb);
        consumer.ReleaseAfterIssue(st, lag);
        st.Advance();
      };
      int kt = kb;
      epilogue.OverlapWithKTiles(kt, ke, k_tile);
      for (; kt < ke; ++kt) k_tile(kt);
      mainloop.Finish(d);
      consumer.ReleaseHeld(lag);
      if (sched.FixUp(d, sku, kb, ke, rank, cw, t)) {
        if constexpr (K.fp8) {
#pragma unroll
          for (int i = 0; i < Accumulators(K); ++i) d[i] *= alpha;
        }
        epilogue.Store(d, m0, n0);
      }
    });
    epilogue.Finish(t);
  }
  if constexpr (TileScheduler<K>::kCtas > 1) {
    ClusterSync();  // no CTA leaves while its peer may still write into it or arrive on it
  }
}

/// The kernel the build K runs: Sm90WgmmaKernel of KernelKnobs(K) (sm90_config.h), so that builds
/// differing only in the knobs the host's plan reads share one. Every launch, attribute, occupancy
/// query and kernel address of a build names it here, so that none can name another copy.
template <Knobs K>
inline constexpr auto kWgmmaKernel = &Sm90WgmmaKernel<KernelKnobs(K)>;

}  // namespace ablation::kernels::sm90
