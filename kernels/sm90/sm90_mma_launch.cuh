// The launcher of the mma.sync rungs, a template over their configuration (sm90_mma.cu binds the
// ladder's; the tuning tool tools/sm90_tune.cu times others).
#pragma once

#include "kernels/sm90/sm90_launch.cuh"
#include "kernels/sm90/sm90_mma.cuh"

namespace ablation::kernels::sm90 {

/// Launches the build K on `args` (on its tile, or K.guarded), B with `b_rows` rows.
template <Knobs K>
struct MmaBuild {
  static std::string Launch(const GemmArgs& args, int64_t b_rows);
};

// Defined outside the class so that it is not inline: sm90_guarded.h's explicit instantiation
// declarations then keep a unit from instantiating the guarded builds.
template <Knobs K>
std::string MmaBuild<K>::Launch(const GemmArgs& args, int64_t b_rows) {
  using Cfg = MmaTraits<K>;
  const Problem& p = args.problem;
  CUtensorMap ma, mb;
  if constexpr (Cfg::kTma) {
    if (std::string e = EncodeMaps(args, b_rows, Cfg::kBN, &ma, &mb); !e.empty()) return e;
  } else {
    std::memset(&ma, 0, sizeof ma);  // unused by the cp.async rung
    std::memset(&mb, 0, sizeof mb);
  }
  if (cudaError_t e = ConfigureSmemOnce<Sm90MmaKernel<K>>(Cfg::kSmemBytes); e != cudaSuccess) {
    return LaunchError("cudaFuncSetAttribute(MaxDynamicSharedMemorySize)", e);
  }
  const dim3 grid(unsigned(((p.m + kBlockM - 1) / kBlockM) * ((p.n + Cfg::kBN - 1) / Cfg::kBN)));
  Sm90MmaKernel<K>
      <<<grid, Cfg::kThreads, Cfg::kSmemBytes, static_cast<cudaStream_t>(args.stream)>>>(
          ma, mb, static_cast<const __nv_bfloat16*>(args.a),
          static_cast<const __nv_bfloat16*>(args.b), static_cast<__nv_bfloat16*>(args.c), int(p.m),
          int(p.n), int(p.k));
  if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) return LaunchError("sm90 launch", e);
  return "";
}

}  // namespace ablation::kernels::sm90
