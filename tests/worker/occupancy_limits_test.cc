#include "server/worker/occupancy_limits.h"

#include <gtest/gtest.h>

namespace ablation::worker {
namespace {

// sm_90 (H100/H200) limits; the defaults of SmLimits.
SmLimits Sm90() { return SmLimits{}; }

TEST(OccupancyLimits, RegistersBind) {
  // 256 threads x 128 regs: 4096 regs per warp, 16 warps fit, 8 warps per block -> 2 blocks.
  OccupancyLimits r = ComputeOccupancyLimits({256, 128, 0}, Sm90());
  EXPECT_EQ(r.by_registers, 2);
  EXPECT_EQ(r.by_warps, 8);
  EXPECT_EQ(r.by_blocks, 32);
  EXPECT_EQ(r.blocks_per_sm, 2);
  EXPECT_EQ(r.limiter, "registers");
  EXPECT_EQ(r.warps_per_sm, 16);
  EXPECT_DOUBLE_EQ(r.theoretical_occupancy, 0.25);
}

TEST(OccupancyLimits, RegisterAllocationGranularity) {
  // 168 regs: 5376 per warp -> 12.19 warps -> 12 (a multiple of 4) -> 3 blocks of 4 warps.
  OccupancyLimits r = ComputeOccupancyLimits({128, 168, 0}, Sm90());
  EXPECT_EQ(r.by_registers, 3);
  // 170 regs round up to 5632 per warp (22 units of 256): 11.6 -> 11 -> 8 warps -> 2 blocks.
  EXPECT_EQ(ComputeOccupancyLimits({128, 170, 0}, Sm90()).by_registers, 2);
}

TEST(OccupancyLimits, SharedMemoryBinds) {
  // 96 KB dynamic + 1 KB reserved per block: two fit in 228 KB.
  OccupancyLimits r = ComputeOccupancyLimits({128, 32, 96 * 1024}, Sm90());
  EXPECT_EQ(r.by_shared_memory, 2);
  EXPECT_EQ(r.limiter, "shared_memory");
  EXPECT_EQ(r.blocks_per_sm, 2);
  EXPECT_EQ(r.warps_per_sm, 8);
  EXPECT_DOUBLE_EQ(r.theoretical_occupancy, 8.0 / 64.0);
  // 227 KB (the opt-in maximum) + 1 KB reserved: exactly one.
  EXPECT_EQ(ComputeOccupancyLimits({128, 32, 227 * 1024}, Sm90()).by_shared_memory, 1);
}

TEST(OccupancyLimits, WarpsBindAtFullOccupancy) {
  // 1024 threads x 32 regs: registers allow 2 blocks, so do warps: the tie names warps.
  OccupancyLimits r = ComputeOccupancyLimits({1024, 32, 0}, Sm90());
  EXPECT_EQ(r.by_registers, 2);
  EXPECT_EQ(r.by_warps, 2);
  EXPECT_EQ(r.limiter, "warps");
  EXPECT_DOUBLE_EQ(r.theoretical_occupancy, 1.0);
}

TEST(OccupancyLimits, BlocksBindForSmallBlocks) {
  // 32 threads: 64 by warps, but at most 32 resident blocks.
  OccupancyLimits r = ComputeOccupancyLimits({32, 16, 0}, Sm90());
  EXPECT_EQ(r.limiter, "blocks");
  EXPECT_EQ(r.blocks_per_sm, 32);
  EXPECT_DOUBLE_EQ(r.theoretical_occupancy, 0.5);
}

TEST(OccupancyLimits, TooManyRegistersForTheBlock) {
  OccupancyLimits r = ComputeOccupancyLimits({1024, 255, 0}, Sm90());
  EXPECT_EQ(r.by_registers, 0);
  EXPECT_EQ(r.blocks_per_sm, 0);
  EXPECT_EQ(r.limiter, "registers");
  EXPECT_DOUBLE_EQ(r.theoretical_occupancy, 0);
}

TEST(OccupancyLimits, UnknownRegistersDoNotBind) {
  OccupancyLimits r = ComputeOccupancyLimits({256, 0, 0}, Sm90());
  EXPECT_EQ(r.limiter, "warps");
  EXPECT_EQ(r.blocks_per_sm, 8);
}

TEST(OccupancyLimits, Sm80Limits) {
  SmLimits a100;
  a100.smem_per_sm = 167936;  // 164 KB
  a100.max_threads_per_sm = 2048;
  // A 3-stage 128x128x32 bf16 tile: 3 * (128*32 + 32*128) * 2 bytes = 48 KB -> 3 per SM.
  OccupancyLimits r = ComputeOccupancyLimits({128, 96, 48 * 1024}, a100);
  EXPECT_EQ(r.by_shared_memory, 3);
  EXPECT_EQ(r.by_registers, 5);
  EXPECT_EQ(r.limiter, "shared_memory");
}

}  // namespace
}  // namespace ablation::worker
