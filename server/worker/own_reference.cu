#include "server/worker/own_reference.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

namespace ablation::worker {
namespace {

using kernels::DType;
using kernels::user::BuiltinReference;

constexpr int kWarpsPerBlock = 8;

__device__ double Load(const void* p, DType t, int64_t i) {
  switch (t) {
    case DType::kBF16:
      return double(__bfloat162float(static_cast<const __nv_bfloat16*>(p)[i]));
    case DType::kFP16:
      return double(__half2float(static_cast<const __half*>(p)[i]));
    default:
      return double(static_cast<const float*>(p)[i]);
  }
}

__device__ void Store(void* p, DType t, int64_t i, double v) {
  switch (t) {
    case DType::kBF16:
      static_cast<__nv_bfloat16*>(p)[i] = __float2bfloat16_rn(float(v));
      break;
    case DType::kFP16:
      static_cast<__half*>(p)[i] = __float2half_rn(float(v));
      break;
    default:
      static_cast<float*>(p)[i] = float(v);
  }
}

__device__ double WarpSum(double v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

__device__ double WarpMax(double v) {
  for (int o = 16; o > 0; o >>= 1) v = fmax(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

// One warp per row: its lanes stride the row, fp64 throughout, a tree of shuffles at the end.
__global__ void BuiltinReferenceKernel(BuiltinReference which, RefTensor in, RefTensor out,
                                       RefTensor weight, int64_t rows, int64_t cols, double eps) {
  const int64_t row = int64_t(blockIdx.x) * kWarpsPerBlock + threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  if (row >= rows) return;
  const int64_t base = row * cols;
  if (which == BuiltinReference::kRowSum) {
    double sum = 0;
    for (int64_t c = lane; c < cols; c += 32) sum += Load(in.data, in.dtype, base + c);
    sum = WarpSum(sum);
    if (lane == 0) Store(const_cast<void*>(out.data), out.dtype, row, sum);
    return;
  }
  if (which == BuiltinReference::kRmsNorm) {
    double squares = 0;
    for (int64_t c = lane; c < cols; c += 32) {
      const double x = Load(in.data, in.dtype, base + c);
      squares += x * x;
    }
    const double scale = 1.0 / sqrt(WarpSum(squares) / double(cols) + eps);
    for (int64_t c = lane; c < cols; c += 32)
      Store(const_cast<void*>(out.data), out.dtype, base + c,
            Load(in.data, in.dtype, base + c) * scale * Load(weight.data, weight.dtype, c));
    return;
  }
  double top = -INFINITY;
  for (int64_t c = lane; c < cols; c += 32) top = fmax(top, Load(in.data, in.dtype, base + c));
  top = WarpMax(top);
  double sum = 0;
  for (int64_t c = lane; c < cols; c += 32) sum += exp(Load(in.data, in.dtype, base + c) - top);
  sum = WarpSum(sum);
  for (int64_t c = lane; c < cols; c += 32)
    Store(const_cast<void*>(out.data), out.dtype, base + c,
          exp(Load(in.data, in.dtype, base + c) - top) / sum);
}

}  // namespace

std::string LaunchBuiltinReference(BuiltinReference which, RefTensor in, RefTensor out,
                                   RefTensor weight, int64_t rows, int64_t cols, double eps,
                                   void* stream) {
  if (which == BuiltinReference::kNone) return "no built-in reference was named";
  const int64_t blocks = (rows + kWarpsPerBlock - 1) / kWarpsPerBlock;
  if (blocks > 2147483647) return "more rows than one launch of the built-in reference covers";
  BuiltinReferenceKernel<<<unsigned(blocks), kWarpsPerBlock * 32, 0,
                           static_cast<cudaStream_t>(stream)>>>(which, in, out, weight, rows, cols,
                                                                eps);
  const cudaError_t e = cudaGetLastError();
  return e == cudaSuccess
             ? ""
             : std::string("launching the built-in reference: ") + cudaGetErrorString(e);
}

}  // namespace ablation::worker
