// Instances of the pipe_ GEMM for fp32: the three pipelines of each fp32 tile in kPipeTiles.
#include "kernels/pipe/pipe_launch.cuh"
#include "kernels/pipe/pipe_launchers.h"

namespace ablation::kernels {

void BindPipeF32(Registry& registry) { pipe::BindType<DType::kFP32>(registry); }

}  // namespace ablation::kernels
