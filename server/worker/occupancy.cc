#include "server/worker/occupancy.h"

#include "server/worker/diagnostics.h"
#include "server/worker/occupancy_limits.h"

namespace ablation::worker {

namespace {

SmLimits LimitsOf(const cudaDeviceProp& prop) {
  SmLimits sm;
  sm.max_threads_per_sm = prop.maxThreadsPerMultiProcessor;
  sm.max_blocks_per_sm = prop.maxBlocksPerMultiProcessor;
  sm.registers_per_sm = prop.regsPerMultiprocessor;
  sm.max_registers_per_block = prop.regsPerBlock;
  sm.smem_per_sm = int64_t(prop.sharedMemPerMultiprocessor);
  sm.reserved_smem_per_block = int64_t(prop.reservedSharedMemPerBlock);
  sm.warp_size = prop.warpSize;
  return sm;
}

}  // namespace

std::string FillOccupancy(Device& d, const Ready& r, ::ablation::v1::Occupancy* occ) {
  const kernels::Variant& v = *r.variant;
  const void* fn = v.KernelAt(r.problem);
  if (fn == nullptr) return "";  // a library entry (cuBLAS): nothing of ours to describe
  cudaFuncAttributes attr{};
  std::string err = d.Check(cudaFuncGetAttributes(&attr, fn), "cudaFuncGetAttributes");
  if (!err.empty()) return err;
  // The launch at this problem where it depends on it (a user kernel's, the few-row path's),
  // else the variant's one launch size.
  int64_t block_threads = v.threads, dynamic_smem = v.smem_bytes;
  if (v.launch_at) {
    const kernels::LaunchSize at = v.launch_at(r.problem);
    if (at.threads > 0) block_threads = at.threads;
    dynamic_smem = at.dynamic_smem_bytes;
  }
  int threads = block_threads > 0 ? int(block_threads) : attr.maxThreadsPerBlock;
  int blocks = 0;
  err = d.Check(
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, fn, threads, size_t(dynamic_smem)),
      "cudaOccupancyMaxActiveBlocksPerMultiprocessor");
  if (!err.empty()) return err;

  KernelNeeds needs;
  needs.threads_per_block = threads;
  needs.registers_per_thread = attr.numRegs;
  needs.smem_per_block = int64_t(attr.sharedSizeBytes) + dynamic_smem;
  const OccupancyLimits lim = ComputeOccupancyLimits(needs, LimitsOf(d.prop));

  const int warps_per_block = (threads + d.prop.warpSize - 1) / d.prop.warpSize;
  const int max_warps = d.prop.maxThreadsPerMultiProcessor / d.prop.warpSize;
  occ->set_registers_per_thread(attr.numRegs);
  occ->set_static_smem_bytes(int64_t(attr.sharedSizeBytes));
  occ->set_dynamic_smem_bytes(dynamic_smem);
  occ->set_local_bytes_per_thread(int64_t(attr.localSizeBytes));
  // The count is the driver's (authoritative); the limiter is ours (the driver does not say).
  occ->set_max_blocks_per_sm(blocks);
  occ->set_max_warps_per_sm(blocks * warps_per_block);
  occ->set_theoretical_occupancy(max_warps > 0 ? double(blocks * warps_per_block) / max_warps : 0);
  occ->set_limiter(lim.limiter);
  occ->set_threads_per_block(threads);
  if (lim.blocks_per_sm != blocks) {
    Log("occupancy of %s: the driver allows %d blocks/SM, the limit computation %d (%s); "
        "reporting the driver's count",
        v.name.c_str(), blocks, lim.blocks_per_sm, lim.limiter.c_str());
  }
  return "";
}

}  // namespace ablation::worker
