// The builds of the last rung with a smaller block tile (kTileRungs: H12 with 64-row tiles), for
// the small-shape ladder (sm90_few_rows.h). A unit of their own, own and guarded builds together,
// so that the ladder's units keep the code their rungs were measured with (sm90_guarded.h).
#include <cstdint>
#include <string>
#include <utility>

#include "kernels/sm90/sm90_guarded.h"
#include "kernels/sm90/sm90_launchers.h"
#include "kernels/sm90/sm90_tile_rungs.h"
#include "kernels/sm90/sm90_wgmma_launch.cuh"

namespace ablation::kernels::sm90 {

namespace {
const void* TileGuardedKernel(size_t rung, bool unclustered) {
  return GuardedKernelOf<kTileRungs>(rung, unclustered);
}
}  // namespace

// Binds kTileRungs[kI]: its launch and the kernel each problem runs; a build that stores C
// transposed is given A and B swapped (C^T = B A^T), and refuses what its C cannot be: rows
// (the caller's M) not whole 16-byte chunks, or C misaligned (C is not padded: it is written
// transposed).
template <size_t kI>
void BindTile(Registry& registry) {
  constexpr Knobs K = kTileRungs[kI].knobs;
  const std::string_view name = kTileRungs[kI].name;
  LaunchFn launch = &LaunchRung<WgmmaBuild, K, true>;
  if constexpr (K.store_transposed) {
    launch = [](const GemmArgs& args) -> std::string {
      if (args.problem.m % 8 != 0 || reinterpret_cast<uintptr_t>(args.c) % 16 != 0)
        return "sm90 swapped build: M must be a multiple of 8 and C 16-byte aligned (C is "
               "stored transposed, not padded)";
      GemmArgs swapped = args;
      swapped.a = args.b;
      swapped.b = args.a;
      swapped.problem = SwappedProblem(args.problem);
      return LaunchRung<WgmmaBuild, K, true>(swapped);
    };
  }
  BindRung(registry, name, std::move(launch), reinterpret_cast<const void*>(kWgmmaKernel<K>));
  BindKernelAt<K>(registry, name, &TileGuardedKernel, kI);
  if constexpr (K.store_transposed) {
    if (Variant* v = registry.FindMutable(name); v != nullptr && v->kernel_at) {
      auto unswapped = v->kernel_at;
      v->kernel_at = [unswapped](const Problem& p) { return unswapped(SwappedProblem(p)); };
    }
  }
}

void BindSm90Tiles(Registry& registry) {
  [&]<size_t... kIndex>(std::index_sequence<kIndex...>) { (BindTile<kIndex>(registry), ...); }
  (std::make_index_sequence<kTileRungs.size()>{});
}

}  // namespace ablation::kernels::sm90
