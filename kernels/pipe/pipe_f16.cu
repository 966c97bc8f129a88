// Instances of the pipe_ GEMM for fp16: the three pipelines of each fp16 tile in kPipeTiles.
#include "kernels/pipe/pipe_launch.cuh"
#include "kernels/pipe/pipe_launchers.h"

namespace ablation::kernels {

void BindPipeF16(Registry& registry) { pipe::BindType<DType::kFP16>(registry); }

}  // namespace ablation::kernels
