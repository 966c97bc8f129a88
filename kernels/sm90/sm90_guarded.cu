// The guarded builds of every rung (sm90_guarded.h says why they are a unit of their own).
#include "kernels/sm90/sm90_guarded.h"

#include <utility>

#include "kernels/sm90/sm90_launchers.h"

namespace ablation::kernels::sm90 {

ABLATION_SM90_GUARDED_BUILDS()

const void* Sm90GuardedKernel(size_t rung) {
  const void* out = nullptr;
  [&]<size_t... kIndex>(std::index_sequence<kIndex...>) {
    auto pick = [&]<size_t kI>(std::integral_constant<size_t, kI>) {
      constexpr Knobs kG = Guarded(kRungs[kI].knobs);
      if (rung != kI) return;
      if constexpr (kG.mainloop == Mainloop::kWgmma) {
        out = reinterpret_cast<const void*>(&Sm90WgmmaKernel<kG>);
      } else {
        out = reinterpret_cast<const void*>(&Sm90MmaKernel<kG>);
      }
    };
    (pick(std::integral_constant<size_t, kIndex>{}), ...);
  }
  (std::make_index_sequence<kRungs.size()>{});
  return out;
}

}  // namespace ablation::kernels::sm90
