#include "server/worker/occupancy_limits.h"

#include <algorithm>
#include <climits>

namespace ablation::worker {
namespace {

int64_t RoundUp(int64_t x, int64_t unit) { return unit > 0 ? (x + unit - 1) / unit * unit : x; }

}  // namespace

OccupancyLimits ComputeOccupancyLimits(const KernelNeeds& k, const SmLimits& sm) {
  OccupancyLimits r;
  const int warp = std::max(sm.warp_size, 1);
  const int warps_per_block = std::max(1, (k.threads_per_block + warp - 1) / warp);

  r.by_blocks = sm.max_blocks_per_sm;
  r.by_warps = (sm.max_threads_per_sm / warp) / warps_per_block;

  if (k.registers_per_thread <= 0) {
    r.by_registers = INT_MAX;
  } else {
    const int64_t regs_per_warp =
        RoundUp(int64_t(k.registers_per_thread) * warp, sm.register_allocation_unit);
    if (int64_t(warps_per_block) * regs_per_warp > sm.max_registers_per_block) {
      r.by_registers = 0;  // the launch itself would fail: too many resources requested
    } else {
      // Warps that fit in the register file, in whole allocation groups.
      int64_t warps = sm.registers_per_sm / regs_per_warp;
      const int g = std::max(sm.warp_allocation_granularity, 1);
      warps = warps / g * g;
      r.by_registers = int(warps / warps_per_block);
    }
  }

  const int64_t smem =
      RoundUp(k.smem_per_block + sm.reserved_smem_per_block, sm.smem_allocation_unit);
  r.by_shared_memory = smem > 0 ? int(sm.smem_per_sm / smem) : INT_MAX;

  struct Candidate {
    int blocks;
    const char* name;
  };
  // Tie order: the architectural limits first, so that a resource is named only when it binds
  // strictly below them (at full occupancy the answer is "warps", not "registers").
  const Candidate order[] = {{r.by_warps, "warps"},
                             {r.by_blocks, "blocks"},
                             {r.by_registers, "registers"},
                             {r.by_shared_memory, "shared_memory"}};
  const Candidate* best = &order[0];
  for (const Candidate& c : order) {
    if (c.blocks < best->blocks) best = &c;
  }
  r.blocks_per_sm = std::max(best->blocks, 0);
  r.limiter = best->name;
  r.warps_per_sm = r.blocks_per_sm * warps_per_block;
  const int max_warps = sm.max_threads_per_sm / warp;
  r.theoretical_occupancy = max_warps > 0 ? double(r.warps_per_sm) / double(max_warps) : 0;
  return r;
}

}  // namespace ablation::worker
