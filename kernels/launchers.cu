// Binds launch/kernel of every catalog entry that has a CUDA implementation in this library. The
// list of families mirrors catalog.cc's (registration is host-only, binding needs CUDA): a new
// family adds one line to each.
#include "kernels/ablation/ablation_launchers.h"
#include "kernels/cublas/cublas_gemm.h"
#include "kernels/pipe/pipe_launchers.h"
#include "kernels/registry.h"
#include "kernels/simt/simt_launchers.h"
#include "kernels/sm90/sm90_buckets.h"
#include "kernels/sm90/sm90_few_rows.h"
#include "kernels/sm90/sm90_launchers.h"
#include "kernels/smem2reg/smem2reg_launchers.h"
#include "kernels/tf32/tf32_launchers.h"

namespace ablation::kernels {

void BindLaunchers(Registry& registry) {
  BindCublasLaunchers(registry);
  BindAblationLaunchers(registry);
  BindPipeLaunchers(registry);
  BindSimtLaunchers(registry);
  BindTf32Launchers(registry);
  BindSmem2RegLaunchers(registry);
  BindSm90Launchers(registry);
  sm90::BindSm90SmallRungs(registry);  // after the Hopper rungs: it runs their launches
  sm90::BindSm90BucketRungs(registry);  // after both: they run their launches
}

}  // namespace ablation::kernels
