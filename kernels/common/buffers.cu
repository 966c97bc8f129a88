#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstring>
#include <utility>

#include "kernels/common/buffers.h"
#include "kernels/common/element_values.h"

namespace ablation::kernels {
namespace {

std::string CudaError(const char* what, cudaError_t e) {
  return std::string(what) + ": " + cudaGetErrorString(e);
}

cudaStream_t AsStream(void* s) { return static_cast<cudaStream_t>(s); }

/// splitmix64 of (seed, index): element i depends only on both, on any device.
__host__ __device__ inline uint64_t Mix(uint64_t seed, uint64_t i) {
  uint64_t z = seed * 0x9E3779B97F4A7C15ull + i + 0x632BE59BD9B4E019ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/// Uniform in [-1, 1) with 24 random bits (exact in float).
__device__ inline float Uniform(uint64_t h) {
  return float(int32_t(h >> 40) - (1 << 23)) * (1.0f / float(1 << 23));
}

/// Rounds a float to tf32 (10 mantissa bits, nearest-even), so tf32 kernels see exact inputs.
__device__ inline float RoundTf32(float x) {
  uint32_t u = __float_as_uint(x);
  u += 0xFFFu + ((u >> 13) & 1u);
  return __uint_as_float(u & 0xFFFFE000u);
}

__global__ void FillKernel(void* dst, size_t count, DType dtype, uint64_t seed) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < count;
       i += size_t(gridDim.x) * blockDim.x) {
    const uint64_t h = Mix(seed, i);
    switch (dtype) {
      case DType::kBF16:
        static_cast<__nv_bfloat16*>(dst)[i] = __float2bfloat16_rn(Uniform(h));
        break;
      case DType::kFP16:
        static_cast<__half*>(dst)[i] = __float2half_rn(Uniform(h));
        break;
      case DType::kFP32:
        static_cast<float*>(dst)[i] = Uniform(h);
        break;
      case DType::kTF32:
        static_cast<float*>(dst)[i] = RoundTf32(Uniform(h));
        break;
      case DType::kINT8:
        static_cast<int8_t*>(dst)[i] = int8_t(int(h % 17) - 8);  // [-8, 8]
        break;
      case DType::kFP8:
        // [-1, 1) scaled so that its largest magnitude is e4m3's largest finite value (the
        // dequantising scales are kFp8ScaleA and kFp8ScaleB), rounded to nearest.
        static_cast<__nv_fp8_e4m3*>(dst)[i] = __nv_fp8_e4m3(Uniform(h) * 448.0f);
        break;
    }
  }
}

template <typename U>
__global__ void SetKernel(U* dst, size_t count, U value) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < count;
       i += size_t(gridDim.x) * blockDim.x) {
    dst[i] = value;
  }
}

/// 32x32 tiles through shared memory so that both the read and the write are coalesced.
template <typename U>
__global__ void TransposeKernel(const U* src, U* dst, int64_t rows, int64_t cols) {
  __shared__ U tile[32][33];
  const int64_t r0 = int64_t(blockIdx.y) * 32, c0 = int64_t(blockIdx.x) * 32;
  for (int y = threadIdx.y; y < 32; y += blockDim.y) {
    const int64_t r = r0 + y, c = c0 + threadIdx.x;
    if (r < rows && c < cols) tile[y][threadIdx.x] = src[r * cols + c];
  }
  __syncthreads();
  for (int y = threadIdx.y; y < 32; y += blockDim.y) {
    const int64_t c = c0 + y, r = r0 + threadIdx.x;  // dst is cols x rows
    if (c < cols && r < rows) dst[c * rows + r] = tile[threadIdx.x][y];
  }
}

unsigned GridFor(size_t count) {
  const size_t blocks = (count + 255) / 256;
  return unsigned(blocks < 65535 * 8 ? (blocks == 0 ? 1 : blocks) : 65535 * 8);
}

}  // namespace

DeviceBuffer::~DeviceBuffer() {
  if (ptr_ != nullptr) cudaFree(ptr_);
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& o) noexcept
    : ptr_(std::exchange(o.ptr_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& o) noexcept {
  if (this != &o) {
    if (ptr_ != nullptr) cudaFree(ptr_);
    ptr_ = std::exchange(o.ptr_, nullptr);
    bytes_ = std::exchange(o.bytes_, 0);
  }
  return *this;
}

std::string DeviceBuffer::Allocate(size_t bytes) {
  if (ptr_ != nullptr) {
    cudaFree(ptr_);
    ptr_ = nullptr;
    bytes_ = 0;
  }
  if (bytes == 0) return "";
  if (cudaError_t e = cudaMalloc(&ptr_, bytes); e != cudaSuccess) {
    ptr_ = nullptr;
    return CudaError("cudaMalloc", e);
  }
  bytes_ = bytes;
  return "";
}

std::string FillRandom(void* dst, size_t count, DType dtype, uint64_t seed, void* stream) {
  if (count == 0) return "";
  FillKernel<<<GridFor(count), 256, 0, AsStream(stream)>>>(dst, count, dtype, seed);
  if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) return CudaError("FillRandom", e);
  return "";
}

