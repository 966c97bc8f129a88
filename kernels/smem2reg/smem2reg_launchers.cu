// Instances and launchers of the smem2reg micro-benchmarks: 8 configurations, one instance each
// (bf16 and fp16 share it: the kernel moves 16-bit elements as bits).
#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <utility>

#include "kernels/common/launch_checks.cuh"
#include "kernels/registry.h"
#include "kernels/smem2reg/smem2reg_catalog.h"
#include "kernels/smem2reg/smem2reg_kernel.cuh"
#include "kernels/smem2reg/smem2reg_launchers.h"

namespace ablation::kernels {
namespace {

namespace ag = ablation_gemm;
using Element = uint16_t;

template <class Cfg>
std::string Launch(const GemmArgs& args) {
  const Problem& p = args.problem;
  if (p.dtype != DType::kBF16 && p.dtype != DType::kFP16) {
    return "smem2reg kernel: dtype " + std::string(ToString(p.dtype)) +
           " not supported (bf16, fp16)";
  }
  // can_implement has been asked by the caller; these guard against misuse all the same.
  if (p.m <= 0 || p.n <= 0 || p.k <= 0 || p.m % ag::kBlockM != 0 || p.n % ag::kBlockN != 0 ||
      p.k % ag::kBlockK != 0) {
    return "smem2reg kernel: problem shape not supported (M, N multiples of 128, K of 32)";
  }
  if (std::string why = CheckAligned16(args, "smem2reg"); !why.empty()) return why;
  static_assert(Cfg::kSmemBytes <= 48 * 1024, "no opt-in to more shared memory is done here");
  const unsigned blocks = unsigned((p.m / ag::kBlockM) * (p.n / ag::kBlockN));
  smem2reg::Smem2RegKernel<Element, Cfg>
      <<<blocks, ag::kThreads, Cfg::kSmemBytes, static_cast<cudaStream_t>(args.stream)>>>(
          static_cast<const Element*>(args.a), static_cast<const Element*>(args.b),
          static_cast<uint32_t*>(args.c), int(p.m), int(p.n), int(p.k));
  return LaunchError("smem2reg");
}

template <class Cfg>
const void* Kernel(DType d) {
  if (d != DType::kBF16 && d != DType::kFP16) return nullptr;
  return reinterpret_cast<const void*>(&smem2reg::Smem2RegKernel<Element, Cfg>);
}

template <int... I>
void BindAll(Registry& registry, std::integer_sequence<int, I...>) {
  (
      [&] {
        constexpr int r = (I >> 2) & 1, b = (I >> 1) & 1, w = I & 1;
        using Cfg = smem2reg::Config<r, b, w>;
        if (Variant* v = registry.FindMutable(Smem2RegVariantName({r, b, w}))) {
          v->launch = &Launch<Cfg>;
          v->kernel = &Kernel<Cfg>;
        }
      }(),
      ...);
}

}  // namespace

void BindSmem2RegLaunchers(Registry& registry) {
  BindAll(registry, std::make_integer_sequence<int, 8>{});
}

}  // namespace ablation::kernels
