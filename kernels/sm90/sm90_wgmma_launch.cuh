// The launcher of the wgmma rungs, a template over their configuration (sm90_wgmma.cu binds the
// ladder's; the tuning tool tools/sm90_tune.cu may time others).
#pragma once

#include <algorithm>
#include <climits>

#include "kernels/sm90/sm90_launch.cuh"
#include "kernels/sm90/sm90_wgmma.cuh"

namespace ablation::kernels::sm90 {

/// The launch of `ctas` CTAs of the rung, in clusters of K.cluster_m along M; `attr` holds
/// the cluster dimension the configuration points at.
template <Knobs K>
cudaLaunchConfig_t LaunchConfig(int ctas, cudaStream_t stream, cudaLaunchAttribute* attr) {
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(unsigned(ctas));
  cfg.blockDim = dim3(K.Threads());
  cfg.dynamicSmemBytes = SmemBytes(K.epilogue);
  cfg.stream = stream;
  if constexpr (K.Ctas() > 1) {
    *attr = cudaLaunchAttribute{};
    attr->id = cudaLaunchAttributeClusterDimension;
    attr->val.clusterDim.x = K.Ctas();
    attr->val.clusterDim.y = 1;
    attr->val.clusterDim.z = 1;
    cfg.attrs = attr;
    cfg.numAttrs = 1;
  }
  return cfg;
}

/// CTAs of a persistent grid: as many as can be resident at once (clusters of two need two free
/// SMs of one GPC, so the count comes from the occupancy calculator, not from the SM count).
template <Knobs K>
std::string PersistentCtas(int units, cudaStream_t stream, int* ctas) {
  if constexpr (K.Ctas() == 1) {
    *ctas = std::min(Sm90SmCount(), units);
    return *ctas > 0 ? "" : "sm90 kernel: cannot read the multiprocessor count";
  } else {
    static int clusters = -1;  // per process and configuration
    if (clusters < 0) {
      cudaLaunchAttribute attr{};
      const cudaLaunchConfig_t cfg = LaunchConfig<K>(K.Ctas() * Sm90SmCount(), stream, &attr);
      int n = 0;
      if (cudaError_t e = cudaOccupancyMaxActiveClusters(&n, Sm90WgmmaKernel<K>, &cfg);
          e != cudaSuccess || n <= 0) {
        return e != cudaSuccess ? LaunchError("cudaOccupancyMaxActiveClusters", e)
                                : "sm90 kernel: no cluster of " + std::to_string(K.Ctas()) +
                                      " fits on this device";
      }
      clusters = n;
    }
    *ctas = std::min(clusters, units) * K.Ctas();
    return "";
  }
}

/// Launches the build K on `args` (on its tile, or K.guarded), B with `b_rows` rows; a persistent
/// grid gets K.max_ctas CTAs at most when it is not 0 (the tuning tool's knob; the rungs leave it
/// 0: as many as fit).
template <Knobs K>
struct WgmmaBuild {
  static std::string Launch(const GemmArgs& args, int64_t b_rows);
};

// Defined outside the class so that it is not inline: sm90_guarded.h's explicit instantiation
// declarations then keep a unit from instantiating the guarded builds.
template <Knobs K>
std::string WgmmaBuild<K>::Launch(const GemmArgs& args, int64_t b_rows) {
  const Problem& p = args.problem;
  if (cudaError_t e = ConfigureSmemOnce<Sm90WgmmaKernel<K>>(SmemBytes(K.epilogue));
      e != cudaSuccess) {
    return LaunchError("cudaFuncSetAttribute(MaxDynamicSharedMemorySize)", e);
  }
  auto stream = static_cast<cudaStream_t>(args.stream);
  const int units = int(UnitsOf(K, p.m, p.n));
  int ctas = units * K.Ctas();
  if constexpr (K.persistent) {
    // Stream-K may share the units' k-tiles with every cluster that fits, also when there are
    // fewer units than clusters (a small M or N: one partial round); the grid is trimmed back to
    // the units below when the plan shares nothing.
    if (std::string e = PersistentCtas<K>(K.stream_k ? INT_MAX : units, stream, &ctas);
        !e.empty()) {
      return e;
    }
    if (K.max_ctas > 0) ctas = std::min(ctas, K.max_ctas);
  }
  StreamKArgs sk;
  if constexpr (K.stream_k) {
    StreamKPlan(units, int((p.k + BlockK(K) - 1) / BlockK(K)), ctas / K.Ctas(), &sk,
                K.sk_max_full_quarters);
    if (sk.sk_clusters == 0) ctas = std::min(ctas, units * K.Ctas());
    if (sk.sk_clusters > 0) {  // else every unit goes whole: no partials, no flags
      // Partials (and 4 flags) per CTA of each unit of the shared round.
      const int64_t sk_ctas = int64_t(units - sk.dp_units) * K.Ctas();
      void* partials = nullptr;
      if (std::string e = StreamKWorkspace(sk_ctas * kPartialBytesPerCta, sk_ctas * 4, &partials,
                                           &sk.flags, &sk.epoch);
          !e.empty()) {
        return e;
      }
      sk.partials = static_cast<float*>(partials);
    }
  }
  if constexpr (K.clusters_where_shared) {
    // A last round left whole and more units than clusters: the grid is fitted, and the build
    // without clusters plans and launches it (its own units, rounds and fitted grid).
    if (RunsWithoutClusters(sk, units, ctas / K.Ctas())) {
      return WgmmaBuild<Unclustered(K)>::Launch(args, b_rows);
    }
  }
  if constexpr (K.fit_grid) {
    // Only a last round that stream-K leaves whole: a shared one is what its clusters are for.
    if (sk.sk_clusters == 0) ctas = FitGridClusters(units, ctas / K.Ctas()) * K.Ctas();
  }
  // The maps once the grid is planned: a launch handed to the build without clusters above
  // encodes its own (its B box is a whole tile's).
  CUtensorMap ma, mb;
  // Each CTA of a cluster loads the half of a tile it shares with a partner.
  const int a_rows = K.cluster_n == 2 ? kBlockM / 2 : kBlockM;
  const int b_box = K.cluster_m == 2 ? kBlockN / 2 : kBlockN;
  if (std::string e = EncodeMaps(args, b_rows, b_box, &ma, &mb, a_rows); !e.empty()) return e;
  CUtensorMap mc;
  if constexpr (K.epilogue == Epilogue::kTmaStore) {
    // C as 64x64 boxes with the 128-byte swizzle the epilogue writes its chunks in.
    if (std::string e = EncodeKMajorBf16(&mc, args.c, p.m, p.n, 64); !e.empty()) return e;
  } else {
    std::memset(&mc, 0, sizeof mc);  // unused by the other epilogues
  }
  cudaLaunchAttribute attr{};
  const cudaLaunchConfig_t cfg = LaunchConfig<K>(ctas, stream, &attr);
  auto* c = static_cast<__nv_bfloat16*>(args.c);
  if (cudaError_t e = cudaLaunchKernelEx(&cfg, Sm90WgmmaKernel<K>, ma, mb, mc, c, int(p.m),
                                         int(p.n), int(p.k), sk, args.scale_a, args.scale_b);
      e != cudaSuccess) {
    return LaunchError("sm90 launch", e);
  }
  if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) return LaunchError("sm90 launch", e);
  return "";
}

}  // namespace ablation::kernels::sm90
