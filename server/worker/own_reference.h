// The service's own references for kernels of their own contract whose source has none
// (kernels/user/contract.h: BuiltinReference), e.g. PTX from another compiler: a row softmax, an
// RMSNorm and a row sum, one warp per row, every value read as fp64 and accumulated in fp64 so
// that the reference is nearer the exact result than any kernel it checks.
#pragma once

#include <cstdint>
#include <string>

#include "kernels/common/problem.h"
#include "kernels/user/contract.h"

namespace ablation::worker {

/// A tensor of bf16, fp16 or fp32 in device memory.
struct RefTensor {
  const void* data = nullptr;
  kernels::DType dtype = kernels::DType::kFP32;
};

/// `which` over `rows` rows of `cols` columns of `in` into `out` (rms_norm: times `weight`, with
/// `eps`), on `stream`. "" or the CUDA error.
std::string LaunchBuiltinReference(kernels::user::BuiltinReference which, RefTensor in,
                                   RefTensor out, RefTensor weight, int64_t rows, int64_t cols,
                                   double eps, void* stream);

}  // namespace ablation::worker
