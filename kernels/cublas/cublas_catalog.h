// Catalog entries of the cuBLAS baselines (cublas_bf16, cublas_fp16). Host-only.
#pragma once

#include "kernels/registry.h"

namespace ablation::kernels {

void RegisterCublas(Registry& registry);

}  // namespace ablation::kernels
