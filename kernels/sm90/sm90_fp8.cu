// F1..F8: the fp8 rungs (sm_90a build), the wgmma kernel with e4m3 operands (Knobs::fp8). A unit
// of their own, so that they compile beside the bf16 rungs and leave those units' code as it was.
#include <utility>

#include "kernels/sm90/sm90_guarded.h"
#include "kernels/sm90/sm90_launchers.h"
#include "kernels/sm90/sm90_wgmma_launch.cuh"

namespace ablation::kernels::sm90 {

void BindSm90Fp8(Registry& registry) {
  [&]<size_t... kIndex>(std::index_sequence<kIndex...>) {
    (BindRung(registry, kFp8Rungs[kIndex].name,
              &LaunchRung<WgmmaBuild, kFp8Rungs[kIndex].knobs, true>,
              reinterpret_cast<const void*>(kWgmmaKernel<kFp8Rungs[kIndex].knobs>), DType::kFP8),
     ...);
  }
  (std::make_index_sequence<kFp8Rungs.size()>{});
  [&]<size_t... kIndex>(std::index_sequence<kIndex...>) {
    (BindKernelAt<kFp8Rungs[kIndex].knobs>(registry, kFp8Rungs[kIndex].name, &Sm90Fp8GuardedKernel,
                                           kIndex),
     ...);
  }
  (std::make_index_sequence<kFp8Rungs.size()>{});
}

}  // namespace ablation::kernels::sm90
