// H2..H10: the wgmma rungs (sm_90a build).
#include "kernels/sm90/sm90_launchers.h"
#include "kernels/sm90/sm90_wgmma_launch.cuh"

namespace ablation::kernels::sm90 {
namespace {

template <class Cfg>
const void* WgmmaKernel(DType d) {
  return d == DType::kBF16 ? reinterpret_cast<const void*>(&Sm90WgmmaKernel<Cfg>) : nullptr;
}

template <int kIndex>
void Bind(Registry& registry) {
  constexpr Rung R = kRungs[kIndex];
  using Cfg =
      WgmmaConfig<R.warp_specialized, R.persistent, R.cluster_m, R.grouped_order, R.pending,
                  R.epilogue, R.stream_k, R.cluster_n, kStreamKMaxFullQuarters, R.overlap_epilogue>;
  if (Variant* v = registry.FindMutable(R.name)) {
    v->launch = &LaunchWgmma<Cfg>;
    v->kernel = &WgmmaKernel<Cfg>;
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
