// S1's few-row kernel (sm90_few_rows.h) and the binding of the small-shape ladder's rungs: the
// few-row path where its plan takes a problem, the base rung's launch everywhere else.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/common/ptx.cuh"
#include "kernels/registry.h"
#include "kernels/sm90/sm90_few_rows.h"
#include "kernels/sm90/sm90_launch.cuh"

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

// One mma.sync m16n8k16 (bf16 in, fp32 accumulate): d += a * b.
__device__ __forceinline__ void MmaM16N8K16(float (&d)[4], uint32_t a0, uint32_t a1, uint32_t a2,
                                            uint32_t a3, uint32_t b0, uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
      "{%8,%9}, {%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

// The 16-byte chunk at element k of row `row` of an operand with K columns, or zeros past its
// rows or past K (K is a multiple of 8, so a chunk is all in or all out).
__device__ __forceinline__ uint4 ChunkOrZero(const __nv_bfloat16* __restrict__ x, int64_t row,
                                             int64_t rows, int64_t k, int64_t K, bool stream) {
  if (row >= rows || k >= K) return make_uint4(0, 0, 0, 0);
  const uint4* at = reinterpret_cast<const uint4*>(x + row * K + k);
  return stream ? __ldcs(at) : __ldg(at);
}

// The products of one 64-wide step of K: A's rows g and g + 8 (a[row][half]) against the kTiles
// n8 tiles of B (b[tile][half]), the fragments as each lane loaded them (the permutation above).
template <int kTiles>
__device__ __forceinline__ void MmaStep(float (&acc)[kTiles][4], const uint4 (&a)[2][2],
                                        const uint4 (&b)[kTiles][2]) {
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const uint32_t* lo = reinterpret_cast<const uint32_t*>(&a[0][h]);
    const uint32_t* hi = reinterpret_cast<const uint32_t*>(&a[1][h]);
#pragma unroll
    for (int t = 0; t < 2; ++t)
#pragma unroll
      for (int j = 0; j < kTiles; ++j) {
        const uint32_t* bw = reinterpret_cast<const uint32_t*>(&b[j][h]);
        MmaM16N8K16(acc[j], lo[2 * t], hi[2 * t], lo[2 * t + 1], hi[2 * t + 1], bw[2 * t],
                    bw[2 * t + 1]);
      }
  }
}

// The block's kMmaCols columns of C: each warp's sums through shared memory, added in warp order
// (a result repeats bit for bit), C stored transposed where kTransposed.
template <bool kTransposed, int kWarps, int kTiles>
__device__ __forceinline__ void StoreBlockSums(const float (&acc)[kTiles][4],
                                               float (&partial)[kWarps][kTiles][4][32],
                                               __nv_bfloat16* __restrict__ C, int M, int N,
                                               int64_t n0) {
  constexpr int kThreads = kWarps * 32;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  // acc[j][i]: row g (i < 2) or g + 8, column 8j + 2q + (i & 1) of the block's.
#pragma unroll
  for (int j = 0; j < kTiles; ++j)
#pragma unroll
    for (int i = 0; i < 4; ++i) partial[warp][j][i][lane] = acc[j][i];
  __syncthreads();
  for (int e = threadIdx.x; e < kTiles * 4 * 32; e += kThreads) {
    const int j = e / 128, i = (e / 32) % 4, l = e % 32;
    const int row = l / 4 + (i >= 2 ? 8 : 0);
    const int64_t col = n0 + 8 * j + 2 * (l % 4) + (i & 1);
    if (row >= M || col >= N) continue;
    float v = 0.f;
#pragma unroll
    for (int w = 0; w < kWarps; ++w) v += partial[w][j][i][l];  // in warp order: deterministic
    const int64_t at = kTransposed ? col * M + row : int64_t(row) * N + col;
    C[at] = __float2bfloat16_rn(v);
  }
}

