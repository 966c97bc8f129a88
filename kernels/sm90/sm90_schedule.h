// The tile scheduler of the wgmma rungs: which work units (cluster_m x cluster_n tiles) a cluster
// computes and in what order, which k-tiles of them, and the stream-K fix-up of the units shared
// along K. The plan (StreamKPlan, Schedule, SkSegmentAt) is shared by the host (launcher, tests)
// and the kernel; TileScheduler, the kernel's view of it, is what the producer and the consumers
// of Sm90WgmmaKernel walk (sm90_wgmma.cuh). Knobs it reads: persistent, cluster_m, cluster_n,
// grouped_order, group_rows, stream_k.
#pragma once

#include <algorithm>
#include <cstdint>

#include "kernels/sm90/sm90_config.h"

#if defined(__CUDACC__)
#include "kernels/sm90/sm90_ptx.cuh"
#define ABLATION_SM90_HD __host__ __device__ __forceinline__
#else
#define ABLATION_SM90_HD inline
#endif

namespace ablation::kernels::sm90 {

// ---- the plan (host and device) ---------------------------------------------------------------

/// The stream-K fix-up's global memory and schedule, passed to the kernel (zeros for the rungs
/// without stream-K). A partial's writer sets its flag to `epoch`, a number new to each launch,
/// so the flags never need clearing and a flag left by an earlier launch never reads as set.
struct StreamKArgs {
  float* partials = nullptr;
  uint32_t* flags = nullptr;
  uint32_t epoch = 0;
  /// From StreamKPlan: units done whole, and the clusters sharing the sk_iters k-tiles of the
  /// rest (0: none; every unit whole).
  int dp_units = 0;
  uint32_t sk_clusters = 0;
  uint32_t sk_iters = 0;
};

/// Bytes of partial sums one CTA of a stream-K unit may need: sk_parts slots x its consumer
/// warpgroups x 64x256 fp32 (a unit meets at most sk_parts + 1 ranges, so at most sk_parts
/// partials precede its own): 256 KiB for the 128-row rungs' three ranges.
inline constexpr int64_t PartialBytesPerCta(const Knobs& k) {
  return int64_t(k.sk_parts) * ConsumerWarpgroups(k) * 64 * k.block_n * 4;
}
/// Completion flags of those partials per CTA: one per slot and consumer warpgroup.
inline constexpr int64_t PartialFlagsPerCta(const Knobs& k) {
  return int64_t(k.sk_parts) * ConsumerWarpgroups(k);
}

/// Work units of an m x n problem: a unit is cluster_m x cluster_n adjacent tiles, one per CTA
/// of a cluster (off the tile, the last unit of a row or column reaches past the matrix).
inline constexpr int64_t UnitsOf(const Knobs& k, int64_t m, int64_t n) {
  const int64_t um = int64_t(k.block_m) * k.cluster_m, un = int64_t(k.block_n) * k.cluster_n;
  return ((m + um - 1) / um) * ((n + un - 1) / un);
}

/// The stream-K schedule of `units` units of `kt_count` k-tiles on `clusters` clusters. When the
/// last round is at most max_full_quarters/4 full, the units left after the last whole round are
/// laid out as one line of k-tiles and cut into equal ranges longer than 1/parts of a unit (half
/// by default), one per sharing cluster, so that a unit meets at most parts + 1 ranges. Left whole
/// (sk_clusters 0) when nothing is left over, when the last round is fuller, when there are fewer
/// units than clusters and they have fewer than kStreamKMinKTilesAlone k-tiles, or when the line is
/// too long for the kernel's 32-bit arithmetic (beyond 2^32 / 133 k-tiles, far past any matrix that
/// fits).
inline void StreamKPlan(int units, int kt_count, int clusters, StreamKArgs* sk,
                        int max_full_quarters = kStreamKMaxFullQuarters, int parts = 2) {
  sk->dp_units = units;
  sk->sk_clusters = 0;
  sk->sk_iters = 0;
  if (clusters <= 0 || kt_count <= 0 || units % clusters == 0) return;
  if (4 * (units % clusters) > max_full_quarters * clusters) return;
  if (units < clusters && kt_count < kStreamKMinKTilesAlone) return;
  const int dp = units / clusters * clusters;
  const int64_t iters = int64_t(units - dp) * kt_count;
  const int64_t shared =
      std::min<int64_t>(clusters, std::max<int64_t>(1, iters / (kt_count / parts + 1)));
  if (iters * (shared + 1) >= (int64_t(1) << 32)) return;
  sk->dp_units = dp;
  sk->sk_clusters = uint32_t(shared);
  sk->sk_iters = uint32_t(iters);
}

/// Clusters of a persistent grid fitted to its rounds (Knobs::fit_grid): of `clusters` that fit,
/// the fewest that take the same number of rounds over `units` units, so that every round is
/// full (the last one short by fewer units than there are rounds) and starts at the same place of
/// the tile order. 4096^3 in bf16: 256 units of 2x1 tiles on 66 clusters is 4 rounds, the last
/// 58 units; on 64 clusters 4 full rounds, each an 8x8 block of units (groups of 8 unit rows). A
/// grid with no more clusters than units is left as it is.
ABLATION_SM90_HD int FitGridClusters(int units, int clusters) {
  if (clusters <= 0 || units <= clusters) return clusters;
  const int rounds = (units + clusters - 1) / clusters;
  return (units + rounds - 1) / rounds;
}

/// Knobs::clusters_where_shared: whether a clustered rung whose plan is `sk` (StreamKPlan over
/// `units` units on `clusters` clusters) runs without its clusters: where stream-K leaves the
/// last round whole and there are more units than clusters, i.e. where the grid is fitted to its
/// rounds. 4096^3 bf16 (256 units of 2x1 tiles, 4 rounds on 66 clusters): yes; 8192^3 (1024
/// units, the last round of 34 shared): no.
ABLATION_SM90_HD bool RunsWithoutClusters(const StreamKArgs& sk, int units, int clusters) {
  return sk.sk_clusters == 0 && units > clusters;
}

/// Which units a cluster computes, and which k-tiles of them. Units 0..dp_units-1 go round-robin
/// to the clusters whole. With stream-K the rest (fewer than one round) is laid out as one line of
/// sk_iters k-tiles and cut into sk_clusters equal ranges, one per cluster: a unit is then shared
/// by up to three clusters, and the one holding its last k-tile adds the others' partial sums and
/// stores it. Without stream-K, every unit goes whole (a non-persistent grid has one cluster per
/// unit). Producer and consumers walk the same schedule, so their stages stay in step.
struct Schedule {
  int kt_count = 0;
  int clusters = 0;  ///< clusters of the grid
  int cluster = 0;   ///< this CTA's
  int dp_units = 0;
  uint32_t sk_clusters = 0;
  uint32_t sk_iters = 0;  ///< sk_iters * (sk_clusters + 1) < 2^32 (the launcher's condition)

