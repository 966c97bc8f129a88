// Launchers of the SIMT FP32 ladder. The CUDA side of simt_catalog.h.
#pragma once

#include "kernels/registry.h"

namespace ablation::kernels {

void BindSimtLaunchers(Registry& registry);

}  // namespace ablation::kernels
