// Instances of the pipe_ GEMM for int8: the three pipelines of each int8 tile in kPipeTiles.
#include "kernels/pipe/pipe_launch.cuh"
#include "kernels/pipe/pipe_launchers.h"

namespace ablation::kernels {

void BindPipeI8(Registry& registry) { pipe::BindType<DType::kINT8>(registry); }

}  // namespace ablation::kernels
