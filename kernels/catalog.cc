// The one list of kernel families (host-only): a new family adds one line here and one in
// launchers.cu.
#include "kernels/ablation/ablation_catalog.h"
#include "kernels/cublas/cublas_catalog.h"
#include "kernels/registry.h"

namespace ablation::kernels {

void RegisterCatalog(Registry& registry) {
  RegisterCublas(registry);
  RegisterAblation(registry);
}

}  // namespace ablation::kernels