// S6's tensor-core few-row kernel: C (M x N) = A (M x K) * B^T, M <= 16, K a multiple of 8, A and
// B 16-byte aligned. A block computes the 16 rows (those past M read as zeros, never stored) of
// kMmaCols columns of C, two n8 tiles of mma.sync m16n8k16, each of its kWarps warps every
// kWarps-th 64-wide step of K. No shared memory for the operands: lane l (group g = l / 4, q = l %
// 4) loads 16 bytes at element 8q of each 32-wide half of a step, of A's rows g and g + 8 and of
// B's row g of each n8 tile, and those bytes are its fragments as they are. The fragments name the
// logical k 2q + e and 2q + 8 + e (e = 0, 1) of a k16 step t; here they hold the physical elements
// 8q + 4t + e and 8q + 4t + 2 + e of the half, the same permutation for A and B, so the sum over K
// is the product's (in another order). B's rows stream in 64-byte runs (4 lanes), read once.
// The warps' sums are added in shared memory in warp order: a result repeats bit for bit.
// kTransposed (swap-AB, called with the caller's B as A and A as B): C stored transposed.
// kWarps: the block's warps, which split K (4; S9's deeper splits 8 and 16, for grids of few
// blocks).
template <bool kTransposed, int kWarps>
__global__ void __launch_bounds__(kWarps * 32)
    Sm90FewRowsMmaKernel(const __nv_bfloat16* __restrict__ A, const __nv_bfloat16* __restrict__ B,
                         __nv_bfloat16* __restrict__ C, int M, int N, int K) {
  constexpr int kTiles = kMmaCols / 8;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, g = lane / 4, q = lane % 4;
  const int64_t n0 = int64_t(blockIdx.x) * kMmaCols;
  float acc[kTiles][4] = {};
#pragma unroll 2
  for (int64_t k0 = int64_t(warp) * 64; k0 < K; k0 += 64 * kWarps) {
    uint4 a[2][2], b[kTiles][2];  // [row g / g + 8 or tile][half]
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int64_t k = k0 + 32 * h + 8 * q;
#pragma unroll
      for (int j = 0; j < kTiles; ++j) b[j][h] = ChunkOrZero(B, n0 + 8 * j + g, N, k, K, true);
      a[0][h] = ChunkOrZero(A, g, M, k, K, false);
      a[1][h] = ChunkOrZero(A, g + 8, M, k, K, false);
    }
    MmaStep(acc, a, b);
  }
  __shared__ float partial[kWarps][kTiles][4][32];
  StoreBlockSums<kTransposed>(acc, partial, C, M, N, n0);
}

// S11's tensor-core few-row kernel: S6's (above: the same fragments, steps, sums and order) with
// B through a ring of kStages cp.async stages in dynamic shared memory, kRingStepBytes a warp and
// stage. Each warp owns its ring and each lane its own 16-byte slots of it (lane l's chunk of each
// tile and half at 16 l, so a warp's reads are 512 contiguous bytes, free of bank conflicts), so no
// barrier guards a stage: a lane waits on its own copies (cp.async.wait_group) and refills a slot
// only after the products that read it were issued. A warp waits on a step with kStages in flight
// and computes it with kStages - 1 still coming; a chunk past B's rows or past K is filled with
// zeros (src-size 0). A is read as S6 does (its 16 rows stay hot in L1 or L2), a step ahead. The
// ring's bytes then hold the warps' sums.
template <bool kTransposed, int kWarps, int kStages>
__global__ void __launch_bounds__(kWarps * 32)
    Sm90FewRowsRingKernel(const __nv_bfloat16* __restrict__ A, const __nv_bfloat16* __restrict__ B,
                          __nv_bfloat16* __restrict__ C, int M, int N, int K) {
  constexpr int kTiles = kMmaCols / 8, kSlots = kTiles * 2;  // a step's 16-byte chunks a lane
  static_assert(kSlots * 32 * 16 == kRingStepBytes, "a stage is one warp's step of B");
  static_assert(kStages >= 2 && kStages <= 8, "cp.async.wait_group takes 0..7");
  extern __shared__ __align__(16) uint4 ring[];  // [warp][stage][tile][half][lane]
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, g = lane / 4, q = lane % 4;
  const int64_t n0 = int64_t(blockIdx.x) * kMmaCols;
  constexpr int kStride = 64 * kWarps;
  const int first = warp * 64 + 8 * q;  // this lane's first k
  const int steps = K > warp * 64 ? (K - warp * 64 + kStride - 1) / kStride : 0;
  const uint32_t mine = ptx::SmemAddr(ring + warp * kStages * kSlots * 32 + lane);
  // This lane's rows of B, one an n8 tile (past N: none, nothing read).
  const __nv_bfloat16* rows[kTiles];
  bool live[kTiles];
#pragma unroll
  for (int j = 0; j < kTiles; ++j) {
    const int64_t row = n0 + 8 * j + g;
    live[j] = row < N;
    rows[j] = live[j] ? B + row * K + first : B;
  }
  auto issue = [&](int step) {  // step's B into stage step % kStages, one commit group
    if (step < steps) {
      const uint32_t stage = mine + (step % kStages) * kRingStepBytes;
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int k = step * kStride + 32 * h;  // past `first`
        const bool in = first + k < K;
#pragma unroll
        for (int j = 0; j < kTiles; ++j) {
          const bool on = in && live[j];
          ptx::CpAsyncCg16ZeroFill(stage + (j * 2 + h) * 32 * 16, on ? rows[j] + k : B,
                                   on ? 16u : 0u);
        }
      }
    }
    ptx::CpAsyncCommitGroup();  // empty past the last step: the count of groups stays in step
  };
