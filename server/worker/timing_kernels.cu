#include "server/worker/timing_kernels.h"

#include <cuda_runtime.h>

namespace ablation::worker {
namespace {

__global__ void SpinKernel(uint64_t ns) {
  uint64_t start;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  for (;;) {
    uint64_t now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    if (now - start >= ns) break;
  }
}

}  // namespace

std::string EnqueueDelay(void* stream, uint32_t ns) {
  SpinKernel<<<1, 1, 0, static_cast<cudaStream_t>(stream)>>>(ns);
  cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) {
    return std::string("delay kernel: ") + cudaGetErrorName(e) + ": " + cudaGetErrorString(e);
  }
  return "";
}

}  // namespace ablation::worker
