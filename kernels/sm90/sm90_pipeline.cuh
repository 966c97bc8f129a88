// The shared-memory pipeline of the wgmma rungs: kStages stages of A and B filled by TMA, a `full`
// mbarrier per stage (the loads have landed) and an `empty` one (the consumers have read it).
// PipelineState is where a k-tile goes in the ring (stage and phase); TmaPipeline is the
// producer's side (acquire an empty stage, load it, with the cluster's multicast) and the
// consumers' (wait for a full stage, release it to every CTA that writes into it, with the lag
// of one wgmma batch left running). Used by Sm90WgmmaKernel (sm90_wgmma.cuh). Knobs it reads:
// cluster_m, cluster_n (who loads what, who is released), pending (the release lag).
#pragma once

#include <cstdint>

#include "kernels/sm90/sm90_common.cuh"
#include "kernels/sm90/sm90_config.h"
#include "kernels/sm90/sm90_ptx.cuh"

namespace ablation::kernels::sm90 {

/// A k-tile's place in the ring of stages: the stage, and the parity of the ring's round (the
/// mbarrier phase its wait names). Producer and consumers each keep one and advance it per k-tile.
/// The order of the fields and of Advance's updates is the one the ladder's kernels were measured
/// with: it decides the order of the compiler's phis and selects (tools/sm90_ptx_compare.py).
/// kCount: the build's stages (Knobs::stages).
template <int kCount>
struct PipelineState {
  uint32_t phase = 0;
  int stage = 0;

  __device__ __forceinline__ void Advance() {
    if (++stage == kCount) {
      stage = 0;
      phase ^= 1;
    }
  }
};

/// The stages at `smem` (K.stages x StageBytes(K), 1024-byte aligned) and their barriers.
template <Knobs K>
struct TmaPipeline {
  static_assert(K.cluster_m == 1 || K.cluster_m == 2 || (K.cluster_m == 4 && K.cluster_n == 1),
                "clusters of 1 or 2 CTAs along M, or 4 (4x1)");
  static_assert(K.cluster_n == 1 || K.cluster_n == 2, "clusters of 1 or 2 CTAs along N");
  /// Arrivals that release a stage: one per consumer warp of each CTA that writes into this one.
  static constexpr int kConsumerWarps = 4 * ConsumerWarpgroups(K);
  static constexpr int kStage = StageBytes(K), kATile = ATileBytes(K);
  static_assert(kStage % 1024 == 0 && kATile % 1024 == 0,
                "stages and B tiles start on the 1024 bytes the 128-byte swizzle repeats over");
  /// CTAs that write into a CTA's stages (itself, its B partners along M, its A partner along N):
  /// each of their consumers releases a stage to all of them.
  static constexpr int kWriters = K.cluster_m + K.cluster_n - 1;
  static constexpr int kCtas = K.Ctas();  ///< CTAs of a cluster

  uint8_t* smem;
  uint64_t* full;
  uint64_t* empty;

  __device__ __forceinline__ uint8_t* StageA(int s) const { return smem + s * kStage; }
  __device__ __forceinline__ uint8_t* StageB(int s) const { return smem + s * kStage + kATile; }

  /// One thread, before any use: the barriers (full: the producer's arrival and the bytes;
  /// empty: every writer's consumer warps).
  __device__ __forceinline__ void InitBarriers() const {
    for (int s = 0; s < K.stages; ++s) {
      MbarInit(&full[s], 1);
      MbarInit(&empty[s], kConsumerWarps * kWriters);
    }
    FenceBarrierInit();
  }

  // ---- the producer (one thread) ----

  /// Waits until the consumers of every writer have released the stage of `st`.
  __device__ __forceinline__ void ProducerAcquire(const PipelineState<K.stages>& st) const {
    MbarWait(&empty[st.stage], st.phase ^ 1);
  }

