// The padded operands of a shape whose rows TMA cannot address (sm90_shapes.h): the copies in and
// out, on the launch's stream, and the device buffers they use.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <cstring>

#include "kernels/registry.h"
#include "kernels/sm90/sm90_shapes.h"

namespace ablation::kernels::sm90 {
namespace {

/// dst (rows_out x ld, ld a whole number of 16-byte chunks) from src (rows x cols, any
/// alignment): row r's first cols elements, then zeros; rows from `rows` on all zeros. A block
/// copies whole rows (blocks stride over them), its threads 16-byte chunks of a row: each chunk
/// is 8 two-byte (16 one-byte) loads, which a misaligned or odd-length source row allows, and
/// one 16-byte store.
template <typename T>
__device__ __forceinline__ T Zero() {
  if constexpr (sizeof(T) == 1) {
    return T(0);
  } else {
    return __float2bfloat16(0.0f);
  }
}

/// T: the element as copied (bf16, or e4m3 as bytes: 16 per chunk).
template <typename T>
__global__ void PadRowsKernel(const T* __restrict__ src, int64_t rows, int64_t cols,
                              T* __restrict__ dst, int64_t rows_out, int64_t ld) {
  constexpr int kPer = 16 / sizeof(T);
  for (int64_t r = blockIdx.x; r < rows_out; r += gridDim.x) {
    const T* in = src + r * cols;
    for (int64_t c0 = int64_t(threadIdx.x) * kPer; c0 < ld; c0 += int64_t(blockDim.x) * kPer) {
      alignas(16) T v[kPer];
#pragma unroll
      for (int j = 0; j < kPer; ++j) v[j] = r < rows && c0 + j < cols ? in[c0 + j] : Zero<T>();
      *reinterpret_cast<uint4*>(dst + r * ld + c0) = *reinterpret_cast<const uint4*>(v);
    }
  }
}

/// dst (rows x cols, any alignment) from the first cols elements of each row of src (rows x ld).
/// A block copies whole rows, its threads one element each, so that a warp's loads and stores
/// are contiguous (a thread per 16-byte chunk writing its 8 elements one by one made 4096x4095x4096
/// 58 us, 29%, slower than 4096^3 on the H200).
__global__ void UnpadRowsKernel(const __nv_bfloat16* __restrict__ src, int64_t ld, int64_t rows,
                                int64_t cols, __nv_bfloat16* __restrict__ dst) {
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const __nv_bfloat16* in = src + r * ld;
    __nv_bfloat16* out = dst + r * cols;
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) out[c] = in[c];
  }
}

/// A grid of 256-thread blocks, one per row up to a few waves (the loops stride over the rest).
dim3 CopyGrid(int64_t rows) { return dim3(unsigned(std::clamp<int64_t>(rows, 1, 132 * 8))); }

enum Slot { kSlotA = 0, kSlotB = 1, kSlotC = 2 };

/// The padded copy of one operand: device memory kept for the process and grown when a launch
/// needs more (the worker owns one device and launches from one thread, as for the stream-K
/// workspace; a launch on another stream waits for what the previous one queued, see below).
std::string Buffer(Slot slot, int64_t bytes, void** out) {
  static std::array<void*, 3> base{};
  static std::array<int64_t, 3> have{};
  if (bytes > have[slot]) {
    // The buffer may still be read by a launch queued on another stream: free it only when the
    // device is idle.
    if (base[slot] != nullptr) {
      if (cudaError_t e = cudaDeviceSynchronize(); e != cudaSuccess) {
        return std::string("sm90 padded operands: ") + cudaGetErrorString(e);
      }
      cudaFree(base[slot]);
      base[slot] = nullptr;
      have[slot] = 0;
    }
    if (cudaError_t e = cudaMalloc(&base[slot], size_t(bytes)); e != cudaSuccess) {
      base[slot] = nullptr;
      return "sm90 padded operands: cudaMalloc of " + std::to_string(bytes) +
             " bytes: " + cudaGetErrorString(e);
    }
    have[slot] = bytes;
  }
  *out = base[slot];
  return "";
}

std::string Launched(const char* what) {
  if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) {
    return std::string("sm90 padded operands: ") + what + ": " + cudaGetErrorString(e);
  }
  return "";
}

}  // namespace

std::string PadOperands(const GemmArgs& args, const ShapePlan& plan, GemmArgs* out) {
  *out = args;
  const Problem& p = args.problem;
  auto stream = static_cast<cudaStream_t>(args.stream);
  // Operand `slot` as rows_out rows of plan.k elements from its rows x p.k at `src`.
  auto pad = [&](Slot slot, const void* src, int64_t rows, int64_t rows_out,
                 const void** dst) -> std::string {
    void* buf = nullptr;
    const int bytes = ElementBytes(p.dtype);
    if (std::string e = Buffer(slot, rows_out * plan.k * bytes, &buf); !e.empty()) return e;
    if (bytes == 1) {  // e4m3, copied as bytes (zero bytes are e4m3's +0)
      PadRowsKernel<uint8_t>
          <<<CopyGrid(rows_out), 256, 0, stream>>>(static_cast<const uint8_t*>(src), rows, p.k,
                                                   static_cast<uint8_t*>(buf), rows_out, plan.k);
    } else {
      PadRowsKernel<__nv_bfloat16><<<CopyGrid(rows_out), 256, 0, stream>>>(
          static_cast<const __nv_bfloat16*>(src), rows, p.k, static_cast<__nv_bfloat16*>(buf),
          rows_out, plan.k);
    }
    *dst = buf;
    return Launched("padding an operand");
  };
  if (plan.pad_a) {
    if (std::string e = pad(kSlotA, args.a, p.m, p.m, &out->a); !e.empty()) return e;
  }
  // B's rows past N, when the kernel's N is rounded up, are zeros.
  if (plan.pad_b) {
    if (std::string e = pad(kSlotB, args.b, p.n, plan.n, &out->b); !e.empty()) return e;
  }
  if (plan.pad_c) {
    void* buf = nullptr;
    if (std::string e = Buffer(kSlotC, p.m * plan.n * 2, &buf); !e.empty()) return e;
    out->c = buf;
  }
  out->problem.n = plan.n;
  out->problem.k = plan.k;
  return "";
}

std::string UnpadC(const GemmArgs& args, const ShapePlan& plan, const GemmArgs& padded) {
  if (!plan.pad_c) return "";
  const Problem& p = args.problem;
  UnpadRowsKernel<<<CopyGrid(p.m), 256, 0, static_cast<cudaStream_t>(args.stream)>>>(
      static_cast<const __nv_bfloat16*>(padded.c), plan.n, p.m, p.n,
      static_cast<__nv_bfloat16*>(args.c));
  return Launched("copying C out of its padded rows");
}

}  // namespace ablation::kernels::sm90
