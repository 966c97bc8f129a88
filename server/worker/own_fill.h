// The device fill of a kernel of its own contract's inputs (kernels/user/contract.h: Fill):
// normal, uniform or integer values of the tensor's dtype, element i a function of (seed, i) alone,
// so that a batch's fresh values are one kernel launch and the same seed gives the same tensor.
#pragma once

#include <cstdint>
#include <string>

#include "kernels/common/problem.h"

namespace ablation::worker {

/// `kind`: 0 normal (a mean, b standard deviation), 1 uniform in [a, b), 2 integers in [a, b].
/// bf16, fp16, fp32 or int8 elements. "" or the CUDA error.
std::string FillOwnTensor(void* dst, int64_t count, kernels::DType dtype, int kind, double a,
                          double b, uint64_t seed, void* stream);

/// Byte i of `dst` (of `bytes`) set to pattern[i % 256]: the canary bytes of an arena whose base
/// is 256-byte aligned (kernels/user/contract_plan.h: CanaryByte). "" or the CUDA error.
std::string FillPattern(void* dst, int64_t bytes, const uint8_t (&pattern)[256], void* stream);

}  // namespace ablation::worker
