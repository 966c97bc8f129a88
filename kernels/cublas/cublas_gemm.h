// Launchers of the cuBLAS baselines. The CUDA side of cublas_catalog.h.
#pragma once

#include "kernels/registry.h"

namespace ablation::kernels {

void BindCublasLaunchers(Registry& registry);

}  // namespace ablation::kernels
