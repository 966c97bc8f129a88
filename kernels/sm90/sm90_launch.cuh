// Launchers of the sm90 rungs. Included by sm90_mma.cu (M1, H1) and sm90_wgmma.cu (H2..H10).
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>

#include "kernels/registry.h"
#include "kernels/sm90/sm90_config.h"
#include "kernels/sm90/sm90_tma.h"

namespace ablation::kernels::sm90 {

/// Points the variant `name`, when the registry holds it, at `launch` and at `kernel`, the
/// address of its bf16 kernel (none for another dtype). sm90_mma.cu and sm90_wgmma.cu bind their
/// rungs with it.
inline void BindRung(Registry& registry, std::string_view name, LaunchFn launch,
                     const void* kernel) {
  if (Variant* v = registry.FindMutable(name)) {
    v->launch = std::move(launch);
    v->kernel = [kernel](DType d) { return d == DType::kBF16 ? kernel : nullptr; };
  }
}

/// What every rung refuses before launching: another device, another dtype, a shape off the
/// tile, a misaligned pointer. can_implement has been asked by the caller; these guard against
/// misuse all the same, since a violated precondition would read or write out of bounds.
inline std::string CheckLaunch(const GemmArgs& args, int cluster_m, int cluster_n = 1) {
  if (const std::string& e = Sm90DeviceError(); !e.empty()) return e;
  const Problem& p = args.problem;
  if (p.dtype != DType::kBF16) return "sm90 family: bf16 only";
  if (p.m <= 0 || p.n <= 0 || p.k <= 0 || p.m % (kBlockM * cluster_m) != 0 ||
      p.n % (kBlockN * cluster_n) != 0 || p.k % kBlockK != 0) {
    return "sm90 kernel: problem shape not supported (M a multiple of " +
           std::to_string(kBlockM * cluster_m) + ", N of " + std::to_string(kBlockN * cluster_n) +
           ", K of 64)";
  }
  for (const void* ptr : {args.a, args.b, static_cast<const void*>(args.c)}) {
    if ((reinterpret_cast<uintptr_t>(ptr) & 15) != 0) {
      return "sm90 kernel: A, B and C must be 16-byte aligned";
    }
  }
  return "";
}

/// Opts `Kernel` in to its dynamic shared memory, once per kernel and process (a function-local
/// static per template instance, so each kernel gets its own).
template <auto Kernel>
cudaError_t ConfigureSmemOnce(int64_t bytes) {
  static const cudaError_t status =
      cudaFuncSetAttribute(Kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes));
  return status;
}

inline std::string LaunchError(const char* what, cudaError_t e) {
  return std::string(what) + ": " + cudaGetErrorString(e);
}

/// The maps of A (box `a_rows` rows) and B (box `b_rows`), or what failed.
inline std::string EncodeMaps(const GemmArgs& args, int b_rows, CUtensorMap* ma, CUtensorMap* mb,
                              int a_rows = kBlockM) {
  const Problem& p = args.problem;
  if (std::string e = EncodeKMajorBf16(ma, args.a, p.m, p.k, a_rows); !e.empty()) return e;
  return EncodeKMajorBf16(mb, args.b, p.n, p.k, b_rows);
}

}  // namespace ablation::kernels::sm90
