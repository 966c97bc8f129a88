// Launchers of the ablation kernel instances. Included by the ablation_l{L}_s{S}.cu files, each of
// which instantiates one (LOAD_MODE, STAGES) slice: 16 configurations x 2 dtypes. Splitting the
// 256 instances this way lets a small build machine compile them in parallel and ccache reuse
// unchanged slices.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <utility>

#include "kernels/ablation/ablation_gemm.cuh"
#include "kernels/names.h"
#include "kernels/registry.h"

namespace ablation::kernels::ablation_gemm {

template <typename T, class Cfg>
const void* KernelOf() {
  return reinterpret_cast<const void*>(&AblationGemmKernel<T, Cfg>);
}

/// Opts the instance in to more than 48 KiB of dynamic shared memory. Done once per instance and
/// process (function-local static: thread-safe); the worker process owns one device.
template <typename T, class Cfg>
cudaError_t ConfigureOnce() {
  static const cudaError_t status = [] {
    if (Cfg::kSmemBytes <= 48 * 1024) return cudaSuccess;
    return cudaFuncSetAttribute(AblationGemmKernel<T, Cfg>,
                                cudaFuncAttributeMaxDynamicSharedMemorySize, Cfg::kSmemBytes);
  }();
  return status;
}

template <typename T, class Cfg>
std::string LaunchTyped(const GemmArgs& args) {
  const Problem& p = args.problem;
  // can_implement has been asked by the caller; these guard against misuse all the same, since a
  // violated precondition would read or write out of bounds.
  if (p.m <= 0 || p.n <= 0 || p.k <= 0 || p.m % kBlockM != 0 || p.n % kBlockN != 0 ||
      p.k % kBlockK != 0) {
    return "ablation kernel: problem shape not supported (M, N multiples of 128, K of 32)";
  }
  const auto misaligned = [](const void* ptr) {
    return (reinterpret_cast<uintptr_t>(ptr) & 15) != 0;
  };
  if (misaligned(args.a) || misaligned(args.b) || misaligned(args.c)) {
    return "ablation kernel: A, B and C must be 16-byte aligned";
  }
  if (cudaError_t e = ConfigureOnce<T, Cfg>(); e != cudaSuccess) {
    return std::string("cudaFuncSetAttribute(MaxDynamicSharedMemorySize): ") +
           cudaGetErrorString(e);
  }
  const dim3 grid(unsigned((p.m / kBlockM) * (p.n / kBlockN)));
  AblationGemmKernel<T, Cfg>
      <<<grid, kThreads, Cfg::kSmemBytes, static_cast<cudaStream_t>(args.stream)>>>(
          static_cast<const T*>(args.a), static_cast<const T*>(args.b), static_cast<T*>(args.c),
          int(p.m), int(p.n), int(p.k));
  if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) {
    return std::string("ablation kernel launch: ") + cudaGetErrorString(e);
  }
  return "";
}

template <class Cfg>
std::string Launch(const GemmArgs& args) {
  switch (args.problem.dtype) {
    case DType::kBF16:
      return LaunchTyped<__nv_bfloat16, Cfg>(args);
    case DType::kFP16:
      return LaunchTyped<__half, Cfg>(args);
    default:
      return "ablation kernel: dtype " + std::string(ToString(args.problem.dtype)) +
             " not supported (bf16, fp16)";
  }
}

template <class Cfg>
const void* Kernel(DType d) {
  switch (d) {
    case DType::kBF16:
      return KernelOf<__nv_bfloat16, Cfg>();
    case DType::kFP16:
      return KernelOf<__half, Cfg>();
    default:
      return nullptr;
  }
}

/// Binds the 16 configurations (read_mode, b_layout, swizzle, rb) of one (LOAD_MODE, STAGES)
/// slice. Entries missing from the registry are skipped (the catalog decides what exists).
template <int L, int S, int... I>
void BindSlice(Registry& registry, std::integer_sequence<int, I...>) {
  (
      [&] {
        constexpr int r = (I >> 3) & 1, b = (I >> 2) & 1, w = (I >> 1) & 1, rb = I & 1;
        using Cfg = Config<L, r, b, S, w, rb>;
        const std::string name = AblationVariantName({L, r, b, S, w, rb});
        if (Variant* v = registry.FindMutable(name)) {
          v->launch = &Launch<Cfg>;
          v->kernel = &Kernel<Cfg>;
        }
      }(),
      ...);
}

template <int L, int S>
void BindSlice(Registry& registry) {
  BindSlice<L, S>(registry, std::make_integer_sequence<int, 16>{});
}

}  // namespace ablation::kernels::ablation_gemm
