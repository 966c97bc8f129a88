// The guarded builds of the fp8 rungs (sm90_guarded.h says why guarded builds are units of their
// own).
#include <utility>

#include "kernels/sm90/sm90_guarded.h"
#include "kernels/sm90/sm90_launchers.h"

namespace ablation::kernels::sm90 {

ABLATION_SM90_GUARDED_FP8_BUILDS()

const void* Sm90Fp8GuardedKernel(size_t rung, bool unclustered) {
  return GuardedKernelOf<kFp8Rungs>(rung, unclustered);
}

}  // namespace ablation::kernels::sm90