  /// First k-tile of cluster c's range in the stream-K line.
  ABLATION_SM90_HD uint32_t SkStart(uint32_t c) const { return c * sk_iters / sk_clusters; }
  /// The cluster whose range holds k-tile x of the line (the largest c with SkStart(c) <= x).
  ABLATION_SM90_HD uint32_t SkOwner(uint32_t x) const {
    return ((x + 1) * sk_clusters + sk_iters - 1) / sk_iters - 1;
  }
  /// Partial sums of stream-K unit `sku` that precede k-tile `kb` of it: the clusters between
  /// the one holding its first k-tile and the one holding kb.
  ABLATION_SM90_HD int SlotOf(int sku, int kb) const {
    const uint32_t x0 = uint32_t(sku) * uint32_t(kt_count);
    return int(SkOwner(x0 + kb) - SkOwner(x0));
  }
};

/// One piece of a cluster's stream-K range: k-tiles kb..ke-1 of unit `unit` (stream-K unit `sku`).
struct SkSegment {
  int unit = 0;
  int kb = 0;
  int ke = 0;
  int sku = 0;
};
/// Segment i of cluster c's stream-K range, in the order the cluster works them: from its last
/// unit down. There it holds a unit's first k-tiles (a partial that waits for nobody) before the
/// unit whose last k-tiles it holds, whose fix-up waits for the partials of the clusters before
/// it. So no cluster waits on a cluster that waits, and the fix-ups cannot deadlock (the
/// persistent grid is resident as a whole). False past the last segment. (An index rather than
/// an array of segments: an array would live in local memory in the kernel.)
ABLATION_SM90_HD bool SkSegmentAt(const Schedule& s, int c, int i, SkSegment* seg) {
  if (uint32_t(c) >= s.sk_clusters) return false;
  const uint32_t b = s.SkStart(uint32_t(c)), e = s.SkStart(uint32_t(c) + 1);
  const uint32_t kt = uint32_t(s.kt_count);
  const int u = int((e - 1) / kt) - i;
  if (u < int(b / kt)) return false;
  const uint32_t u0 = uint32_t(u) * kt;
  seg->unit = s.dp_units + u;
  seg->kb = int((b > u0 ? b : u0) - u0);
  seg->ke = int((e < u0 + kt ? e : u0 + kt) - u0);
  seg->sku = u;
  return true;
}

#if defined(__CUDACC__)

// ---- the kernel's view -------------------------------------------------------------------------

/// The order of the tiles and the stream-K fix-up of a wgmma rung, built from the kernel's
/// parameters. Producer and consumers walk the same schedule, so their stages stay in step.
template <Knobs K>
struct TileScheduler {
  static constexpr int kCtas = K.Ctas();
  int m_tiles, n_tiles;
  int units;     ///< work units of the problem (UnitsOf)
  int kt_count;  ///< k-tiles of a unit
  const StreamKArgs& sk;

