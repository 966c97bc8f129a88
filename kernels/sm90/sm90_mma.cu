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
}

}  // namespace ablation::kernels::sm90
