// Launchers of the pipe_ instances. Included by pipe_f16.cu, pipe_i8.cu and pipe_f32.cu, each of
// which instantiates the three pipelines of its type's tiles (one translation unit per type, so a
// small build machine compiles them in parallel and ccache keeps unchanged types).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <iterator>
#include <string>
#include <utility>

#include "kernels/pipe/pipe_config.h"
#include "kernels/pipe/pipe_gemm.cuh"
#include "kernels/registry.h"

namespace ablation::kernels::pipe {

/// Opts the instance in to more than 48 KiB of dynamic shared memory, once per process.
template <class Cfg>
cudaError_t ConfigureOnce() {
  static const cudaError_t status = [] {
    if (Cfg::kSmemBytes <= 48 * 1024) return cudaSuccess;
    return cudaFuncSetAttribute(PipeGemmKernel<Cfg>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                Cfg::kSmemBytes);
  }();
  return status;
}

/// Blocks of the 1-D grid for a problem (0 if it does not fit in a grid dimension).
template <class Cfg>
int64_t GridBlocks(const Problem& p) {
  const int64_t blocks = ((p.m + Cfg::kBM - 1) / Cfg::kBM) * ((p.n + Cfg::kBN - 1) / Cfg::kBN);
  return blocks <= int64_t(INT32_MAX) ? blocks : 0;
}

template <class Cfg>
std::string Launch(const GemmArgs& args) {
  const Problem& p = args.problem;
  // can_implement has been asked by the caller; a violated precondition would still index out of
  // bounds, so the launcher refuses it too.
  if (p.dtype != Cfg::kDType) {
    return "pipe kernel: dtype " + std::string(ToString(p.dtype)) + " is not this instance's " +
           std::string(ToString(Cfg::kDType));
  }
  if (p.m <= 0 || p.n <= 0 || p.k <= 0 || p.m > INT32_MAX || p.n > INT32_MAX || p.k > INT32_MAX ||
      GridBlocks<Cfg>(p) == 0) {
    return "pipe kernel: m, n, k must be in 1..2^31-1 (and the tiles fit in a 1-D grid)";
  }
  if (cudaError_t e = ConfigureOnce<Cfg>(); e != cudaSuccess) {
    return std::string("cudaFuncSetAttribute(MaxDynamicSharedMemorySize): ") +
           cudaGetErrorString(e);
  }
  PipeGemmKernel<Cfg><<<unsigned(GridBlocks<Cfg>(p)), Cfg::kThreads, Cfg::kSmemBytes,
                        static_cast<cudaStream_t>(args.stream)>>>(
      static_cast<const typename Cfg::In*>(args.a), static_cast<const typename Cfg::In*>(args.b),
      static_cast<typename Cfg::Out*>(args.c), int(p.m), int(p.n), int(p.k));
  if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) {
    return std::string("pipe kernel launch: ") + cudaGetErrorString(e);
  }
  return "";
}

template <class Cfg>
const void* Kernel(DType d) {
  return d == Cfg::kDType ? reinterpret_cast<const void*>(&PipeGemmKernel<Cfg>) : nullptr;
}

/// Binds the three pipelines of tile number `T` of kPipeTiles (entries missing from the registry
/// are skipped: the catalog decides what exists).
template <int T>
void BindTile(Registry& registry) {
  constexpr PipeTile t = kPipeTiles[T];
  auto bind = [&]<Pipeline P>() {
    using Cfg = Config<P, t.dtype, t.bm, t.bn, t.bk, t.threads>;
    if (Variant* v = registry.FindMutable(PipeVariantName(P, t))) {
      v->launch = &Launch<Cfg>;
      v->kernel = &Kernel<Cfg>;
    }
  };
  bind.template operator()<Pipeline::kBaseline>();
  bind.template operator()<Pipeline::kLdg>();
  bind.template operator()<Pipeline::kCpAsync>();
}

/// Binds every tile of kPipeTiles whose type is D.
template <DType D>
void BindType(Registry& registry) {
  [&]<int... I>(std::integer_sequence<int, I...>) {
    // if constexpr: only this type's tiles are instantiated in the including translation unit.
    (
        [&] {
          if constexpr (kPipeTiles[I].dtype == D) BindTile<I>(registry);
        }(),
        ...);
  }
  (std::make_integer_sequence<int, int(std::size(kPipeTiles))>{});
}

}  // namespace ablation::kernels::pipe
