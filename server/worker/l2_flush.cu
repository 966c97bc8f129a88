#include "server/worker/l2_flush.h"

#include <algorithm>
#include <cstdint>

#include <cuda_runtime.h>

namespace ablation::worker {
namespace {

constexpr size_t kLine = 128;  // discard.global.L2 takes exactly one 128-byte line

__global__ void DiscardLines(char* base, size_t lines) {
  const size_t stride = size_t(gridDim.x) * blockDim.x;
  for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < lines; i += stride) {
    asm volatile("discard.global.L2 [%0], 128;" ::"l"(base + i * kLine) : "memory");
  }
}

// "" where the discard can cover `buffer` line by line, else why not.
std::string Misaligned(const void* buffer) {
  return reinterpret_cast<uintptr_t>(buffer) % kLine == 0
             ? ""
             : "the L2 flush buffer is not 128-byte aligned";
}

std::string Error(const char* what, cudaError_t e) {
  return std::string(what) + ": " + cudaGetErrorString(e);
}

}  // namespace

std::string EnqueueL2Discard(void* stream, void* buffer, size_t bytes) {
  if (buffer == nullptr || bytes < kLine) return "";
  if (std::string why = Misaligned(buffer); !why.empty()) return why;
  const size_t lines = bytes / kLine;
  // A thread per line up to 1,024 blocks of 256, grid-stride beyond (a 100 MB buffer: 3 lines a
  // thread), one instruction a line.
  const size_t blocks = std::min<size_t>((lines + 255) / 256, 1024);
  DiscardLines<<<unsigned(blocks), 256, 0, static_cast<cudaStream_t>(stream)>>>(
      static_cast<char*>(buffer), lines);
  if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) return Error("L2 discard", e);
  return "";
}

std::string EnqueueL2Flush(void* stream, void* buffer, size_t bytes, unsigned value) {
  // Checked before the writes: a flush that cannot discard is refused whole, not half done.
  if (std::string why = Misaligned(buffer); !why.empty()) return why;
  if (cudaError_t e =
          cudaMemsetAsync(buffer, int(value & 0xffu), bytes, static_cast<cudaStream_t>(stream));
      e != cudaSuccess) {
    return Error("L2 flush", e);
  }
  return EnqueueL2Discard(stream, buffer, bytes);
}

}  // namespace ablation::worker
