// M1 and H1: the mma.sync rungs (sm_90a build).
#include "kernels/sm90/sm90_launchers.h"
#include "kernels/sm90/sm90_mma_launch.cuh"

namespace ablation::kernels::sm90 {
namespace {

template <class Cfg>
const void* MmaKernel(DType d) {
  return d == DType::kBF16 ? reinterpret_cast<const void*>(&Sm90MmaKernel<Cfg>) : nullptr;
}

template <class Cfg>
void Bind(Registry& registry, std::string_view name) {
  if (Variant* v = registry.FindMutable(name)) {
    v->launch = &LaunchMma<Cfg>;
    v->kernel = &MmaKernel<Cfg>;
  }
}

}  // namespace

void BindSm90Mma(Registry& registry) {
  Bind<MmaConfig<false>>(registry, kRungs[0].name);
  Bind<MmaConfig<true>>(registry, kRungs[1].name);
}

}  // namespace ablation::kernels::sm90
