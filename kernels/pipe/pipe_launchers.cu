#include "kernels/pipe/pipe_launchers.h"

namespace ablation::kernels {

void BindPipeLaunchers(Registry& registry) {
  BindPipeF16(registry);
  BindPipeI8(registry);
  BindPipeF32(registry);
}

}  // namespace ablation::kernels
