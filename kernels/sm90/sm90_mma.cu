// M1 and H1: the mma.sync rungs (sm_90a build). Their knobs are the defaults: 2x4 warps of 64x64,
// fragments loaded across stages (measured against the plain order and other warp layouts in
// notes/gpu-runs.md).
#include <utility>

#include "kernels/sm90/sm90_guarded.h"
#include "kernels/sm90/sm90_launchers.h"
#include "kernels/sm90/sm90_mma_launch.cuh"

namespace ablation::kernels::sm90 {

void BindSm90Mma(Registry& registry) {
  [&]<int... kIndex>(std::integer_sequence<int, kIndex...>) {
    (BindRung(registry, kRungs[kIndex].name, &LaunchRung<MmaBuild, kRungs[kIndex].knobs, true>,
              reinterpret_cast<const void*>(&Sm90MmaKernel<kRungs[kIndex].knobs>)),
     ...);
  }
  (std::integer_sequence<int, 0, 1>{});
  // The kernel a problem runs: the rung's own on the tile, its guarded build off it (no grid of
  // the mma.sync rungs changes the kernel).
  [&]<int... kIndex>(std::integer_sequence<int, kIndex...>) {
    (..., [&] {
      if (Variant* v = registry.FindMutable(kRungs[kIndex].name)) {
        v->kernel_at = [](const Problem& p) -> const void* {
          constexpr Knobs kK = kRungs[kIndex].knobs;
          if (p.dtype != RungDType(kK)) return nullptr;
          if (PlanLaunch(kK, p, Residency{}).guarded) return Sm90GuardedKernel(kIndex, false);
          return reinterpret_cast<const void*>(&Sm90MmaKernel<kK>);
        };
      }
    }());
  }
  (std::integer_sequence<int, 0, 1>{});
}

}  // namespace ablation::kernels::sm90