  /// Off the tile (K.guarded) the counts round up: the last tiles and k-tile reach past the
  /// matrices, whose loads read zeros there.
  __device__ __forceinline__ TileScheduler(int m, int n, int k, const StreamKArgs& sk_args)
      : m_tiles(K.guarded ? (m + K.block_m - 1) / K.block_m : m / K.block_m),
        n_tiles(K.guarded ? (n + K.block_n - 1) / K.block_n : n / K.block_n),
        units(K.guarded ? ((m_tiles + K.cluster_m - 1) / K.cluster_m) *
                              ((n_tiles + K.cluster_n - 1) / K.cluster_n)
                        : (m_tiles / K.cluster_m) * (n_tiles / K.cluster_n)),
        kt_count(K.guarded ? (k + BlockK(K) - 1) / BlockK(K) : k / BlockK(K)),
        sk(sk_args) {}

  /// Tile (m0, n0) of work unit `unit` for the CTA of cluster rank `rank`: units row by row, or
  /// (grouped_order) in groups of group_rows unit rows walked down, then right (L2 reuse).
  __device__ __forceinline__ void TileOf(int unit, int rank, int* m0, int* n0) const {
    const int units_m =
        K.guarded ? (m_tiles + K.cluster_m - 1) / K.cluster_m : m_tiles / K.cluster_m;
    const int units_n =
        K.guarded ? (n_tiles + K.cluster_n - 1) / K.cluster_n : n_tiles / K.cluster_n;
    int um, un;
    if constexpr (K.grouped_order) {
      const int per_group = K.group_rows * units_n;
      const int first = (unit / per_group) * K.group_rows;
      const int rows = min(K.group_rows, units_m - first);
      const int r = unit % per_group;
      um = first + r % rows;
      un = r / rows;
    } else {
      um = unit / units_n;
      un = unit % units_n;
    }
    *m0 = (um * K.cluster_m + rank % K.cluster_m) * K.block_m;
    *n0 = (un * K.cluster_n + rank / K.cluster_m) * K.block_n;
  }

  /// This CTA's schedule, its stream-K part read from the launch's parameters.
  __device__ __forceinline__ Schedule ScheduleOf() const {
    Schedule s;
    s.kt_count = kt_count;
    s.cluster = int(blockIdx.x) / kCtas;
    s.clusters = K.persistent ? int(gridDim.x) / kCtas : units;
    s.dp_units = K.stream_k ? sk.dp_units : units;
    if constexpr (K.stream_k) {
      s.sk_clusters = sk.sk_clusters;
      s.sk_iters = sk.sk_iters;
    }
    return s;
  }

