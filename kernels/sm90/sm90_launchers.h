// Binds the sm90 family's launchers (CUDA library only).
#pragma once

#include <cstddef>

#include "kernels/registry.h"

namespace ablation::kernels {
namespace sm90 {
void BindSm90Mma(Registry& registry);
void BindSm90Wgmma(Registry& registry);
/// The kernel of kRungs[rung]'s guarded build (what runs at shapes off the tile), for the
/// occupancy and local-memory checks; `unclustered`: that build without clusters, where the rung
/// drops them (sm90_plan.h); nullptr past the last rung.
const void* Sm90GuardedKernel(size_t rung, bool unclustered = false);
/// What this device holds of a persistent grid at once (sm90_plan.h): its SMs and the clusters of
/// two CTAs of the family's kernels that fit (the occupancy calculator's count); zeros without a
/// device.
Residency Sm90DeviceResidency();
/// The fp8 rungs (kFp8Rungs): their binding and their guarded builds' kernels.
void BindSm90Fp8(Registry& registry);
const void* Sm90Fp8GuardedKernel(size_t rung, bool unclustered = false);
/// The builds of the last rung with a smaller block tile (kTileRungs), own and guarded.
void BindSm90Tiles(Registry& registry);
}  // namespace sm90

inline void BindSm90Launchers(Registry& registry) {
  sm90::BindSm90Mma(registry);
  sm90::BindSm90Wgmma(registry);
  sm90::BindSm90Fp8(registry);
  sm90::BindSm90Tiles(registry);
}

}  // namespace ablation::kernels