std::string Poison(void* dst, size_t count, DType dtype, void* stream) {
  if (count == 0) return "";
  const unsigned grid = GridFor(count);
  cudaStream_t s = AsStream(stream);
  switch (dtype) {
    case DType::kBF16:
    case DType::kFP8:  // bf16 C
      SetKernel<uint16_t><<<grid, 256, 0, s>>>(static_cast<uint16_t*>(dst), count, kPoisonBf16);
      break;
    case DType::kFP16:
      SetKernel<uint16_t><<<grid, 256, 0, s>>>(static_cast<uint16_t*>(dst), count, kPoisonFp16);
      break;
    case DType::kFP32:
    case DType::kTF32:
      SetKernel<uint32_t><<<grid, 256, 0, s>>>(static_cast<uint32_t*>(dst), count, kPoisonFp32);
      break;
    case DType::kINT8:
      SetKernel<int32_t><<<grid, 256, 0, s>>>(static_cast<int32_t*>(dst), count, kPoisonInt32);
      break;
  }
  if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) return CudaError("Poison", e);
  return "";
}

std::string Transpose(const void* src, void* dst, int64_t rows, int64_t cols, DType dtype,
                      void* stream) {
  if (rows <= 0 || cols <= 0) return "";
  const dim3 grid(unsigned((cols + 31) / 32), unsigned((rows + 31) / 32));
  const dim3 block(32, 8);
  cudaStream_t s = AsStream(stream);
  switch (ElementBytes(dtype)) {
    case 1:
      TransposeKernel<uint8_t><<<grid, block, 0, s>>>(static_cast<const uint8_t*>(src),
                                                      static_cast<uint8_t*>(dst), rows, cols);
      break;
    case 2:
      TransposeKernel<uint16_t><<<grid, block, 0, s>>>(static_cast<const uint16_t*>(src),
                                                       static_cast<uint16_t*>(dst), rows, cols);
      break;
    default:
      TransposeKernel<uint32_t><<<grid, block, 0, s>>>(static_cast<const uint32_t*>(src),
                                                       static_cast<uint32_t*>(dst), rows, cols);
      break;
  }
  if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) return CudaError("Transpose", e);
  return "";
}

std::string CopyToHostAsDouble(const void* src, size_t count, DType dtype, bool output,
                               std::vector<double>* out) {
  const int bytes = output ? OutputBytes(dtype) : ElementBytes(dtype);
  std::vector<uint8_t> raw(count * size_t(bytes));
  if (count != 0) {
    if (cudaError_t e = cudaMemcpy(raw.data(), src, raw.size(), cudaMemcpyDeviceToHost);
        e != cudaSuccess) {
      return CudaError("cudaMemcpy (device to host)", e);
    }
  }
  out->resize(count);
  for (size_t i = 0; i < count; ++i) {
    const uint8_t* p = raw.data() + i * size_t(bytes);
    double v = 0;
    if (dtype == DType::kFP8) {
      v = output ? Bf16BitsToDouble(uint16_t(p[0] | (p[1] << 8))) : E4m3BitsToDouble(p[0]);
    } else if (dtype == DType::kBF16 || dtype == DType::kFP16) {
      uint16_t h;
      std::memcpy(&h, p, 2);
      v = dtype == DType::kBF16 ? Bf16BitsToDouble(h) : Fp16BitsToDouble(h);
    } else if (dtype == DType::kFP32 || dtype == DType::kTF32) {
      uint32_t u;
      std::memcpy(&u, p, 4);
      v = Fp32BitsToDouble(u);
    } else if (output) {  // int8's int32 output
      int32_t x;
      std::memcpy(&x, p, 4);
      v = x;
    } else {
      v = double(*reinterpret_cast<const int8_t*>(p));
    }
    (*out)[i] = v;
  }
  return "";
}

std::string Fp8ScalePointers(const float** scale_a, const float** scale_b) {
  // One device allocation for the process, written once: the scales never change. Each scale on
  // a 256-byte boundary of its own, as separate allocations would be: cuBLASLt 13.1 refused
  // scale pointers a float apart ("the requested functionality is not supported"; H200,
  // 2026-12-02, notes/gpu-runs.md).
  constexpr size_t kApart = 256 / sizeof(float);
  static float* scales = nullptr;
  static std::string error;
  static const bool made = [] {
    void* p = nullptr;
    if (cudaError_t e = cudaMalloc(&p, 2 * kApart * sizeof(float)); e != cudaSuccess) {
      error = CudaError("cudaMalloc (fp8 scales)", e);
      return false;
    }
    float host[2 * kApart] = {};
    host[0] = kFp8ScaleA;
    host[kApart] = kFp8ScaleB;
    if (cudaError_t e = cudaMemcpy(p, host, sizeof host, cudaMemcpyHostToDevice);
        e != cudaSuccess) {
      error = CudaError("cudaMemcpy (fp8 scales)", e);
      cudaFree(p);
      return false;
    }
    scales = static_cast<float*>(p);
    return true;
  }();
  if (!made) return error;
  *scale_a = scales;
  *scale_b = scales + kApart;
  return "";
}

}  // namespace ablation::kernels
