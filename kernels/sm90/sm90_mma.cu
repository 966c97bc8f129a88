// M1 and H1: the mma.sync rungs (sm_90a build).
#include "kernels/sm90/sm90_launch.cuh"
#include "kernels/sm90/sm90_launchers.h"
#include "kernels/sm90/sm90_mma.cuh"

namespace ablation::kernels::sm90 {
namespace {

template <class Cfg>
std::string LaunchMma(const GemmArgs& args) {
  if (std::string e = CheckLaunch(args, 1); !e.empty()) return e;
  const Problem& p = args.problem;
  CUtensorMap ma, mb;
  if constexpr (Cfg::kTma) {
    if (std::string e = EncodeMaps(args, kBlockN, &ma, &mb); !e.empty()) return e;
  } else {
    std::memset(&ma, 0, sizeof ma);  // unused by the cp.async rung
    std::memset(&mb, 0, sizeof mb);
  }
  if (cudaError_t e = ConfigureSmemOnce(Sm90MmaKernel<Cfg>); e != cudaSuccess) {
    return LaunchError("cudaFuncSetAttribute(MaxDynamicSharedMemorySize)", e);
  }
  const dim3 grid(unsigned((p.m / kBlockM) * (p.n / kBlockN)));
  Sm90MmaKernel<Cfg><<<grid, Cfg::kThreads, SmemBytes(), static_cast<cudaStream_t>(args.stream)>>>(
      ma, mb, static_cast<const __nv_bfloat16*>(args.a), static_cast<const __nv_bfloat16*>(args.b),
      static_cast<__nv_bfloat16*>(args.c), int(p.m), int(p.n), int(p.k));
  if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) return LaunchError("sm90 launch", e);
  return "";
}

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
