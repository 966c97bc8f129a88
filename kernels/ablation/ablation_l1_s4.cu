// Instances of the ablation GEMM with LOAD_MODE=1, STAGES=4 (see ablation_launch.cuh).
#include "kernels/ablation/ablation_launch.cuh"
#include "kernels/ablation/ablation_launchers.h"

namespace ablation::kernels {

void BindAblationL1S4(Registry& registry) { ablation_gemm::BindSlice<1, 4>(registry); }

}  // namespace ablation::kernels
