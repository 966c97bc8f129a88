// S1's few-row kernel (sm90_few_rows.h) and the binding of the small-shape ladder's rungs: the
// few-row path where its plan takes a problem, the base rung's launch everywhere else.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <optional>
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
// kernel's element (r, n) at C[n * M + r]. kSplit 4: the block's 4 warps share its kCols columns
// and take every 4th chunk each (split-K), their sums added in shared memory in warp order, so a
// result repeats bit for bit.
template <int kRows, bool kTransposed, int kSplit>
__global__ void __launch_bounds__(kFewRowsThreads)
    Sm90FewRowsKernel(const __nv_bfloat16* __restrict__ A, const __nv_bfloat16* __restrict__ B,
                      __nv_bfloat16* __restrict__ C, int M, int N, int K) {
  constexpr int kCols = FewRowsCols(kRows);
  constexpr int kWarps = kFewRowsThreads / 32;
  static_assert(kSplit == 1 || kSplit == kWarps, "a block's warps split K all, or none");
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int slice = kSplit == 1 ? 0 : warp;
  const int64_t n0 =
      kSplit == 1 ? (int64_t(blockIdx.x) * kWarps + warp) * kCols : int64_t(blockIdx.x) * kCols;
  // A whole warp (kSplit 1) or block (kSplit 4) leaves: the shuffles and the barrier below see
  // every thread or none.
  if (n0 >= N) return;
  float acc[kCols][kRows];
#pragma unroll
  for (int c = 0; c < kCols; ++c)
#pragma unroll
    for (int r = 0; r < kRows; ++r) acc[c][r] = 0.f;
  const int64_t chunks = K / 8;
  const uint4* a4 = reinterpret_cast<const uint4*>(A);
  const uint4* b4 = reinterpret_cast<const uint4*>(B);
#pragma unroll 2
  for (int64_t q = lane + 32 * slice; q < chunks; q += 32 * kSplit) {
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
  const auto store = [&](int c, int r, float v) {
    if (r < M && n0 + c < N) {
      const int64_t at = kTransposed ? (n0 + c) * M + r : int64_t(r) * N + n0 + c;
      C[at] = __float2bfloat16_rn(v);
    }
  };
  __shared__ float partial[kSplit][kCols][kRows];
#pragma unroll
  for (int c = 0; c < kCols; ++c)
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
      float v = acc[c][r];
#pragma unroll
      for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
      if (lane != 0) continue;
      if constexpr (kSplit == 1) {
        store(c, r, v);
      } else {
        partial[slice][c][r] = v;
      }
    }
  if constexpr (kSplit > 1) {
    __syncthreads();
    for (int i = threadIdx.x; i < kCols * kRows; i += kFewRowsThreads) {
      const int c = i / kRows, r = i % kRows;
      float v = 0.f;
#pragma unroll
      for (int w = 0; w < kSplit; ++w) v += partial[w][c][r];  // in warp order: deterministic
      store(c, r, v);
    }
  }
}

template <bool kTransposed, int kSplit>
const void* FewRowsKernel(int rows) {
  switch (rows) {
    case 1:
      return reinterpret_cast<const void*>(&Sm90FewRowsKernel<1, kTransposed, kSplit>);
    case 2:
      return reinterpret_cast<const void*>(&Sm90FewRowsKernel<2, kTransposed, kSplit>);
    case 4:
      return reinterpret_cast<const void*>(&Sm90FewRowsKernel<4, kTransposed, kSplit>);
    case 8:
      return reinterpret_cast<const void*>(&Sm90FewRowsKernel<8, kTransposed, kSplit>);
    case 16:
      return reinterpret_cast<const void*>(&Sm90FewRowsKernel<16, kTransposed, kSplit>);
    default:
      return nullptr;
  }
}

const void* FewRowsKernel(const FewRowsPlan& plan) {
  constexpr int kAll = kFewRowsThreads / 32;
  if (plan.split == kAll)
    return plan.swapped ? FewRowsKernel<true, kAll>(plan.rows)
                        : FewRowsKernel<false, kAll>(plan.rows);
  if (plan.split != 1) return nullptr;
  return plan.swapped ? FewRowsKernel<true, 1>(plan.rows) : FewRowsKernel<false, 1>(plan.rows);
}

std::string LaunchFewRows(const GemmArgs& args, const FewRowsPlan& plan) {
  const Problem& p = args.problem;
  const void* kernel = FewRowsKernel(plan);
  if (kernel == nullptr)
    return "sm90 few-row path: no build of " + std::to_string(plan.rows) + " rows";
  // Swapped, the caller's M is the kernel's N: every one of the three is an int of the kernel.
  if (p.m > INT32_MAX || p.n > INT32_MAX || p.k > INT32_MAX)
    return "sm90 few-row path: M, N and K are at most 2^31 - 1";
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
    const Variant* tile = r.tile_rows > 0 ? registry.Find(r.tile_base) : nullptr;
    if (v == nullptr || base == nullptr || !base->launch) continue;
    if (r.tile_rows > 0 && (tile == nullptr || !tile->launch)) continue;
    // The Hopper launch of a problem the few-row path does not take (tile: null for none).
    LaunchFn base_launch = base->launch, tile_launch = tile ? tile->launch : LaunchFn{};
    v->launch = [r, base_launch, tile_launch](const GemmArgs& args) {
      const FewRowsPlan plan = PlanFewRows(args.problem, r, reinterpret_cast<uintptr_t>(args.a),
                                           reinterpret_cast<uintptr_t>(args.b));
      if (plan.runs) return LaunchFewRows(args, plan);
      return tile_launch && UsesTileBase(r, args.problem) ? tile_launch(args) : base_launch(args);
    };
    v->kernel = base->kernel;
    const Variant base_copy = *base;
    const std::optional<Variant> tile_copy = tile ? std::optional<Variant>(*tile) : std::nullopt;
    v->kernel_at = [r, base_copy, tile_copy](const Problem& p) -> const void* {
      // The worker's operands are 256-byte aligned: the plan at aligned addresses.
      const FewRowsPlan plan = PlanFewRows(p, r, 0, 0);
      if (plan.runs) return FewRowsKernel(plan);
      return tile_copy && UsesTileBase(r, p) ? tile_copy->KernelAt(p) : base_copy.KernelAt(p);
    };
  }
}

}  // namespace ablation::kernels::sm90
