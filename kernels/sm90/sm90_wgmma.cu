// H2..H10: the wgmma rungs (sm_90a build).
#include "kernels/sm90/sm90_launchers.h"
#include "kernels/sm90/sm90_wgmma_launch.cuh"

namespace ablation::kernels::sm90 {
namespace {

template <Knobs K>
const void* WgmmaKernel(DType d) {
  return d == DType::kBF16 ? reinterpret_cast<const void*>(&Sm90WgmmaKernel<K>) : nullptr;
}

template <int kIndex>
void Bind(Registry& registry) {
  constexpr Rung R = kRungs[kIndex];
  if (Variant* v = registry.FindMutable(R.name)) {
    v->launch = &LaunchWgmma<R.knobs>;
    v->kernel = &WgmmaKernel<R.knobs>;
  }
}

}  // namespace

void BindSm90Wgmma(Registry& registry) {
  Bind<2>(registry);
  Bind<3>(registry);
  Bind<4>(registry);
  Bind<5>(registry);
  Bind<6>(registry);
  Bind<7>(registry);
  Bind<8>(registry);
  Bind<9>(registry);
  Bind<10>(registry);
}

}  // namespace ablation::kernels::sm90
