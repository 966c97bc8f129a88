// The launcher of the wgmma rungs, a template over their configuration (sm90_wgmma.cu binds the
// ladder's; the tuning tool tools/sm90_tune.cu may time others).
#pragma once

#include <algorithm>

#include "kernels/sm90/sm90_launch.cuh"
#include "kernels/sm90/sm90_wgmma.cuh"

namespace ablation::kernels::sm90 {

/// CTAs of a persistent grid: as many as can be resident at once (clusters of two need two free
/// SMs of one GPC, so the count comes from the occupancy calculator, not from the SM count).
/// The launch of `ctas` CTAs of the rung, in clusters of Cfg::kClusterM along M; `attr` holds
/// the cluster dimension the configuration points at.
template <class Cfg>
cudaLaunchConfig_t LaunchConfig(int ctas, cudaStream_t stream, cudaLaunchAttribute* attr) {
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(unsigned(ctas));
  cfg.blockDim = dim3(Cfg::kThreads);
  cfg.dynamicSmemBytes = SmemBytes(Cfg::kEpilogue);
  cfg.stream = stream;
  if constexpr (Cfg::kCtas > 1) {
    *attr = cudaLaunchAttribute{};
    attr->id = cudaLaunchAttributeClusterDimension;
    attr->val.clusterDim.x = Cfg::kCtas;
    attr->val.clusterDim.y = 1;
    attr->val.clusterDim.z = 1;
    cfg.attrs = attr;
    cfg.numAttrs = 1;
  }
  return cfg;
}

template <class Cfg>
std::string PersistentCtas(int units, cudaStream_t stream, int* ctas) {
  if constexpr (Cfg::kCtas == 1) {
    *ctas = std::min(Sm90SmCount(), units);
    return *ctas > 0 ? "" : "sm90 kernel: cannot read the multiprocessor count";
  } else {
    static int clusters = -1;  // per process and configuration
    if (clusters < 0) {
      cudaLaunchAttribute attr{};
      const cudaLaunchConfig_t cfg = LaunchConfig<Cfg>(Cfg::kCtas * Sm90SmCount(), stream, &attr);
      int n = 0;
      if (cudaError_t e = cudaOccupancyMaxActiveClusters(&n, Sm90WgmmaKernel<Cfg>, &cfg);
          e != cudaSuccess || n <= 0) {
        return e != cudaSuccess ? LaunchError("cudaOccupancyMaxActiveClusters", e)
                                : "sm90 kernel: no cluster of " + std::to_string(Cfg::kCtas) +
                                      " fits on this device";
      }
      clusters = n;
    }
    *ctas = std::min(clusters, units) * Cfg::kCtas;
    return "";
  }
}

/// Launches the rung; a persistent grid gets `kMaxCtas` CTAs at most when it is not 0 (the tuning
/// tool's knob; the ladder binds 0: as many as fit).
template <class Cfg, int kMaxCtas = 0>
std::string LaunchWgmma(const GemmArgs& args) {
  if (std::string e = CheckLaunch(args, Cfg::kClusterM, Cfg::kClusterN); !e.empty()) return e;
  const Problem& p = args.problem;
  CUtensorMap ma, mb;
  // Each CTA of a cluster loads the half of a tile it shares with a partner.
  const int a_rows = Cfg::kClusterN == 2 ? kBlockM / 2 : kBlockM;
  const int b_rows = Cfg::kClusterM == 2 ? kBlockN / 2 : kBlockN;
  if (std::string e = EncodeMaps(args, b_rows, &ma, &mb, a_rows); !e.empty()) return e;
  CUtensorMap mc;
  if constexpr (Cfg::kEpilogue == Epilogue::kTmaStore) {
    // C as 64x64 boxes with the 128-byte swizzle the epilogue writes its chunks in.
    if (std::string e = EncodeKMajorBf16(&mc, args.c, p.m, p.n, 64); !e.empty()) return e;
  } else {
    std::memset(&mc, 0, sizeof mc);  // unused by the other epilogues
  }
  if (cudaError_t e = ConfigureSmemOnce<Sm90WgmmaKernel<Cfg>>(SmemBytes(Cfg::kEpilogue));
      e != cudaSuccess) {
    return LaunchError("cudaFuncSetAttribute(MaxDynamicSharedMemorySize)", e);
  }
  auto stream = static_cast<cudaStream_t>(args.stream);
  const int units = int((p.m / (kBlockM * Cfg::kClusterM)) * (p.n / (kBlockN * Cfg::kClusterN)));
  int ctas = units * Cfg::kCtas;
  if constexpr (Cfg::kPersistent) {
    if (std::string e = PersistentCtas<Cfg>(units, stream, &ctas); !e.empty()) return e;
    if (kMaxCtas > 0) ctas = std::min(ctas, kMaxCtas);
  }
  StreamKArgs sk;
  if constexpr (Cfg::kStreamK) {
    StreamKPlan(units, int(p.k / kBlockK), ctas / Cfg::kCtas, &sk, Cfg::kSkMaxFullQuarters);
    if (sk.sk_clusters > 0) {  // else every unit goes whole: no partials, no flags
      // Partials (and 4 flags) per CTA of each unit of the shared round.
      const int64_t sk_ctas = int64_t(units - sk.dp_units) * Cfg::kCtas;
      void* partials = nullptr;
      if (std::string e = StreamKWorkspace(sk_ctas * kPartialBytesPerCta, sk_ctas * 4, &partials,
                                           &sk.flags, &sk.epoch);
          !e.empty()) {
        return e;
      }
      sk.partials = static_cast<float*>(partials);
    }
  }
  cudaLaunchAttribute attr{};
  const cudaLaunchConfig_t cfg = LaunchConfig<Cfg>(ctas, stream, &attr);
  auto* c = static_cast<__nv_bfloat16*>(args.c);
  if (cudaError_t e = cudaLaunchKernelEx(&cfg, Sm90WgmmaKernel<Cfg>, ma, mb, mc, c, int(p.m),
                                         int(p.n), int(p.k), sk);
      e != cudaSuccess) {
    return LaunchError("sm90 launch", e);
  }
  if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) return LaunchError("sm90 launch", e);
  return "";
}

}  // namespace ablation::kernels::sm90
