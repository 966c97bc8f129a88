// Grouped rasterization, the tile order every tiled family of this library uses: the linear block
// index walks the C tiles in groups of `group_m` tile rows, column by column within a group, so
// that blocks running at the same time share rows of A and columns of B in L2.
#pragma once

#include <cuda_runtime.h>

namespace ablation::kernels {

/// The (tile row, tile column) of linear block `bid` over a tiles_m x tiles_n grid of C tiles,
/// grouped by `group_m` tile rows (the last group may have fewer).
__device__ __forceinline__ int2 GroupedTile(int bid, int tiles_m, int tiles_n, int group_m) {
  const int per_group = group_m * tiles_n;
  const int first_m = (bid / per_group) * group_m;
  const int group_rows = min(tiles_m - first_m, group_m);
  const int in_group = bid % per_group;
  return make_int2(first_m + in_group % group_rows, in_group / group_rows);
}

}  // namespace ablation::kernels