#pragma unroll
  for (int s = 0; s < kStages - 1; ++s) issue(s);
  float acc[kTiles][4] = {};
  // A's chunks of a step, loaded a step ahead: its rows are hot in L1 or L2, not in the ring,
  // and a load issued as its products are needed would stall every step on its latency.
  auto load_a = [&](int step, uint4(&a)[2][2]) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int64_t k = first + int64_t(step) * kStride + 32 * h;
      a[0][h] = ChunkOrZero(A, g, M, k, K, false);
      a[1][h] = ChunkOrZero(A, g + 8, M, k, K, false);
    }
  };
  uint4 a[2][2];
  load_a(0, a);
  for (int step = 0; step < steps; ++step) {
    issue(step + kStages - 1);             // into the stage read a step ago, its products issued
    ptx::CpAsyncWaitGroup<kStages - 1>();  // this lane's copies of `step` have landed
    const uint4* const stage = ring + (warp * kStages + step % kStages) * kSlots * 32 + lane;
    uint4 b[kTiles][2];
#pragma unroll
    for (int h = 0; h < 2; ++h)
#pragma unroll
      for (int j = 0; j < kTiles; ++j) b[j][h] = stage[(j * 2 + h) * 32];
    MmaStep(acc, a, b);
    load_a(step + 1, a);  // in flight while the next step's B is waited on; past K: zeros
  }
  ptx::CpAsyncWaitGroup<0>();
  __syncthreads();  // every warp past its ring before the sums overwrite it
  StoreBlockSums<kTransposed>(acc, *reinterpret_cast<float(*)[kWarps][kTiles][4][32]>(ring), C, M,
                              N, n0);
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

// A few-row build: its kernel and, for a build of S11's ring, its opt-in to the ring's shared
// memory (past the default 48 KiB), once per build as the wgmma rungs opt in (ConfigureSmemOnce).
struct FewRowsBuild {
  const void* kernel = nullptr;
  cudaError_t (*allow_smem)(int64_t bytes) = nullptr;  ///< the plan's bytes (FewRowsPlan::smem)
};

template <bool kTransposed, int kWarps>
FewRowsBuild RingBuild() {
  constexpr auto kKernel = Sm90FewRowsRingKernel<kTransposed, kWarps, kRingStages>;
  return {reinterpret_cast<const void*>(kKernel), &ConfigureSmemOnce<kKernel>};
}

template <int kWarps>
FewRowsBuild FewRowsMmaBuild(bool swapped, int stages) {
  if (stages == kRingStages)
    return swapped ? RingBuild<true, kWarps>() : RingBuild<false, kWarps>();
  if (stages != 0) return {};
  return {swapped ? reinterpret_cast<const void*>(&Sm90FewRowsMmaKernel<true, kWarps>)
                  : reinterpret_cast<const void*>(&Sm90FewRowsMmaKernel<false, kWarps>)};
}

