#include "server/worker/timing_kernels.h"

#include <cuda_runtime.h>

namespace ablation::worker {
namespace {

__device__ __forceinline__ uint64_t GlobalTimer() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__global__ void ProbeKernel(ClockProbe* out) {
  // Bounded: a timer that never ticks must not hang the stream (the pair is then unusable).
  const uint64_t t0 = GlobalTimer();
  uint64_t t = t0;
  for (int i = 0; i < (1 << 16) && t == t0; ++i) t = GlobalTimer();
  const uint64_t clock = clock64();
  uint32_t smid;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
  out->timer_ns = t;
  out->clock = clock;
  out->smid = smid;
}

__global__ void GateKernel(volatile int* gate, uint64_t timeout_ns) {
  const uint64_t t0 = GlobalTimer();
  while (gate[0] == 0) {
    if (GlobalTimer() - t0 >= timeout_ns) {
      gate[1] = 1;
      return;
    }
  }
}

std::string LaunchError(const char* what) {
  cudaError_t e = cudaGetLastError();
  if (e == cudaSuccess) return "";
  return std::string(what) + ": " + cudaGetErrorName(e) + ": " + cudaGetErrorString(e);
}

}  // namespace

std::string EnqueueProbe(void* stream, ClockProbe* out) {
  ProbeKernel<<<1, 1, 0, static_cast<cudaStream_t>(stream)>>>(out);
  return LaunchError("clock probe kernel");
}

std::string EnqueueGate(void* stream, volatile int* gate, uint64_t timeout_ns) {
  GateKernel<<<1, 1, 0, static_cast<cudaStream_t>(stream)>>>(gate, timeout_ns);
  return LaunchError("gate kernel");
}

}  // namespace ablation::worker
