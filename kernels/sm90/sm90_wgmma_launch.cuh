// The launcher of the wgmma rungs, a template over their configuration (sm90_wgmma.cu binds the
// ladder's; the tuning tool tools/sm90_tune.cu may time others).
#pragma once

#include <string>

#include "kernels/sm90/sm90_launch.cuh"
#include "kernels/sm90/sm90_plan.h"
#include "kernels/sm90/sm90_wgmma.cuh"

namespace ablation::kernels::sm90 {

/// The launch of `ctas` CTAs of the rung, in clusters of K.Ctas(); `attr` holds
/// the cluster dimension the configuration points at.
template <Knobs K>
cudaLaunchConfig_t LaunchConfig(int ctas, cudaStream_t stream, cudaLaunchAttribute* attr) {
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(unsigned(ctas));
  cfg.blockDim = dim3(K.Threads());
  cfg.dynamicSmemBytes = SmemBytes(K);
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

/// What the device holds of K's persistent grid at once (sm90_plan.h): its SMs and, for a rung
/// with clusters, the clusters of K.Ctas() CTAs that fit (free SMs of one GPC: from the occupancy
/// calculator, not from the SM count; asked once per process and configuration).
template <Knobs K>
std::string DeviceResidency(cudaStream_t stream, Residency* r) {
  r->sms = Sm90SmCount();
  if (r->sms <= 0) return "sm90 kernel: cannot read the multiprocessor count";
  if constexpr (K.Ctas() > 1) {
    static int clusters = -1;  // per process and configuration
    if (clusters < 0) {
      // The occupancy calculator holds the launch to the kernel's dynamic shared memory limit:
      // asked before the first launch (the worker asks when it opens the device), the kernel
      // must have been allowed its shared memory first, or no cluster fits.
      if (cudaError_t e = ConfigureSmemOnce<kWgmmaKernel<K>>(SmemBytes(K)); e != cudaSuccess)
        return LaunchError("cudaFuncSetAttribute(MaxDynamicSharedMemorySize)", e);
      cudaLaunchAttribute attr{};
      const cudaLaunchConfig_t cfg = LaunchConfig<K>(K.Ctas() * r->sms, stream, &attr);
      int n = 0;
      if (cudaError_t e = cudaOccupancyMaxActiveClusters(&n, kWgmmaKernel<K>, &cfg);
          e != cudaSuccess || n <= 0) {
        return e != cudaSuccess ? LaunchError("cudaOccupancyMaxActiveClusters", e)
                                : "sm90 kernel: no cluster of " + std::to_string(K.Ctas()) +
                                      " fits on this device";
      }
      clusters = n;
    }
    r->pair_clusters = clusters;
  }
  return "";
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
  if (cudaError_t e = ConfigureSmemOnce<kWgmmaKernel<K>>(SmemBytes(K)); e != cudaSuccess) {
    return LaunchError("cudaFuncSetAttribute(MaxDynamicSharedMemorySize)", e);
  }
  auto stream = static_cast<cudaStream_t>(args.stream);
  Residency device;
  if constexpr (K.persistent) {
    if (std::string e = DeviceResidency<K>(stream, &device); !e.empty()) return e;
  }
  const GridPlan grid = PlanGrid(K, p, device);
  if constexpr (K.clusters_where_shared) {
    // The build without clusters plans (the same grid) and launches it.
    if (grid.clusters_dropped) return WgmmaBuild<Unclustered(K)>::Launch(args, b_rows);
  }
  StreamKArgs sk = grid.sk;
  if (grid.partial_bytes > 0) {
    void* partials = nullptr;
    if (std::string e =
            StreamKWorkspace(grid.partial_bytes, grid.flags, &partials, &sk.flags, &sk.epoch);
        !e.empty()) {
      return e;
    }
    sk.partials = static_cast<float*>(partials);
  }
  const int ctas = grid.ctas;
  // The maps once the grid is planned: a launch handed to the build without clusters above
  // encodes its own (its B box is a whole tile's).
  CUtensorMap ma, mb;
  // Each CTA of a cluster loads its share of a tile it shares with its partners (a half, or a
  // quarter of B in 4x1 clusters).
  const int a_rows = K.cluster_n == 2 ? K.block_m / 2 : K.block_m;
  const int b_box = K.block_n / K.cluster_m;
  if (std::string e = EncodeMaps(args, b_rows, b_box, &ma, &mb, a_rows); !e.empty()) return e;
  CUtensorMap mc;
  if constexpr (TmaStoresC(K)) {
    // C as boxes of 64 columns with the 128-byte swizzle the epilogue writes its chunks in: a
    // chunk's 64 rows, or a warp's 16 of them (warp_stores).
    if (std::string e = EncodeKMajorBf16(&mc, args.c, p.m, p.n, StoreBoxRows(K)); !e.empty())
      return e;
  } else {
    std::memset(&mc, 0, sizeof mc);  // unused by the other epilogues
  }
  cudaLaunchAttribute attr{};
  const cudaLaunchConfig_t cfg = LaunchConfig<K>(ctas, stream, &attr);
  auto* c = static_cast<__nv_bfloat16*>(args.c);
  if (cudaError_t e = cudaLaunchKernelEx(&cfg, kWgmmaKernel<K>, ma, mb, mc, c, int(p.m), int(p.n),
                                         int(p.k), sk, args.scale_a, args.scale_b);
      e != cudaSuccess) {
    return LaunchError("sm90 launch", e);
  }
  if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) return LaunchError("sm90 launch", e);
  return "";
}

/// Points the variant `name` (rung `rung` of its table) at the kernel each problem runs
/// (Variant::kernel_at): the plan's (sm90_plan.h) own build on the tile, `guarded(rung,
/// unclustered)` off it, either without clusters where the plan drops them. Taking the address
/// instantiates nothing new: every kernel named is one the rung's launches already run.
template <Knobs K>
void BindKernelAt(Registry& registry, std::string_view name,
                  const void* (*guarded)(size_t rung, bool unclustered), size_t rung) {
  Variant* v = registry.FindMutable(name);
  if (v == nullptr) return;
  v->kernel_at = [guarded, rung](const Problem& p) -> const void* {
    if (p.dtype != RungDType(K)) return nullptr;
    Residency device;
    if constexpr (K.persistent) (void)DeviceResidency<K>(nullptr, &device);  // zeros: unknown
    const LaunchPlan plan = PlanLaunch(K, p, device);
    if (plan.guarded) return guarded(rung, plan.grid.clusters_dropped);
    if constexpr (K.clusters_where_shared) {
      if (plan.grid.clusters_dropped)
        return reinterpret_cast<const void*>(kWgmmaKernel<Unclustered(K)>);
    }
    return reinterpret_cast<const void*>(kWgmmaKernel<K>);
  };
}

}  // namespace ablation::kernels::sm90
