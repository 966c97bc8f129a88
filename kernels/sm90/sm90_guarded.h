// The rungs' guarded builds (Guarded(rung), sm90_shapes.h: what runs at a shape off the tile) are
// compiled in a translation unit of their own, sm90_guarded.cu: beside the rungs' own builds in
// sm90_mma.cu they changed the order of M1's prologue instructions (the compiler's scheduling
// over the whole unit), and the rungs must keep the code they were measured with
// (tools/sm90_ptx_compare.py); apart, the two units also compile in parallel. This header names
// them: with PREFIX `extern` a declaration that keeps a unit from instantiating them, with PREFIX
// empty their definition.
#pragma once

#include <cstddef>
#include <utility>

#include "kernels/sm90/sm90_mma_launch.cuh"
#include "kernels/sm90/sm90_wgmma_launch.cuh"

#define ABLATION_SM90_GUARDED_MMA(PREFIX, RUNG) \
  PREFIX template struct MmaBuild<Guarded(rung_knobs::RUNG)>;
#define ABLATION_SM90_GUARDED_WGMMA(PREFIX, RUNG) \
  PREFIX template struct WgmmaBuild<Guarded(rung_knobs::RUNG)>;
/// Every rung's guarded build, in the order of kRungs.
#define ABLATION_SM90_GUARDED_BUILDS(PREFIX) \
  ABLATION_SM90_GUARDED_MMA(PREFIX, kM1)     \
  ABLATION_SM90_GUARDED_MMA(PREFIX, kH1)     \
  ABLATION_SM90_GUARDED_WGMMA(PREFIX, kH2)   \
  ABLATION_SM90_GUARDED_WGMMA(PREFIX, kH3)   \
  ABLATION_SM90_GUARDED_WGMMA(PREFIX, kH4)   \
  ABLATION_SM90_GUARDED_WGMMA(PREFIX, kH5)   \
  ABLATION_SM90_GUARDED_WGMMA(PREFIX, kH6)   \
  ABLATION_SM90_GUARDED_WGMMA(PREFIX, kH7)   \
  ABLATION_SM90_GUARDED_WGMMA(PREFIX, kH8)   \
  ABLATION_SM90_GUARDED_WGMMA(PREFIX, kH9)   \
  ABLATION_SM90_GUARDED_WGMMA(PREFIX, kH10)  \
  ABLATION_SM90_GUARDED_WGMMA(PREFIX, kH11)  \
  ABLATION_SM90_GUARDED_WGMMA(PREFIX, kH12)

/// The fp8 rungs' guarded builds, in the order of kFp8Rungs (their unit: sm90_fp8_guarded.cu).
#define ABLATION_SM90_GUARDED_FP8_BUILDS(PREFIX) \
  ABLATION_SM90_GUARDED_WGMMA(PREFIX, kF1)       \
  ABLATION_SM90_GUARDED_WGMMA(PREFIX, kF2)       \
  ABLATION_SM90_GUARDED_WGMMA(PREFIX, kF3)       \
  ABLATION_SM90_GUARDED_WGMMA(PREFIX, kF4)       \
  ABLATION_SM90_GUARDED_WGMMA(PREFIX, kF5)       \
  ABLATION_SM90_GUARDED_WGMMA(PREFIX, kF6)       \
  ABLATION_SM90_GUARDED_WGMMA(PREFIX, kF7)       \
  ABLATION_SM90_GUARDED_WGMMA(PREFIX, kF8)

namespace ablation::kernels::sm90 {

/// The kernel of the guarded build of kTable[rung] (kRungs or kFp8Rungs), or nullptr past the
/// table's end; `unclustered`: of that build without clusters, where the rung drops them
/// (Knobs::clusters_where_shared; the guarded build itself elsewhere). Instantiated by the unit
/// that defines that table's guarded builds, whose launches instantiate both kernels.
template <const auto& kTable>
const void* GuardedKernelOf(size_t rung, bool unclustered = false) {
  const void* out = nullptr;
  [&]<size_t... kIndex>(std::index_sequence<kIndex...>) {
    auto pick = [&]<size_t kI>(std::integral_constant<size_t, kI>) {
      constexpr Knobs kG = Guarded(kTable[kI].knobs);
      if (rung != kI) return;
      if constexpr (kG.clusters_where_shared) {
        if (unclustered) {
          out = reinterpret_cast<const void*>(kWgmmaKernel<Unclustered(kG)>);
          return;
        }
      }
      if constexpr (kG.mainloop == Mainloop::kWgmma) {
        out = reinterpret_cast<const void*>(kWgmmaKernel<kG>);
      } else {
        out = reinterpret_cast<const void*>(&Sm90MmaKernel<kG>);
      }
    };
    (pick(std::integral_constant<size_t, kIndex>{}), ...);
  }
  (std::make_index_sequence<kTable.size()>{});
  return out;
}

#define ABLATION_SM90_EXTERN extern
ABLATION_SM90_GUARDED_BUILDS(ABLATION_SM90_EXTERN)
ABLATION_SM90_GUARDED_FP8_BUILDS(ABLATION_SM90_EXTERN)
#undef ABLATION_SM90_EXTERN
}  // namespace ablation::kernels::sm90
