#include "server/worker/own_fill.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

namespace ablation::worker {
namespace {

// splitmix64: a well-mixed 64-bit value of (seed, i), so that neighbouring elements and
// neighbouring seeds are unrelated.
__device__ uint64_t Mix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// In (0, 1]: never 0, so that the logarithm of Box-Muller is finite.
__device__ float Unit(uint64_t bits) { return (float(bits >> 40) + 1.0f) * (1.0f / 16777216.0f); }

template <typename T>
__device__ T Store(float v);
template <>
__device__ __nv_bfloat16 Store(float v) {
  return __float2bfloat16(v);
}
template <>
__device__ __half Store(float v) {
  return __float2half(v);
}
template <>
__device__ float Store(float v) {
  return v;
}
template <>
__device__ int8_t Store(float v) {
  return int8_t(fmaxf(-128.f, fminf(127.f, v)));
}

template <typename T>
__global__ void Fill(T* dst, int64_t count, int kind, float a, float b, uint64_t seed) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += int64_t(gridDim.x) * blockDim.x) {
    const uint64_t r = Mix(seed ^ Mix(uint64_t(i)));
    float v;
    if (kind == 0) {  // Box-Muller on two 24-bit halves of one draw
      const float u1 = Unit(r), u2 = Unit(r << 24);
      v = a + b * sqrtf(-2.0f * logf(u1)) * cospif(2.0f * u2);
    } else if (kind == 1) {
      v = a + (b - a) * (Unit(r) - 1.0f / 16777216.0f);
    } else {
      const float span = b - a + 1.0f;
      v = a + fminf(floorf(Unit(r) * span - 1e-6f), span - 1.0f);
    }
    dst[i] = Store<T>(v);
  }
}

template <typename T>
std::string Launch(void* dst, int64_t count, int kind, double a, double b, uint64_t seed,
                   void* stream) {
  const int threads = 256;
  const int64_t blocks = (count + threads - 1) / threads;
  Fill<T><<<unsigned(blocks < 65536 ? blocks : 65536), threads, 0,
            static_cast<cudaStream_t>(stream)>>>(static_cast<T*>(dst), count, kind, float(a),
                                                 float(b), seed);
  const cudaError_t e = cudaGetLastError();
  return e == cudaSuccess ? "" : std::string("filling an input: ") + cudaGetErrorString(e);
}

struct Pattern {
  uint8_t bytes[256];
};

__global__ void FillBytes(uint8_t* dst, int64_t count, Pattern p) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += int64_t(gridDim.x) * blockDim.x)
    dst[i] = p.bytes[i & 255];
}

}  // namespace

std::string FillPattern(void* dst, int64_t bytes, const uint8_t (&pattern)[256], void* stream) {
  if (bytes <= 0) return "";
  Pattern p;
  for (int i = 0; i < 256; ++i) p.bytes[i] = pattern[i];
  const int64_t blocks = (bytes + 255) / 256;
  FillBytes<<<unsigned(blocks < 65536 ? blocks : 65536), 256, 0,
              static_cast<cudaStream_t>(stream)>>>(static_cast<uint8_t*>(dst), bytes, p);
  const cudaError_t e = cudaGetLastError();
  return e == cudaSuccess ? "" : std::string("writing the canaries: ") + cudaGetErrorString(e);
}

std::string FillOwnTensor(void* dst, int64_t count, kernels::DType dtype, int kind, double a,
                          double b, uint64_t seed, void* stream) {
  if (count <= 0) return "";
  switch (dtype) {
    case kernels::DType::kBF16:
      return Launch<__nv_bfloat16>(dst, count, kind, a, b, seed, stream);
    case kernels::DType::kFP16:
      return Launch<__half>(dst, count, kind, a, b, seed, stream);
    case kernels::DType::kFP32:
      return Launch<float>(dst, count, kind, a, b, seed, stream);
    case kernels::DType::kINT8:
      return Launch<int8_t>(dst, count, kind, a, b, seed, stream);
    default:
      return "a tensor of " + std::string(kernels::ToString(dtype)) + " cannot be filled";
  }
}

}  // namespace ablation::worker
