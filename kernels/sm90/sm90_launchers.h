// Binds the sm90 family's launchers (CUDA library only).
#pragma once

#include "kernels/registry.h"

namespace ablation::kernels {
namespace sm90 {
void BindSm90Mma(Registry& registry);
void BindSm90Wgmma(Registry& registry);
}  // namespace sm90

inline void BindSm90Launchers(Registry& registry) {
  sm90::BindSm90Mma(registry);
  sm90::BindSm90Wgmma(registry);
}

}  // namespace ablation::kernels
