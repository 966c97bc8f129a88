// The GPU reference GEMM (REFERENCE_GPU): a plain CUDA kernel that any shape can be checked
// against, where the FP64 CPU reference would take too long and cuBLAS may not be trusted or may
// not run the shape. Same layouts and inputs as the CPU reference (kernels/reference.h): A M x K
// row-major, B K x N row-major, C M x N row-major. Any M, N, K >= 1, no alignment requirement.
// CUDA-free header.
#pragma once

#include <string>

#include "kernels/common/problem.h"

namespace ablation::kernels {

/// The type the GPU reference writes C in, named as the dtype whose output type it is (so that
/// OutputBytes, Poison, IsPoison and CopyToHostAsDouble(output = true) describe it): fp32
/// (float) for every float input, whatever the variant's own output (bf16 and fp16 variants
/// write C rounded to their input type; the reference does not, so that only the variant's
/// rounding is in the comparison), and int8's int32 for int8.
DType GpuReferenceOutputType(DType input);

/// Enqueues C = A * B on `stream` (a cudaStream_t). Accumulation: FP32 for bf16, fp16 and tf32
/// inputs (every product exact in FP32, summed in ascending k with FMA), FP64 for fp32 inputs,
/// int32 for int8 (exact); fp8: the product of the e4m3 values in FP32 (every product exact), the
/// per-tensor scales not applied (the caller multiplies by them). Returns "" or the launch error;
/// the caller synchronises.
std::string ReferenceGemmGpu(const void* a, const void* b, void* c, const Problem& p,
                             void* stream = nullptr);

}  // namespace ablation::kernels
