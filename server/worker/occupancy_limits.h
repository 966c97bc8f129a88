// Which resource bounds a kernel's resident blocks per SM: a pure function of the kernel's
// per-block needs and the device's per-SM limits, so it is tested without a GPU. The CUDA
// occupancy API gives the count; it does not say which limit binds, which is what a kernel
// engineer wants to know.
#pragma once

#include <cstdint>
#include <string>

namespace ablation::worker {

struct KernelNeeds {
  int threads_per_block = 0;
  int registers_per_thread = 0;
  int64_t smem_per_block = 0;  ///< static + dynamic bytes (the driver's reservation is added)
};

struct SmLimits {
  int max_threads_per_sm = 2048;
  int max_blocks_per_sm = 32;
  int registers_per_sm = 65536;
  int max_registers_per_block = 65536;
  int64_t smem_per_sm = 233472;  ///< cudaDeviceProp::sharedMemPerMultiprocessor (228 KB on sm_90)
  int64_t reserved_smem_per_block = 1024;  ///< cudaDeviceProp::reservedSharedMemPerBlock
  int warp_size = 32;
  /// Registers are allocated per warp in units of this many (256 on sm_50 .. sm_90).
  int register_allocation_unit = 256;
  /// Warps are given registers in groups of this many (4: one per SM sub-partition).
  int warp_allocation_granularity = 4;
  /// Shared memory is allocated per block in units of this many bytes (128 on sm_80/sm_90).
  int64_t smem_allocation_unit = 128;
};

struct OccupancyLimits {
  int by_registers = 0;
  int by_shared_memory = 0;
  int by_warps = 0;
  int by_blocks = 0;
  int blocks_per_sm = 0;  ///< the smallest of the four
  /// "registers" | "shared_memory" | "warps" | "blocks": the binding limit. On a tie the
  /// architectural limits (warps, then blocks) win over the resources (registers, then shared
  /// memory): a resource is named only when it binds strictly below them.
  std::string limiter;
  int warps_per_sm = 0;
  double theoretical_occupancy = 0;  ///< warps_per_sm / (max_threads_per_sm / warp_size)
};

/// Computes each per-SM limit on resident blocks and the binding one.
OccupancyLimits ComputeOccupancyLimits(const KernelNeeds& k, const SmLimits& sm);

}  // namespace ablation::worker
