// The five instances of the SIMT ladder (x sm_80, sm_90) and their launchers.
#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <utility>

#include "kernels/common/launch_checks.cuh"
#include "kernels/simt/simt_catalog.h"
#include "kernels/simt/simt_gemm.cuh"
#include "kernels/simt/simt_launchers.h"

namespace ablation::kernels {
namespace {

using namespace simt_gemm;

template <int I>
using RungConfig = Config<kSimtRungs[I].a_transposed, kSimtRungs[I].swizzle,
                          kSimtRungs[I].coalesced_c, kSimtRungs[I].double_buffer>;

template <class Cfg>
std::string Launch(const GemmArgs& args) {
  const Problem& p = args.problem;
  // can_implement has been asked by the caller; a violated precondition would read or write out
  // of bounds, so the launcher asks again (dtype and shape).
  if (std::string why = SimtCanImplement(p); !why.empty()) return "simt kernel: " + why;
  if (std::string why = CheckAligned16(args, "simt"); !why.empty()) return why;
  const dim3 grid(unsigned((p.m / kBlockM) * (p.n / kBlockN)));
  SimtGemmKernel<Cfg><<<grid, kThreads, Cfg::kSmemBytes, static_cast<cudaStream_t>(args.stream)>>>(
      static_cast<const float*>(args.a), static_cast<const float*>(args.b),
      static_cast<float*>(args.c), int(p.m), int(p.n), int(p.k));
  return LaunchError("simt");
}

}  // namespace

void BindSimtLaunchers(Registry& registry) {
  BindEach<kSimtRungCount>(
      registry, kSimtRungs,
      [&]<int I>(Variant& v) {  // [&]: no conversion to a function pointer to warn of
        v.launch = &Launch<RungConfig<I>>;
        v.kernel = &OwnKernel<DType::kFP32, &SimtGemmKernel<RungConfig<I>>>;
      });
}

}  // namespace ablation::kernels
