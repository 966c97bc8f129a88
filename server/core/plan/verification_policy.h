// Which reference checks a variant's output, and the inputs a measurement is fed: defined here
// once, for Verify runs and for `run --verify` alike.
#pragma once

#include <cstdint>
#include <string>

#include "ablation/v1/ablation.pb.h"
#include "common/limits.h"
#include "kernels/registry.h"

namespace ablation::core {

/// Multiply-adds up to which the default reference is the FP64 CPU one (1024^3, as the API
/// documents); above it cuBLAS, whose error is then bounded by the dtype's tolerance.
inline constexpr double kCpuReferenceDefaultMaxWork = 1024.0 * 1024.0 * 1024.0;
using common::kCpuReferenceMaxWork;  // the CPU reference's limit, the worker's too (limits.h)

/// M*N*K as a double (no overflow for any shape a plan accepts).
double Work(const kernels::Problem& problem);

/// A reference chosen for one item: what checks it, or why nothing can.
struct ReferenceChoice {
  v1::Reference reference = v1::REFERENCE_UNSPECIFIED;  ///< unspecified: nothing can check it
  std::string variant;      ///< with REFERENCE_VARIANT: the canonical name
  std::string not_checked;  ///< when unspecified: why (a sentence without "not checked: ")
};

/// The reference for `variant` at `problem`. `asked` is what the request named; unspecified is
/// the default: the CPU up to kCpuReferenceDefaultMaxWork, above it cuBLAS of the dtype where
/// cuBLAS takes the shape (`registry` says), else the GPU reference, which takes every shape. A
/// cuBLAS variant is never checked against cuBLAS.
ReferenceChoice ChooseReference(const kernels::Variant& variant, const kernels::Problem& problem,
                                v1::Reference asked, const std::string& asked_variant,
                                const kernels::Registry* registry = nullptr);

/// The seed of the random inputs of a run's problem: reproducible from the run alone, different
/// between the problems of a run and between runs, and the same for every item of one problem
/// and for an item's verification, timing and profile. So every variant of a run is timed on the
/// same values of a problem, and the worker keeps them resident from one item to the next
/// (server/worker/README.md) instead of making them again for each.
inline uint64_t InputSeed(int64_t run_id, const kernels::Problem& problem) {
  // FNV-1a over the run and the problem's fields: each field changes the seed.
  uint64_t h = 0xcbf29ce484222325ull;
  for (uint64_t x : {uint64_t(run_id), uint64_t(problem.dtype), uint64_t(problem.m),
                     uint64_t(problem.n), uint64_t(problem.k)}) {
    h = (h ^ x) * 0x100000001b3ull;
  }
  return h;
}

}  // namespace ablation::core
