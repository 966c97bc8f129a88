// A small tiled tensor-core GEMM as a user kernel (kernels/user/README.md), with a stages and a
// swizzle knob: bf16 in, fp32 accumulate, bf16 out; A is M x K, B is K x N, C is M x N, all
// row-major. One block of 8 warps (2 x 4, each a 64 x 32 tile of C) computes one 128 x 128 tile
// of C, 32 of K at a time: ldmatrix x4 brings A's fragments, ldmatrix x2.trans B's (B is stored
// K x N, the mma wants it "col"), mma.sync m16n8k16 accumulates in fp32. The manifest refuses
// shapes that are not whole tiles (M, N multiples of 128, K of 32). A, B and C must be 16-byte
// aligned (as cudaMalloc gives them).
//
// Knobs (-D macros, from the manifest):
//   STAGES   2, 3 or 4: a ring of STAGES shared-memory buffers filled by cp.async. STAGES - 1 K
//            tiles are in flight while one computes; the loop waits with
//            cp.async.wait_group<STAGES - 2> for the oldest tile, then refills the buffer the
//            previous iteration computed.
//   SWIZZLE  0: tile rows stored as they are (64-byte rows of A, 256-byte rows of B, no padding).
//            The 8 rows one ldmatrix phase reads then share bank groups: 4 of them in A (a
//            4-way conflict: rows 2 apart are 128 bytes apart), all 8 in B (8-way).
//            1: the 16-byte chunks of each row are XOR-swizzled by the row index, so the 8 rows of
//            every ldmatrix phase fall in 8 distinct bank groups (conflict-free), with no padding.
//            B (16 chunks a row): chunk c of row r is stored at c ^ (r % 8). A (4 chunks a row,
//            so two rows share one 128-byte line of banks): chunk c of row r is stored at
//            c ^ ((r / 2) % 4); rows r and r + 1 differ in which half of the line they fill.
// Every knob set computes the same sums in the same order: the outputs are bit-identical.
#include <cuda_bf16.h>

#include "ablation/ptx.cuh"

namespace {

namespace ptx = ablation::kernels::ptx;
using int64_t = long long;  // NVRTC has no <cstdint>; ablation/ptx.cuh defines uint32_t

constexpr int kBM = 128;  // block tile rows of C
constexpr int kBN = 128;  // block tile columns of C
constexpr int kBK = 32;   // K elements per tile
constexpr int kThreads = 256;
constexpr int kARowBytes = kBK * 2;                     // 64: A tile is BM rows of BK bf16
constexpr int kBRowBytes = kBN * 2;                     // 256: B tile is BK rows of BN bf16
constexpr int kATileBytes = kBM * kARowBytes;           // 8192
constexpr int kBTileBytes = kBK * kBRowBytes;           // 8192
constexpr int kStageBytes = kATileBytes + kBTileBytes;  // 16384 per stage
// The manifest's smem expression is STAGES * 16384.
static_assert(kStageBytes == 16384, "the manifest's smem expression");
static_assert(STAGES >= 2 && STAGES <= 4, "STAGES is 2, 3 or 4");
static_assert(SWIZZLE == 0 || SWIZZLE == 1, "SWIZZLE is 0 or 1");

// Byte offset of 16-byte chunk `c` of row `r` in an A tile (4 chunks a row).
__device__ __forceinline__ uint32_t AOffset(int r, int c) {
  return uint32_t(r * kARowBytes + (SWIZZLE ? c ^ ((r >> 1) & 3) : c) * 16);
}
// Byte offset of 16-byte chunk `c` of row `r` in a B tile (16 chunks a row).
__device__ __forceinline__ uint32_t BOffset(int r, int c) {
  return uint32_t(r * kBRowBytes + (SWIZZLE ? c ^ (r & 7) : c) * 16);
}

}  // namespace

