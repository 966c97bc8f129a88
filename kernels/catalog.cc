// The one list of kernel families (host-only): a new family adds one line here and one in
// launchers.cu.
#include "kernels/ablation/ablation_catalog.h"
#include "kernels/cublas/cublas_catalog.h"
#include "kernels/pipe/pipe_catalog.h"
#include "kernels/registry.h"
#include "kernels/simt/simt_catalog.h"
#include "kernels/sm90/sm90_catalog.h"
#include "kernels/smem2reg/smem2reg_catalog.h"
#include "kernels/tf32/tf32_catalog.h"

namespace ablation::kernels {

void RegisterCatalog(Registry& registry) {
  RegisterCublas(registry);
  RegisterAblation(registry);
  RegisterPipe(registry);
  RegisterSimt(registry);
  RegisterTf32(registry);
  RegisterSmem2Reg(registry);
  RegisterSm90(registry);
}

}  // namespace ablation::kernels
