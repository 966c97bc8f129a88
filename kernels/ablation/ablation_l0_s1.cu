// Instances of the ablation GEMM with LOAD_MODE=0, STAGES=1 (see ablation_launch.cuh).
#include "kernels/ablation/ablation_launch.cuh"
#include "kernels/ablation/ablation_launchers.h"

namespace ablation::kernels {

void BindAblationL0S1(Registry& registry) { ablation_gemm::BindSlice<0, 1>(registry); }

}  // namespace ablation::kernels
