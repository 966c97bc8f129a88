// Catalog entries of the cuBLAS baselines, one per dtype (cublas_bf16, cublas_fp16, cublas_fp32,
// cublas_tf32, cublas_int8). Host-only.
#pragma once

#include "kernels/registry.h"

namespace ablation::kernels {

void RegisterCublas(Registry& registry);

}  // namespace ablation::kernels
