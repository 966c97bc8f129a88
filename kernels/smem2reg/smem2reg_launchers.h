// Binds the launchers of the smem2reg micro-benchmarks (smem2reg_launchers.cu).
#pragma once

#include "kernels/registry.h"

namespace ablation::kernels {

void BindSmem2RegLaunchers(Registry& registry);

}  // namespace ablation::kernels
