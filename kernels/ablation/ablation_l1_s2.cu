// Instances of the ablation GEMM with LOAD_MODE=1, STAGES=2 (see ablation_launch.cuh).
#include "kernels/ablation/ablation_launch.cuh"
#include "kernels/ablation/ablation_launchers.h"

namespace ablation::kernels {

void BindAblationL1S2(Registry& registry) { ablation_gemm::BindSlice<1, 2>(registry); }

}  // namespace ablation::kernels
