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

/// dst (rows_out x ld, ld a multiple of 8) from src (rows x cols, any alignment): row r's first
/// cols elements, then zeros; rows from `rows` on all zeros. A thread writes one 16-byte chunk
/// (8 elements) from 2-byte loads, which a misaligned or odd-length source row allows.
__global__ void PadRowsKernel(const __nv_bfloat16* __restrict__ src, int64_t rows, int64_t cols,
                              __nv_bfloat16* __restrict__ dst, int64_t rows_out, int64_t ld) {
  const int64_t chunks_per_row = ld / 8;
  const int64_t chunks = rows_out * chunks_per_row;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < chunks;
       i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t r = i / chunks_per_row, c0 = (i % chunks_per_row) * 8;
    const __nv_bfloat16* in = src + r * cols;
    alignas(16) __nv_bfloat16 v[8];
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      v[j] = r < rows && c0 + j < cols ? in[c0 + j] : __float2bfloat16(0.0f);
    }
    *reinterpret_cast<uint4*>(dst + r * ld + c0) = *reinterpret_cast<const uint4*>(v);
  }
}

/// dst (rows x cols, any alignment) from the first cols elements of each row of src (rows x ld):
/// a thread reads one 16-byte chunk and writes its elements that are inside the matrix.
__global__ void UnpadRowsKernel(const __nv_bfloat16* __restrict__ src, int64_t ld, int64_t rows,
                                int64_t cols, __nv_bfloat16* __restrict__ dst) {
  const int64_t chunks_per_row = ld / 8;
  const int64_t chunks = rows * chunks_per_row;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < chunks;
       i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t r = i / chunks_per_row, c0 = (i % chunks_per_row) * 8;
    alignas(16) __nv_bfloat16 v[8];
    *reinterpret_cast<uint4*>(v) = *reinterpret_cast<const uint4*>(src + r * ld + c0);
    __nv_bfloat16* out = dst + r * cols;
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      if (c0 + j < cols) out[c0 + j] = v[j];
    }
  }
}

/// A grid of 256-thread blocks over `chunks` 16-byte chunks, a few waves at the most (the loops
/// stride over the rest).
dim3 CopyGrid(int64_t chunks) {
  return dim3(unsigned(std::clamp<int64_t>((chunks + 255) / 256, 1, 132 * 16)));
}

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
    if (std::string e = Buffer(slot, rows_out * plan.k * 2, &buf); !e.empty()) return e;
    PadRowsKernel<<<CopyGrid(rows_out * plan.k / 8), 256, 0, stream>>>(
        static_cast<const __nv_bfloat16*>(src), rows, p.k, static_cast<__nv_bfloat16*>(buf),
        rows_out, plan.k);
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
  const int64_t chunks = p.m * plan.n / 8;
  UnpadRowsKernel<<<CopyGrid(chunks), 256, 0, static_cast<cudaStream_t>(args.stream)>>>(
      static_cast<const __nv_bfloat16*>(padded.c), plan.n, p.m, p.n,
      static_cast<__nv_bfloat16*>(args.c));
  return Launched("copying C out of its padded rows");
}

}  // namespace ablation::kernels::sm90
