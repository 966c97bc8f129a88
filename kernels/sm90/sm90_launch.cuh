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
#include "kernels/sm90/sm90_shapes.h"
#include "kernels/sm90/sm90_tma.h"

namespace ablation::kernels::sm90 {

/// Points the variant `name`, when the registry holds it, at `launch` and at `kernel`, the
/// address of its kernel for `dtype` (none for another dtype). sm90_mma.cu and sm90_wgmma.cu bind
/// their rungs with it.
inline void BindRung(Registry& registry, std::string_view name, LaunchFn launch, const void* kernel,
                     DType dtype = DType::kBF16) {
  if (Variant* v = registry.FindMutable(name)) {
    v->launch = std::move(launch);
    v->kernel = [kernel, dtype](DType d) { return d == dtype ? kernel : nullptr; };
  }
}

/// What every rung refuses before launching: another device, another dtype, a shape outside the
/// kernels' 32-bit coordinates. can_implement has been asked by the caller; these guard against
/// misuse all the same.
inline std::string CheckLaunch(const GemmArgs& args, const Knobs& knobs) {
  if (const std::string& e = Sm90DeviceError(); !e.empty()) return e;
  if (args.problem.dtype != RungDType(knobs)) {
    return std::string("sm90 family: this rung runs ") + std::string(ToString(RungDType(knobs))) +
           " only";
  }
  if (knobs.fp8 && (args.scale_a == nullptr || args.scale_b == nullptr)) {
    return "sm90 fp8 rung: the scales of A and B are missing (GemmArgs::scale_a, scale_b)";
  }
  if (std::string e = ShapeError(args.problem, RungDType(knobs)); !e.empty()) {
    return "sm90 kernel: " + e;
  }
  return "";
}

/// What a build for shapes on the tile only says of one off it.
inline std::string OffTileRefusal() {
  return "sm90 kernel: this build runs shapes on its tile only (M a multiple of 128 x cluster_m, "
         "N of 256 x cluster_n, K of 64, 16-byte aligned operands)";
}

/// Runs a rung at any shape (sm90_shapes.h): `launch(args, guarded, b_rows)` launches the rung's
/// own build (guarded false) or Guarded(rung) on `args`, whose B has `b_rows` rows (fewer than
/// args.problem.n when only C is padded: TMA reads zeros past them).
template <class Launch>
std::string LaunchAnyShape(const GemmArgs& args, const Knobs& knobs, Launch&& launch) {
  if (std::string e = CheckLaunch(args, knobs); !e.empty()) return e;
  const ShapePlan plan =
      PlanShape(args.problem, knobs, reinterpret_cast<uintptr_t>(args.a),
                reinterpret_cast<uintptr_t>(args.b), reinterpret_cast<uintptr_t>(args.c));
  if (!plan.Pads()) return launch(args, !plan.on_tile, args.problem.n);
  GemmArgs padded;
  if (std::string e = PadOperands(args, plan, &padded); !e.empty()) return e;
  if (std::string e = launch(padded, true, plan.pad_b ? plan.n : args.problem.n); !e.empty()) {
    return e;
  }
  return UnpadC(args, plan, padded);
}

/// Launches rung K at any shape (sm90_shapes.h): Build<K> (its own build) on its tile,
/// Build<Guarded(K)> off it. kAnyShape false (the tuning tool, which times shapes on the tile):
/// no guarded build is compiled, and a shape off the tile is refused.
template <template <Knobs> class Build, Knobs K, bool kAnyShape>
std::string LaunchRung(const GemmArgs& args) {
  return LaunchAnyShape(args, K, [](const GemmArgs& a, bool guarded, int64_t b_rows) {
    if constexpr (kAnyShape) {
      return guarded ? Build<Guarded(K)>::Launch(a, b_rows) : Build<K>::Launch(a, b_rows);
    } else {
      return guarded ? OffTileRefusal() : Build<K>::Launch(a, b_rows);
    }
  });
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

/// The maps of A (box `a_rows` rows) and B (`b_rows` rows of the matrix, box `b_box` rows), or
/// what failed.
inline std::string EncodeMaps(const GemmArgs& args, int64_t b_rows, int b_box, CUtensorMap* ma,
                              CUtensorMap* mb, int a_rows = kBlockM) {
  const Problem& p = args.problem;
  const int bytes = ElementBytes(p.dtype);
  if (std::string e = EncodeKMajor(ma, args.a, p.m, p.k, a_rows, bytes); !e.empty()) return e;
  return EncodeKMajor(mb, args.b, b_rows, p.k, b_box, bytes);
}

}  // namespace ablation::kernels::sm90
