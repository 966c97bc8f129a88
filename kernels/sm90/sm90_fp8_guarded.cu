// The guarded builds of the fp8 rungs (sm90_guarded.h says why guarded builds are units of their
// own).
#include <utility>

#include "kernels/sm90/sm90_guarded.h"
#include "kernels/sm90/sm90_launchers.h"

namespace ablation::kernels::sm90 {

ABLATION_SM90_GUARDED_FP8_BUILDS()

const void* Sm90Fp8GuardedKernel(size_t rung) {
  const void* out = nullptr;
  [&]<size_t... kIndex>(std::index_sequence<kIndex...>) {
    auto pick = [&]<size_t kI>(std::integral_constant<size_t, kI>) {
      if (rung == kI) {
        out = reinterpret_cast<const void*>(&Sm90WgmmaKernel<Guarded(kFp8Rungs[kI].knobs)>);
      }
    };
    (pick(std::integral_constant<size_t, kIndex>{}), ...);
  }
  (std::make_index_sequence<kFp8Rungs.size()>{});
  return out;
}

}  // namespace ablation::kernels::sm90
