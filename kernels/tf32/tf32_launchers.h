// Launchers of the TF32 Tensor Core pair. The CUDA side of tf32_catalog.h.
#pragma once

#include "kernels/registry.h"

namespace ablation::kernels {

void BindTf32Launchers(Registry& registry);

}  // namespace ablation::kernels