// One block computes a 128 x 128 tile of C: blockIdx.x picks its columns, blockIdx.y its rows.
extern "C" __global__ void __launch_bounds__(kThreads, 2)
    mma_tiled(const __nv_bfloat16* __restrict__ A, const __nv_bfloat16* __restrict__ B,
              __nv_bfloat16* __restrict__ C, int M, int N, int K) {
  extern __shared__ __align__(128) unsigned char smem[];
  const uint32_t smem_base = ptx::SmemAddr(smem);
  const int tid = int(threadIdx.x), warp = tid >> 5, lane = tid & 31;
  const int m0 = int(blockIdx.y) * kBM, n0 = int(blockIdx.x) * kBN;

  // gmem -> smem. A tile: 128 rows of 4 chunks; thread t copies chunk t % 4 of rows t / 4 and
  // t / 4 + 64. B tile: 32 rows of 16 chunks; chunk t % 16 of rows t / 16 and t / 16 + 16. The
  // second row of each has the same swizzle as the first (64 and 16 are multiples of 8).
  const int a_row = tid >> 2, a_chunk = tid & 3;
  const int b_row = tid >> 4, b_chunk = tid & 15;
  const __nv_bfloat16* a_src = A + int64_t(m0 + a_row) * K + a_chunk * 8;
  const __nv_bfloat16* b_src = B + int64_t(b_row) * N + n0 + b_chunk * 8;
  const uint32_t a_dst = AOffset(a_row, a_chunk);
  const uint32_t b_dst = BOffset(b_row, b_chunk);
  auto load_tile = [&](int stage, int kt) {  // cp.async of K tile kt into `stage`, not committed
    const uint32_t a_tile = smem_base + uint32_t(stage * kStageBytes);
    const uint32_t b_tile = a_tile + kATileBytes;
    const __nv_bfloat16* a = a_src + kt * kBK;
    const __nv_bfloat16* b = b_src + int64_t(kt) * kBK * N;
    ptx::CpAsyncCg16(a_tile + a_dst, a);
    ptx::CpAsyncCg16(a_tile + a_dst + 64 * kARowBytes, a + int64_t(64) * K);
    ptx::CpAsyncCg16(b_tile + b_dst, b);
    ptx::CpAsyncCg16(b_tile + b_dst + 16 * kBRowBytes, b + int64_t(16) * N);
  };

  // Math: warps 2 x 4, each a 64 x 32 tile of C = 4 x 4 m16n8 tiles, two k16 steps per K tile.
  constexpr int kMmaM = 4, kMmaN = 4, kKSteps = kBK / 16;
  const int wm = (warp >> 2) * 64, wn = (warp & 3) * 32;
  // A x4: matrices (rows 0-7, k 0-7), (rows 8-15, k 0-7), (rows 0-7, k 8-15), (rows 8-15, k 8-15)
  // = a0..a3 of an m16 tile; lane l gives row l % 16 of chunk 2 * ks + l / 16. wm + 16 * mi is a
  // multiple of 16, so the swizzle of the row depends on the lane alone.
  uint32_t a_lane[kKSteps];
#pragma unroll
  for (int ks = 0; ks < kKSteps; ++ks) a_lane[ks] = AOffset(wm + (lane & 15), 2 * ks + (lane >> 4));
  // B x2.trans over [k][n]: (k 0-7) = b0, (k 8-15) = b1 of an n8 tile (chunk wn / 8 + ni); lanes
  // 0-15 give rows k 0-15 (lanes 16-31 repeat them: x2 reads only the first 16 addresses). 16 * ks
  // is a multiple of 8, so the swizzle of the row depends on the lane alone.
  uint32_t b_lane[kMmaN];
#pragma unroll
  for (int ni = 0; ni < kMmaN; ++ni) b_lane[ni] = BOffset(lane & 15, wn / 8 + ni);

  float acc[kMmaM][kMmaN][4];
#pragma unroll
  for (int mi = 0; mi < kMmaM; ++mi)
#pragma unroll
    for (int ni = 0; ni < kMmaN; ++ni)
#pragma unroll
      for (int j = 0; j < 4; ++j) acc[mi][ni][j] = 0.f;

  auto compute = [&](int stage) {
    const uint32_t a_tile = smem_base + uint32_t(stage * kStageBytes);
    const uint32_t b_tile = a_tile + kATileBytes;
#pragma unroll
    for (int ks = 0; ks < kKSteps; ++ks) {
      uint32_t fa[kMmaM][4];
      uint32_t fb[kMmaN][2];
#pragma unroll
      for (int mi = 0; mi < kMmaM; ++mi)
        ptx::LdmatrixX4(fa[mi], a_tile + a_lane[ks] + mi * 16 * kARowBytes);
#pragma unroll
      for (int ni = 0; ni < kMmaN; ++ni)
        ptx::LdmatrixX2Trans(fb[ni], b_tile + b_lane[ni] + ks * 16 * kBRowBytes);
#pragma unroll
      for (int mi = 0; mi < kMmaM; ++mi)
#pragma unroll
        for (int ni = 0; ni < kMmaN; ++ni) ptx::MmaM16N8K16Bf16(acc[mi][ni], fa[mi], fb[ni]);
    }
  };

  // The ring. Prologue: tiles 0 .. STAGES-2 into stages 0 .. STAGES-2, one commit group each
  // (an empty group where K has fewer tiles, so that group i is always tile i).
  const int k_tiles = K / kBK;
#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) {
    if (s < k_tiles) load_tile(s, s);
    ptx::CpAsyncCommitGroup();
  }
  int read_stage = 0, write_stage = STAGES - 1;
#pragma unroll 1
  for (int kt = 0; kt < k_tiles; ++kt) {
    // kt + STAGES - 1 groups are committed; at most STAGES - 2 pending means tile kt has landed
    // (this thread's chunks of it). The barrier makes every thread's chunks visible, and tells
    // that every warp is done with the stage computed in the previous iteration.
    ptx::CpAsyncWaitGroup<STAGES - 2>();
    __syncthreads();
    // Refill that stage with tile kt + STAGES - 1 while tile kt computes.
    if (kt + STAGES - 1 < k_tiles) load_tile(write_stage, kt + STAGES - 1);
    ptx::CpAsyncCommitGroup();
    compute(read_stage);
    read_stage = read_stage == STAGES - 1 ? 0 : read_stage + 1;
    write_stage = write_stage == STAGES - 1 ? 0 : write_stage + 1;
  }
  ptx::CpAsyncWaitGroup<0>();  // only empty groups are left; nothing is in flight at exit

  // C from the accumulators: c0,c1 at (g, 2t..2t+1), c2,c3 at (g+8, ...) of each m16n8 tile,
  // stored as bf16 pairs (the tile is inside C and N is even).
  const int g = lane >> 2, t = lane & 3;
#pragma unroll
  for (int mi = 0; mi < kMmaM; ++mi)
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      __nv_bfloat16* c_row = C + int64_t(m0 + wm + mi * 16 + half * 8 + g) * N;
#pragma unroll
      for (int ni = 0; ni < kMmaN; ++ni) {
        const int col = n0 + wn + ni * 8 + 2 * t;
        *reinterpret_cast<__nv_bfloat162*>(c_row + col) =
            __floats2bfloat162_rn(acc[mi][ni][2 * half], acc[mi][ni][2 * half + 1]);
      }
    }
}
