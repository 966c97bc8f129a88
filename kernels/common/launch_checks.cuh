// What every hand-written family's launcher checks around its launch, worded once: the operands'
// alignment before it (a violated precondition would read or write out of bounds), and that the
// launch was accepted after it.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <string>

#include "kernels/registry.h"

namespace ablation::kernels {

/// "" when A, B and C are 16-byte aligned, else "<family> kernel: A, B and C must be 16-byte
/// aligned".
inline std::string CheckAligned16(const GemmArgs& args, const char* family) {
  const auto misaligned = [](const void* ptr) {
    return (reinterpret_cast<uintptr_t>(ptr) & 15) != 0;
  };
  if (misaligned(args.a) || misaligned(args.b) || misaligned(args.c))
    return std::string(family) + " kernel: A, B and C must be 16-byte aligned";
  return "";
}

/// "" when the last launch was accepted, else "<family> kernel launch: <CUDA's words>".
inline std::string LaunchError(const char* family) {
  if (cudaError_t e = cudaGetLastError(); e != cudaSuccess)
    return std::string(family) + " kernel launch: " + cudaGetErrorString(e);
  return "";
}

}  // namespace ablation::kernels
