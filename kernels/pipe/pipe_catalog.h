// Catalog entries (metadata and can_implement) of the pipe_ family. Host-only.
#pragma once

#include <string>

#include "kernels/common/problem.h"
#include "kernels/pipe/pipe_config.h"
#include "kernels/registry.h"

namespace ablation::kernels {

/// "" if the pipe_ kernel of type `dtype` can run `p`, else the reason, naming the field. Any
/// M, N, K >= 1 (ragged edges are handled in the kernel); dtype must be the entry's own.
std::string PipeCanImplement(DType dtype, const Problem& p);

/// Registers the pipe_ variants: 3 pipelines x 2 tiles x {fp16, int8, fp32}.
void RegisterPipe(Registry& registry);

}  // namespace ablation::kernels