  /// Loads k-tile `kt` of the tile at (m0, n0) into the stage of `st`. `rank`: this CTA's in the
  /// cluster.
  __device__ __forceinline__ void ProducerLoad(const PipelineState<K.stages>& st,
                                               const CUtensorMap* map_a, const CUtensorMap* map_b,
                                               int kt, int m0, int n0, int rank) const {
    const int s = st.stage;
    if constexpr (K.cluster_m == 2 && K.cluster_n == 2) {
      // 2x2: each CTA loads half of its A (shared along N with rank ^ 2) and half of its B
      // (shared along M with rank ^ 1), each into itself and that partner. The rank is read
      // again here rather than kept: the producer has 40 registers.
      const uint32_t r = ClusterCtaRank(), rm = r & 1, rn = r >> 1;
      MbarArriveExpectTx(&full[s], kStage);
      TmaLoad2dMulticast(StageA(s) + rn * (kATile / 2), map_a, &full[s], kt * BlockK(K),
                         m0 + int(rn) * (K.block_m / 2), uint16_t((1u << r) | (1u << (r ^ 2))));
      TmaLoad2dMulticast(StageB(s) + rm * (BTileBytes(K) / 2), map_b, &full[s], kt * BlockK(K),
                         n0 + int(rm) * (K.block_n / 2), uint16_t((1u << r) | (1u << (r ^ 1))));
    } else if constexpr (K.cluster_m > 1) {
      // 2x1 or 4x1: each CTA loads its A and its share of the B tile the cluster shares (a half
      // or a quarter: block_n / cluster_m rows, whole 1 KiB swizzle atoms), into every CTA.
      MbarArriveExpectTx(&full[s], kStage);
      TmaLoad2d(StageA(s), map_a, &full[s], kt * BlockK(K), m0);
      TmaLoad2dMulticast(StageB(s) + rank * (BTileBytes(K) / K.cluster_m), map_b, &full[s],
                         kt * BlockK(K), n0 + rank * (K.block_n / K.cluster_m),
                         uint16_t((1u << K.cluster_m) - 1));
    } else if constexpr (K.cluster_n == 2) {
      // 1x2: each CTA loads its B and its half of the shared A tile, into both CTAs.
      MbarArriveExpectTx(&full[s], kStage);
      TmaLoad2dMulticast(StageA(s) + rank * (kATile / 2), map_a, &full[s], kt * BlockK(K),
                         m0 + rank * (K.block_m / 2), uint16_t(0x3));
      TmaLoad2d(StageB(s), map_b, &full[s], kt * BlockK(K), n0);
    } else {
      TmaStage(StageA(s), map_a, map_b, &full[s], kt, m0, n0, kStage, BlockK(K), kATile);
    }
  }
};

/// A consumer warp's side of the pipeline: the addresses of the hot loop computed once (the full
/// barriers, and the empty barriers as every CTA that writes into this one sees them: 2x1 or 1x2,
/// both CTAs, each writing half of B or of A; 4x1, all four, each writing a quarter of B; 2x2,
/// itself, its B partner rank ^ 1 and its A partner rank ^ 2), and the stage whose wgmma batch is
/// still running (pending 1).
template <Knobs K>
struct ConsumerPipeline {
  static constexpr int kWriters = TmaPipeline<K>::kWriters;
  static constexpr int kCtas = TmaPipeline<K>::kCtas;
  uint64_t* empty;
  uint32_t full_at;
  uint32_t empty_remote[kWriters];
  int lane;

  /// `lane_`: this thread's lane in its warp.
  __device__ __forceinline__ ConsumerPipeline(const TmaPipeline<K>& p, int lane_)
      : empty(p.empty), full_at(SmemAddr(p.full)), lane(lane_) {
    const uint32_t empty_at = SmemAddr(p.empty);
    if constexpr (K.cluster_m == 2 && K.cluster_n == 2) {
      const uint32_t r = ClusterCtaRank();
      empty_remote[0] = MapaShared(empty_at, r);
      empty_remote[1] = MapaShared(empty_at, r ^ 1);
      empty_remote[2] = MapaShared(empty_at, r ^ 2);
    } else if constexpr (kCtas > 1) {  // 2x1, 1x2, 4x1: every CTA of the cluster
#pragma unroll
      for (int w = 0; w < kCtas; ++w) empty_remote[w] = MapaShared(empty_at, uint32_t(w));
    }
  }

  /// Waits until the stage of `st` has landed.
  __device__ __forceinline__ void Wait(const PipelineState<K.stages>& st) const {
    MbarWaitAt(full_at + st.stage * 8, st.phase);
  }

  /// A tile's release lag (pending 1): the stage whose wgmma batch is still running, or -1.
  /// Made at the tile's start (BeginTile) and kept in the tile's scope.
  struct Lag {
    int held = -1;
  };

  /// At a tile's start: no batch of it is running yet.
  __device__ __forceinline__ Lag BeginTile() const { return Lag{}; }

  /// After the batch reading the stage of `st` is issued: releases the stage no batch reads any
  /// more, this one's (pending 0) or the one before's (pending 1: that batch has finished).
  __device__ __forceinline__ void ReleaseAfterIssue(const PipelineState<K.stages>& st,
                                                    Lag& lag) const {
    if constexpr (K.pending == 0) {
      Release(st.stage);
    } else {
      if (lag.held >= 0) Release(lag.held);
      lag.held = st.stage;
    }
  }

  /// After a tile's last batch has finished (pending 1: WgmmaMainloop::Finish): releases its stage.
  __device__ __forceinline__ void ReleaseHeld(const Lag& lag) const {
    if constexpr (K.pending > 0) Release(lag.held);
  }

  /// Releases stage `rs` once this warp's wgmma have read it, to every producer that writes into
  /// this CTA.
  __device__ __forceinline__ void Release(int rs) const {
    __syncwarp();
    if (lane == 0) {
      if constexpr (kCtas == 1) {
        MbarArrive(&empty[rs]);
      } else {
#pragma unroll
        for (int w = 0; w < kWriters; ++w) MbarArriveRemote(empty_remote[w] + rs * 8);
      }
    }
  }
};

}  // namespace ablation::kernels::sm90
