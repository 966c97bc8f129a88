// M1 and H1: the mma.sync rungs (sm_90a build).
#include "kernels/sm90/sm90_launchers.h"
#include "kernels/sm90/sm90_mma_launch.cuh"

namespace ablation::kernels::sm90 {
namespace {

template <Knobs K>
const void* MmaKernel(DType d) {
  return d == DType::kBF16 ? reinterpret_cast<const void*>(&Sm90MmaKernel<K>) : nullptr;
}

// The ladder's mma.sync rungs: the knobs' defaults, 2x4 warps of 64x64, fragments loaded across
// stages (measured against the plain order and other warp layouts in notes/gpu-runs.md).
template <int kIndex>
void Bind(Registry& registry) {
  constexpr Rung R = kRungs[kIndex];
  if (Variant* v = registry.FindMutable(R.name)) {
    v->launch = &LaunchMma<R.knobs>;
    v->kernel = &MmaKernel<R.knobs>;
  }
}

}  // namespace

void BindSm90Mma(Registry& registry) {
  Bind<0>(registry);
  Bind<1>(registry);
}

}  // namespace ablation::kernels::sm90
