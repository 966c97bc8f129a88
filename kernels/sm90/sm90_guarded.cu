// The guarded builds of every rung (sm90_guarded.h says why they are a unit of their own).
#include "kernels/sm90/sm90_guarded.h"

#include <utility>

#include "kernels/sm90/sm90_launchers.h"

namespace ablation::kernels::sm90 {

ABLATION_SM90_GUARDED_BUILDS()

const void* Sm90GuardedKernel(size_t rung, bool unclustered) {
  return GuardedKernelOf<kRungs>(rung, unclustered);
}

}  // namespace ablation::kernels::sm90
