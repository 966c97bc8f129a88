#include "kernels/ablation/ablation_launchers.h"

namespace ablation::kernels {

void BindAblationLaunchers(Registry& registry) {
  BindAblationL0S1(registry);
  BindAblationL0S2(registry);
  BindAblationL0S3(registry);
  BindAblationL0S4(registry);
  BindAblationL1S1(registry);
  BindAblationL1S2(registry);
  BindAblationL1S3(registry);
  BindAblationL1S4(registry);
}

}  // namespace ablation::kernels
