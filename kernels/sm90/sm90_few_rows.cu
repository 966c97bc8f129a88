// S1's few-row kernel (sm90_few_rows.h) and the binding of the small-shape ladder's rungs: the
// few-row path where its plan takes a problem, the base rung's launch everywhere else.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <string>

#include "kernels/registry.h"
#include "kernels/sm90/sm90_few_rows.h"

namespace ablation::kernels::sm90 {
namespace {

// The eight bf16 of a 16-byte chunk as four pairs, multiplied in fp32.
__device__ __forceinline__ float Dot8(const uint4& x, const uint4& y) {
  const __nv_bfloat162* a = reinterpret_cast<const __nv_bfloat162*>(&x);
  const __nv_bfloat162* b = reinterpret_cast<const __nv_bfloat162*>(&y);
  float s = 0.f;
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const float2 fa = __bfloat1622float2(a[i]), fb = __bfloat1622float2(b[i]);
    s = fmaf(fa.x, fb.x, s);
    s = fmaf(fa.y, fb.y, s);
  }
  return s;
}

// C (M x N) = A (M x K) * B^T, B N x K, M <= kRows, K a multiple of 8, A and B 16-byte aligned.
// Warp w computes columns [w * kCols, w * kCols + kCols) of every row; lane l reads the 16-byte
// chunks l, l + 32, ... of each row, so a warp's loads of one row are 512 contiguous bytes.
// kTransposed (swap-AB: called with the caller's B as A and A as B): C is stored transposed, the
// kernel's element (r, n) at C[n * M + r].
template <int kRows, bool kTransposed>
__global__ void __launch_bounds__(kFewRowsThreads)
    Sm90FewRowsKernel(const __nv_bfloat16* __restrict__ A, const __nv_bfloat16* __restrict__ B,
                      __nv_bfloat16* __restrict__ C, int M, int N, int K) {
  constexpr int kCols = FewRowsCols(kRows);
  const int lane = threadIdx.x % 32;
  const int64_t n0 = (int64_t(blockIdx.x) * (kFewRowsThreads / 32) + threadIdx.x / 32) * kCols;
  if (n0 >= N) return;  // a whole warp: the shuffles below see every lane or none
  float acc[kCols][kRows];
#pragma unroll
  for (int c = 0; c < kCols; ++c)
#pragma unroll
    for (int r = 0; r < kRows; ++r) acc[c][r] = 0.f;
  const int64_t chunks = K / 8;
  const uint4* a4 = reinterpret_cast<const uint4*>(A);
  const uint4* b4 = reinterpret_cast<const uint4*>(B);
#pragma unroll 2
  for (int64_t q = lane; q < chunks; q += 32) {
    uint4 b[kCols];
#pragma unroll
    for (int c = 0; c < kCols; ++c)
      b[c] = n0 + c < N ? __ldcs(b4 + (n0 + c) * chunks + q) : make_uint4(0, 0, 0, 0);
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
      if (r >= M) break;
      const uint4 a = __ldg(a4 + int64_t(r) * chunks + q);
#pragma unroll
      for (int c = 0; c < kCols; ++c) acc[c][r] += Dot8(a, b[c]);
    }
  }
#pragma unroll
  for (int c = 0; c < kCols; ++c)
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
      float v = acc[c][r];
#pragma unroll
      for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
      if (lane == 0 && r < M && n0 + c < N) {
        const int64_t at = kTransposed ? (n0 + c) * M + r : int64_t(r) * N + n0 + c;
        C[at] = __float2bfloat16_rn(v);
      }
    }
}

template <bool kTransposed>
const void* FewRowsKernel(int rows) {
  switch (rows) {
    case 1:
      return reinterpret_cast<const void*>(&Sm90FewRowsKernel<1, kTransposed>);
    case 2:
      return reinterpret_cast<const void*>(&Sm90FewRowsKernel<2, kTransposed>);
    case 4:
      return reinterpret_cast<const void*>(&Sm90FewRowsKernel<4, kTransposed>);
    case 8:
      return reinterpret_cast<const void*>(&Sm90FewRowsKernel<8, kTransposed>);
    case 16:
      return reinterpret_cast<const void*>(&Sm90FewRowsKernel<16, kTransposed>);
    default:
      return nullptr;
  }
}

const void* FewRowsKernel(const FewRowsPlan& plan) {
  return plan.swapped ? FewRowsKernel<true>(plan.rows) : FewRowsKernel<false>(plan.rows);
}

std::string LaunchFewRows(const GemmArgs& args, const FewRowsPlan& plan) {
  const Problem& p = args.problem;
  const void* kernel = FewRowsKernel(plan);
  if (kernel == nullptr)
    return "sm90 few-row path: no build of " + std::to_string(plan.rows) + " rows";
  if (p.n > INT32_MAX || p.k > INT32_MAX) return "sm90 few-row path: N and K are at most 2^31 - 1";
  // Swapped: the kernel's A is the caller's B (its rows the N few ones), its B the caller's A.
  const void* a = plan.swapped ? args.b : args.a;
  const void* b = plan.swapped ? args.a : args.b;
  void* c = args.c;
  int m = int(plan.swapped ? p.n : p.m), n = int(plan.swapped ? p.m : p.n), k = int(p.k);
  void* params[] = {&a, &b, &c, &m, &n, &k};
  const cudaError_t e = cudaLaunchKernel(kernel, dim3(unsigned(plan.blocks)), dim3(kFewRowsThreads),
                                         params, 0, static_cast<cudaStream_t>(args.stream));
  return e == cudaSuccess ? "" : std::string("sm90 few-row path: ") + cudaGetErrorString(e);
}

}  // namespace

void BindSm90SmallRungs(Registry& registry) {
  for (const SmallRung& r : kSmallRungs) {
    Variant* v = registry.FindMutable(r.name);
    const Variant* base = registry.Find(r.base);
    if (v == nullptr || base == nullptr || !base->launch) continue;
    const int few_rows = r.few_rows, few_cols = r.few_cols;
    LaunchFn base_launch = base->launch;
    v->launch = [few_rows, few_cols, base_launch](const GemmArgs& args) {
      const FewRowsPlan plan =
          PlanFewRows(args.problem, few_rows, reinterpret_cast<uintptr_t>(args.a),
                      reinterpret_cast<uintptr_t>(args.b), few_cols);
      return plan.runs ? LaunchFewRows(args, plan) : base_launch(args);
    };
    v->kernel = base->kernel;
    const Variant base_copy = *base;
    v->kernel_at = [few_rows, few_cols, base_copy](const Problem& p) -> const void* {
      // The worker's operands are 256-byte aligned: the plan at aligned addresses.
      const FewRowsPlan plan = PlanFewRows(p, few_rows, 0, 0, few_cols);
      return plan.runs ? FewRowsKernel(plan) : base_copy.KernelAt(p);
    };
  }
}

}  // namespace ablation::kernels::sm90
