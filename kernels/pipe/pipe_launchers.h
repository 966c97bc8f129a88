// Binds the launchers of the pipe_ family. One function per data type, each defined in its own
// translation unit (pipe_f16.cu, pipe_i8.cu, pipe_f32.cu).
#pragma once

#include "kernels/registry.h"

namespace ablation::kernels {

void BindPipeF16(Registry& registry);
void BindPipeI8(Registry& registry);
void BindPipeF32(Registry& registry);

/// All of the above.
void BindPipeLaunchers(Registry& registry);

}  // namespace ablation::kernels
