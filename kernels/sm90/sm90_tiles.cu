// The builds of the last rung with a smaller block tile (kTileRungs: H12 with 64-row tiles), for
// the small-shape ladder (sm90_few_rows.h). A unit of their own, own and guarded builds together,
// so that the ladder's units keep the code their rungs were measured with (sm90_guarded.h).
#include <utility>

#include "kernels/sm90/sm90_guarded.h"
#include "kernels/sm90/sm90_launchers.h"
#include "kernels/sm90/sm90_wgmma_launch.cuh"

namespace ablation::kernels::sm90 {

namespace {
const void* TileGuardedKernel(size_t rung, bool unclustered) {
  return GuardedKernelOf<kTileRungs>(rung, unclustered);
}
}  // namespace

void BindSm90Tiles(Registry& registry) {
  [&]<size_t... kIndex>(std::index_sequence<kIndex...>) {
    (BindRung(registry, kTileRungs[kIndex].name,
              &LaunchRung<WgmmaBuild, kTileRungs[kIndex].knobs, true>,
              reinterpret_cast<const void*>(&Sm90WgmmaKernel<kTileRungs[kIndex].knobs>)),
     ...);
    (BindKernelAt<kTileRungs[kIndex].knobs>(registry, kTileRungs[kIndex].name, &TileGuardedKernel,
                                            kIndex),
     ...);
  }
  (std::make_index_sequence<kTileRungs.size()>{});
}

}  // namespace ablation::kernels::sm90
