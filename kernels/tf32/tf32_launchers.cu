// The two instances of the TF32 pair (x sm_80, sm_90) and their launchers.
// Its shape is the SIMT launcher's (precondition and alignment checks, one launch, entries bound
// by index); what they share to the letter is in kernels/common/launch_checks.cuh, the rest is
// each family's own kernel, dtype and preconditions.
#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <utility>

#include "kernels/common/launch_checks.cuh"
#include "kernels/tf32/tf32_catalog.h"
#include "kernels/tf32/tf32_gemm.cuh"
#include "kernels/tf32/tf32_launchers.h"

namespace ablation::kernels {
namespace {

using namespace tf32_gemm;

template <int I>
using VariantConfig = Config<kTf32Variants[I].load_mode>;

template <class Cfg>
std::string Launch(const GemmArgs& args) {
  const Problem& p = args.problem;
  // can_implement has been asked by the caller; a violated precondition would read or write out
  // of bounds, so the launcher asks again (dtype and shape).
  if (std::string why = Tf32CanImplement(p); !why.empty()) return "tf32 kernel: " + why;
  if (std::string why = CheckAligned16(args, "tf32"); !why.empty()) return why;
  static_assert(kSmemBytes <= 48 * 1024, "no opt-in to more dynamic shared memory needed");
  const dim3 grid(unsigned((p.m / kBlockM) * (p.n / kBlockN)));
  Tf32GemmKernel<Cfg><<<grid, kThreads, kSmemBytes, static_cast<cudaStream_t>(args.stream)>>>(
      static_cast<const float*>(args.a), static_cast<const float*>(args.b),
      static_cast<float*>(args.c), int(p.m), int(p.n), int(p.k));
  return LaunchError("tf32");
}

}  // namespace

void BindTf32Launchers(Registry& registry) {
  BindEach<kTf32VariantCount>(
      registry, kTf32Variants,
      [&]<int I>(Variant& v) {  // [&]: no conversion to a function pointer to warn of
        v.launch = &Launch<VariantConfig<I>>;
        v.kernel = &OwnKernel<DType::kTF32, &Tf32GemmKernel<VariantConfig<I>>>;
      });
}

}  // namespace ablation::kernels