FewRowsBuild BuildOf(const FewRowsPlan& plan) {
  constexpr int kAll = kFewRowsThreads / 32;
  if (plan.mma) {
    switch (plan.split) {
      case 4:
        return FewRowsMmaBuild<4>(plan.swapped, plan.stages);
      case 8:
        return FewRowsMmaBuild<8>(plan.swapped, plan.stages);
      case 16:
        return FewRowsMmaBuild<16>(plan.swapped, plan.stages);
      default:
        return {};
    }
  }
  if (plan.split == kAll)
    return {plan.swapped ? FewRowsKernel<true, kAll>(plan.rows)
                         : FewRowsKernel<false, kAll>(plan.rows)};
  if (plan.split != 1) return {};
  return {plan.swapped ? FewRowsKernel<true, 1>(plan.rows) : FewRowsKernel<false, 1>(plan.rows)};
}

std::string LaunchFewRows(const GemmArgs& args, const FewRowsPlan& plan) {
  const Problem& p = args.problem;
  const FewRowsBuild build = BuildOf(plan);
  const void* kernel = build.kernel;
  if (kernel == nullptr)
    return "sm90 few-row path: no build of " + std::to_string(plan.rows) + " rows split " +
           std::to_string(plan.split) + " ways";
  // Swapped, the caller's M is the kernel's N: every one of the three is an int of the kernel.
  if (p.m > INT32_MAX || p.n > INT32_MAX || p.k > INT32_MAX)
    return "sm90 few-row path: M, N and K are at most 2^31 - 1";
  // Swapped: the kernel's A is the caller's B (its rows the N few ones), its B the caller's A.
  const void* a = plan.swapped ? args.b : args.a;
  const void* b = plan.swapped ? args.a : args.b;
  void* c = args.c;
  int m = int(plan.swapped ? p.n : p.m), n = int(plan.swapped ? p.m : p.n), k = int(p.k);
  void* params[] = {&a, &b, &c, &m, &n, &k};
  if (build.allow_smem != nullptr)
    if (const cudaError_t e = build.allow_smem(plan.smem); e != cudaSuccess)
      return "sm90 few-row path: " + std::to_string(plan.smem) +
             " bytes of shared memory for its ring: " + cudaGetErrorString(e);
  const cudaError_t e =
      cudaLaunchKernel(kernel, dim3(unsigned(plan.blocks)), dim3(unsigned(plan.threads)), params,
                       size_t(plan.smem), static_cast<cudaStream_t>(args.stream));
  return e == cudaSuccess ? "" : std::string("sm90 few-row path: ") + cudaGetErrorString(e);
}

}  // namespace

void BindSm90SmallRungs(Registry& registry) {
  for (const SmallRung& r : kSmallRungs) {
    Variant* v = registry.FindMutable(r.name);
    if (v == nullptr) continue;
    // The Hopper builds the rung runs where the few-row path does not, each bound before.
    std::vector<Variant> hopper;
    for (std::string_view name : {r.base, r.tile_base, r.swap_base}) {
      if (name.empty()) continue;
      const Variant* h = registry.Find(name);
      if (h == nullptr || !h->launch) break;
      hopper.push_back(*h);
    }
    if (hopper.empty() || hopper.front().name != r.base ||
        hopper.size() != size_t(1 + (r.tile_rows > 0) + (r.swap_cols > 0)))
      continue;
    auto pick = [r, hopper](const Problem& p) -> const Variant& {
      return PickHopper(r, hopper, p);
    };
    v->launch = [r, pick](const GemmArgs& args) {
      const FewRowsPlan plan = PlanFewRows(args.problem, r, reinterpret_cast<uintptr_t>(args.a),
                                           reinterpret_cast<uintptr_t>(args.b));
      return plan.runs ? LaunchFewRows(args, plan) : pick(args.problem).launch(args);
    };
    v->kernel = hopper.front().kernel;
    v->kernel_at = [r, pick](const Problem& p) -> const void* {
      // The worker's operands are 256-byte aligned: the plan at aligned addresses.
      const FewRowsPlan plan = PlanFewRows(p, r, 0, 0);
      return plan.runs ? BuildOf(plan).kernel : pick(p).KernelAt(p);
    };
  }
}

}  // namespace ablation::kernels::sm90