  /// Calls f(unit, first k-tile, end k-tile, stream-K unit or -1) for this cluster's work in
  /// order: its whole units (persistent: every clusters-th; else the one of its CTA), then its
  /// stream-K segments (SkSegmentAt says why in that order). The schedule is made where it is
  /// used, from the kernel's parameters (constant memory), so that the producer (40 registers)
  /// holds none of it across its loops.
  template <class F>
  __device__ __forceinline__ void ForEachWork(F&& f) const {
    {
      const Schedule s = ScheduleOf();
      for (int unit = s.cluster; unit < s.dp_units; unit += s.clusters) f(unit, 0, kt_count, -1);
    }
    if constexpr (K.stream_k) {
      SkSegment seg;
      for (int i = 0; SkSegmentAt(ScheduleOf(), int(blockIdx.x) / kCtas, i, &seg); ++i) {
        f(seg.unit, seg.kb, seg.ke, seg.sku);
      }
    }
  }

  /// The stream-K fix-up of consumer warpgroup `cw`'s accumulators `d` after k-tiles kb..ke-1 of
  /// stream-K unit `sku` (-1: a whole unit, nothing to do). Not the unit's last k-tiles: leaves
  /// the partial sum for the cluster that has them and returns false (nothing to store). Else
  /// adds the partials of the k-tiles before kb, in the order of the clusters, and returns true.
  __device__ __forceinline__ bool FixUp(float (&d)[Accumulators(K)], int sku, int kb, int ke,
                                        int rank, int cw, int t) const {
    if constexpr (K.stream_k) {
      if (sku >= 0) {
        const int slot = ScheduleOf().SlotOf(sku, kb);
        if (ke < kt_count) {
          const int64_t at = PartialIndex(sku, rank, slot, cw);
          WritePartial(d, sk.partials + at * (64 * K.block_n));
          NamedBarrierSync(1 + cw, 128);
          if (t == 0) SignalFlag(sk.flags + at, sk.epoch);
          return false;
        }
        for (int from = 0; from < slot; ++from) {
          const int64_t at = PartialIndex(sku, rank, from, cw);
          if (t == 0) WaitFlag(sk.flags + at, sk.epoch);
          NamedBarrierSync(1 + cw, 128);
          AddPartial(d, sk.partials + at * (64 * K.block_n));
        }
      }
    }
    return true;
  }

 private:
  /// Where a stream-K partial lives: per (stream-K unit, CTA rank, slot, consumer warpgroup) a
  /// 64 x block_n fp32 block, stored as block_n / 8 float4 per thread with the threads of a
  /// warpgroup adjacent (each warp writes 512 contiguous bytes), and one flag.
  __device__ __forceinline__ static int64_t PartialIndex(int sku, int rank, int slot, int cw) {
    return ((int64_t(sku) * kCtas + rank) * K.sk_parts + slot) * ConsumerWarpgroups(K) + cw;
  }

  __device__ __forceinline__ static void WritePartial(const float (&d)[Accumulators(K)],
                                                      float* block) {
    const int t = threadIdx.x & 127;
    float4* out = reinterpret_cast<float4*>(block);
#pragma unroll
    for (int i = 0; i < Accumulators(K) / 4; ++i) {
      __stcg(out + i * 128 + t, make_float4(d[4 * i], d[4 * i + 1], d[4 * i + 2], d[4 * i + 3]));
    }
  }

  __device__ __forceinline__ static void AddPartial(float (&d)[Accumulators(K)],
                                                    const float* block) {
    const int t = threadIdx.x & 127;
    const float4* in = reinterpret_cast<const float4*>(block);
#pragma unroll
    for (int i = 0; i < Accumulators(K) / 4; ++i) {
      const float4 v = __ldcg(in + i * 128 + t);
      d[4 * i] += v.x;
      d[4 * i + 1] += v.y;
      d[4 * i + 2] += v.z;
      d[4 * i + 3] += v.w;
    }
  }

  __device__ __forceinline__ static void SignalFlag(uint32_t* flag, uint32_t epoch) {
    __threadfence();
    asm volatile("st.release.gpu.global.u32 [%0], %1;\n" ::"l"(flag), "r"(epoch) : "memory");
  }

  __device__ __forceinline__ static void WaitFlag(const uint32_t* flag, uint32_t epoch) {
    uint32_t v;
    do {
      asm volatile("ld.acquire.gpu.global.u32 %0, [%1];\n" : "=r"(v) : "l"(flag) : "memory");
    } while (v != epoch);
  }
};

#endif  // __CUDACC__

}  // namespace ablation::kernels::sm90
