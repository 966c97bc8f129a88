#include "server/worker/timing_kernels.h"

#include <algorithm>
#include <cstdint>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

namespace ablation::worker {
namespace {

__device__ __forceinline__ uint64_t GlobalTimer() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__global__ void ProbeKernel(protocol::ClockProbe* out) {
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

template <typename T>
__device__ __forceinline__ double AsDouble(T v) {
  return double(v);
}
template <>
__device__ __forceinline__ double AsDouble(__nv_bfloat16 v) {
  return double(__bfloat162float(v));
}
template <>
__device__ __forceinline__ double AsDouble(__half v) {
  return double(__half2float(v));
}

// The value an output element holds, or NaN where it is not a value: float outputs as they are,
// int32 outputs (int8 GEMMs) with their poison INT32_MIN, which no product of the inputs' range
// reaches, as not finite.
__device__ __forceinline__ double OutputValue(int32_t v) {
  return v == INT32_MIN ? nan("") : double(v);
}
template <typename T>
__device__ __forceinline__ double OutputValue(T v) {
  return AsDouble(v);
}

// A grid-stride sum in double, reduced per warp and added once per warp: the comparison is
// outside every timed interval, so plainness wins over speed.
template <typename T>
__global__ void ErrorSumsKernel(const T* out, const T* ref, size_t count, double* sums) {
  double diff = 0, norm = 0, bad = 0;
  for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += size_t(gridDim.x) * blockDim.x) {
    const double o = OutputValue(out[i]), r = OutputValue(ref[i]);
    if (!isfinite(o)) {
      bad += 1;
      continue;
    }
    diff += (o - r) * (o - r);
    norm += r * r;
  }
  for (int offset = 16; offset > 0; offset /= 2) {
    diff += __shfl_down_sync(0xffffffffu, diff, offset);
    norm += __shfl_down_sync(0xffffffffu, norm, offset);
    bad += __shfl_down_sync(0xffffffffu, bad, offset);
  }
  if ((threadIdx.x & 31) == 0) {
    atomicAdd(&sums[0], diff);
    atomicAdd(&sums[1], norm);
    atomicAdd(&sums[2], bad);
  }
}

std::string LaunchError(const char* what) {
  cudaError_t e = cudaGetLastError();
  if (e == cudaSuccess) return "";
  return std::string(what) + ": " + cudaGetErrorName(e) + ": " + cudaGetErrorString(e);
}

}  // namespace

std::string EnqueueProbe(void* stream, protocol::ClockProbe* out) {
  ProbeKernel<<<1, 1, 0, static_cast<cudaStream_t>(stream)>>>(out);
  return LaunchError("clock probe kernel");
}

std::string EnqueueGate(void* stream, volatile int* gate, uint64_t timeout_ns) {
  GateKernel<<<1, 1, 0, static_cast<cudaStream_t>(stream)>>>(gate, timeout_ns);
  return LaunchError("gate kernel");
}

std::string EnqueueErrorSums(void* stream, const void* out, const void* ref, size_t count,
                             kernels::DType dtype, double* sums) {
  auto st = static_cast<cudaStream_t>(stream);
  if (cudaError_t e = cudaMemsetAsync(sums, 0, 3 * sizeof(double), st); e != cudaSuccess)
    return std::string("zeroing the comparison's sums: ") + cudaGetErrorString(e);
  const int threads = 256;
  const int blocks = int(std::min<size_t>((count + threads - 1) / threads, 1024));
  switch (dtype) {
    case kernels::DType::kBF16:
    case kernels::DType::kFP8:  // bf16 C
      ErrorSumsKernel<<<blocks, threads, 0, st>>>(static_cast<const __nv_bfloat16*>(out),
                                                  static_cast<const __nv_bfloat16*>(ref), count,
                                                  sums);
      break;
    case kernels::DType::kFP16:
      ErrorSumsKernel<<<blocks, threads, 0, st>>>(static_cast<const __half*>(out),
                                                  static_cast<const __half*>(ref), count, sums);
      break;
    case kernels::DType::kINT8:
      ErrorSumsKernel<<<blocks, threads, 0, st>>>(static_cast<const int32_t*>(out),
                                                  static_cast<const int32_t*>(ref), count, sums);
      break;
    default:  // fp32 and tf32 write fp32
      ErrorSumsKernel<<<blocks, threads, 0, st>>>(static_cast<const float*>(out),
                                                  static_cast<const float*>(ref), count, sums);
      break;
  }
  return LaunchError("output comparison kernel");
}

}  // namespace ablation::worker
