// H2..H12: the wgmma rungs (sm_90a build).
#include <utility>

#include "kernels/sm90/sm90_guarded.h"
#include "kernels/sm90/sm90_launchers.h"
#include "kernels/sm90/sm90_wgmma_launch.cuh"

namespace ablation::kernels::sm90 {

void BindSm90Wgmma(Registry& registry) {
  [&]<int... kIndex>(std::integer_sequence<int, kIndex...>) {
    (BindRung(registry, kRungs[kIndex].name, &LaunchRung<WgmmaBuild, kRungs[kIndex].knobs, true>,
              reinterpret_cast<const void*>(kWgmmaKernel<kRungs[kIndex].knobs>)),
     ...);
  }
  (std::integer_sequence<int, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12>{});
  [&]<int... kIndex>(std::integer_sequence<int, kIndex...>) {
    (BindKernelAt<kRungs[kIndex].knobs>(registry, kRungs[kIndex].name, &Sm90GuardedKernel, kIndex),
     ...);
  }
  (std::integer_sequence<int, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12>{});
}

Residency Sm90DeviceResidency() {
  Residency r;
  if (!Sm90DeviceError().empty()) return r;
  // Any kernel of the family with clusters of two: one CTA fills an SM, so the count is the
  // device's pairs of free SMs within a GPC, whatever the rung.
  if (!DeviceResidency<rung_knobs::kH12>(nullptr, &r).empty()) return Residency{};
  return r;
}

}  // namespace ablation::kernels::sm90
