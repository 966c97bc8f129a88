// What every hand-written family's launcher checks around its launch, worded once: the operands'
// alignment before it (a violated precondition would read or write out of bounds), and that the
// launch was accepted after it.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <utility>

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

/// The kernel of a family's entry for `d`: `kKernel` for the dtype it computes, none for others
/// (Variant::kernel).
template <DType kOwn, auto kKernel>
const void* OwnKernel(DType d) {
  return d == kOwn ? reinterpret_cast<const void*>(kKernel) : nullptr;
}

/// Binds a family's table of N entries: for each entry I whose variant the registry holds (the
/// catalog decides what exists), bind.template operator()<I>(variant) sets its launcher and
/// kernel (those of entry I's configuration).
template <int N, class Table, class Bind>
void BindEach(Registry& registry, const Table& table, Bind bind) {
  [&]<int... I>(std::integer_sequence<int, I...>) {
    (
        [&] {
          if (Variant* v = registry.FindMutable(table[I].name)) bind.template operator()<I>(*v);
        }(),
        ...);
  }
  (std::make_integer_sequence<int, N>{});
}

}  // namespace ablation::kernels
