// Catalog entries of the cuBLAS baselines, two per dtype (cublas_bf16 and cublas_bf16_best, ...,
// cublas_fp8 and cublas_fp8_best: the heuristic's pick and the best of its candidates;
// cublas_lt.h). Host-only.
#pragma once

#include "kernels/registry.h"

namespace ablation::kernels {

void RegisterCublas(Registry& registry);

}  // namespace ablation::kernels
