// The pipelining example as a user kernel (kernels/user/README.md): software pipelining, i.e.
// double buffering, of a tiled K loop. A single-file port of the built-in fp16 pipe_ family at its
// 128x128x32 tile with 256 threads (kernels/pipe/pipe_gemm.cuh): the same Compute (mma.sync
// m16n8k16 fed by ldmatrix x4 and x4.trans), the same shared-memory layout (rows padded by 16
// bytes), the same loads and the same order of loads, barriers and math per K tile, so that its
// timings reproduce pipe_{baseline,ldg,cpasync}_f16_128x128x32.
//
// C = A * B: A is M x K, B is K x N, C is M x N, all row-major; fp16 in, fp32 accumulate, fp16
// out. One block of 8 warps (2 x 4, each a 64 x 32 tile of C) computes one 128 x 128 tile of C.
// The manifest refuses shapes that are not whole tiles (M, N multiples of 128, K of 32), so every
// tile is inside the matrices and moves in 16-byte chunks; the built-in family's ragged-edge
// paths are left out. A, B and C must be 16-byte aligned (as cudaMalloc gives them).
//
// Knobs (-D macros, from the manifest; the ladder is baseline -> ldg -> cpasync):
//   BUFFERS  1: one shared-memory buffer, nothing overlaps the load of a tile.
//            2: two buffers; tile N+1 is loaded while tile N computes (double buffering).
//   CPASYNC  0: tiles travel through registers: ld.global (LDG) then st.shared (STS).
//            1: tiles travel with cp.async (LDGSTS), straight from global to shared memory.
// The four knob sets:
//   BUFFERS=1 CPASYNC=0  baseline: LDG+STS tile N, sync, compute, sync
//   BUFFERS=2 CPASYNC=0  ldg: prologue tile 0 -> buf 0, sync; loop: LDG tile N+1 into registers,
//                        compute buf[N&1], sync, STS into buf[(N+1)&1], sync; epilogue
//   BUFFERS=2 CPASYNC=1  cpasync: prologue cp.async tile 0, commit, wait, sync; loop: cp.async
//                        tile N+1 into buf[(N+1)&1], commit, compute buf[N&1], wait_group 0,
//                        sync; epilogue
//   BUFFERS=1 CPASYNC=1  one buffer filled by cp.async: copy, commit, wait, sync, compute, sync
// The epilogue computes the last K tile, which the last main-loop iteration (or the prologue)
// loaded but no iteration computed. All four run the same Compute on the same layout in ascending
// k: their outputs are bit-identical.
#include <cuda_fp16.h>

#include "ablation/ptx.cuh"

namespace {

namespace ptx = ablation::kernels::ptx;
using int64_t = long long;  // NVRTC has no <cstdint>; ablation/ptx.cuh defines uint32_t

constexpr int kBM = 128;  // block tile rows of C
constexpr int kBN = 128;  // block tile columns of C
constexpr int kBK = 32;   // K elements per tile (one main-loop iteration)
constexpr int kThreads = 256;
constexpr int kElementBytes = 2;  // fp16
// Shared-memory rows are padded by 16 bytes: every row stride is an odd number of 16-byte units,
// so the 8 rows one ldmatrix phase reads fall in 8 distinct bank groups, and rows stay 16-byte
// aligned for cp.async and st.shared.v4.
constexpr int kRowPadBytes = 16;
constexpr int kAStride = kBK * kElementBytes + kRowPadBytes;  // 80 bytes: A is BM rows of BK
constexpr int kBStride = kBN * kElementBytes + kRowPadBytes;  // 272 bytes: B is BK rows of BN
constexpr int kATileBytes = kBM * kAStride;                   // 10240
constexpr int kBTileBytes = kBK * kBStride;                   // 8704
constexpr int kBufferBytes = kATileBytes + kBTileBytes;       // 18944 per buffer
// The manifest's smem expression is BUFFERS * 18944.
static_assert(kBufferBytes == 18944, "the manifest's smem expression");

// ---------------------------------------------------------------------------------------------
// The PTX the example needs beyond ablation/ptx.cuh (as kernels/pipe/pipe_ptx.cuh has it).

/// 16-byte st.shared.
__device__ __forceinline__ void StShared128(uint32_t smem_addr, const uint4& v) {
  asm volatile("st.shared.v4.b32 [%0], {%1, %2, %3, %4};\n" ::"r"(smem_addr), "r"(v.x), "r"(v.y),
               "r"(v.z), "r"(v.w)
               : "memory");
}

/// ldmatrix x4 .trans: four 8x8 b16 matrices, each transposed on the way (B stored K x N).
__device__ __forceinline__ void LdmatrixX4Trans(uint32_t (&r)[4], uint32_t smem_addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_addr));
}

// ---------------------------------------------------------------------------------------------
// gmem -> smem: one operand tile of kRows x kCols fp16 of a row-major matrix (leading dimension
// `ld` elements) into rows of kStride bytes. Each thread owns kPerThread 16-byte chunks in one
// chunk column, kRowsPerPass rows apart.

template <int kRows,          // tile rows
          int kCols,          // tile columns (elements)
          int kStride,        // smem row stride in bytes
          bool kAdvanceRows>  // successive K tiles are further down (B) or right (A)
struct TileLoader {
  static constexpr int kChunkElems = 16 / kElementBytes;
  static constexpr int kChunksPerRow = kCols * kElementBytes / 16;
  static constexpr int kRowsPerPass = kThreads / kChunksPerRow;
  static constexpr int kPerThread = kRows / kRowsPerPass;
  static_assert(kThreads % kChunksPerRow == 0, "a pass covers whole rows");
  static_assert(kRows % kRowsPerPass == 0 && kPerThread >= 1, "whole passes");

  const __half* src_;         // this thread's first chunk in the current tile
  const int64_t ld_;          // elements per matrix row
  const uint32_t dst_;        // its smem byte offset within a tile
  uint4 staged_[kPerThread];  // LDG path: the registers the data passes through

  __device__ __forceinline__ TileLoader(const __half* base, int ld, int tile_row, int tile_col,
                                        int tid)
      : ld_(ld), dst_(uint32_t((tid / kChunksPerRow) * kStride + (tid % kChunksPerRow) * 16)) {
    src_ = base + (int64_t(tile_row + tid / kChunksPerRow) * ld_ + tile_col +
                   (tid % kChunksPerRow) * kChunkElems);
  }

  __device__ __forceinline__ const __half* ChunkSrc(int i) const {
    return src_ + int64_t(i) * kRowsPerPass * ld_;
  }
  __device__ __forceinline__ uint32_t ChunkDst(uint32_t tile, int i) const {
    return tile + dst_ + uint32_t(i * kRowsPerPass * kStride);
  }
  /// LDG half of the register path: the current tile into staged_.
  __device__ __forceinline__ void LoadRegisters() {
#pragma unroll
    for (int i = 0; i < kPerThread; ++i) staged_[i] = *reinterpret_cast<const uint4*>(ChunkSrc(i));
  }
  /// STS half: staged_ into the tile at shared address `tile`.
  __device__ __forceinline__ void StoreRegisters(uint32_t tile) const {
#pragma unroll
    for (int i = 0; i < kPerThread; ++i) StShared128(ChunkDst(tile, i), staged_[i]);
  }
  /// cp.async path: the current tile straight into the tile at `tile` (not committed here).
  __device__ __forceinline__ void CopyAsync(uint32_t tile) const {
#pragma unroll
    for (int i = 0; i < kPerThread; ++i) ptx::CpAsyncCg16(ChunkDst(tile, i), ChunkSrc(i));
  }
  /// On to the next K tile.
  __device__ __forceinline__ void Advance() {
    if (kAdvanceRows) {
      src_ += int64_t(kBK) * ld_;
    } else {
      src_ += kBK;
    }
  }
};

// ---------------------------------------------------------------------------------------------
// Tensor-core math: warps 2 x 4, each a 64 x 32 tile of C = 4 x 4 mma tiles of m16n8. A k-step
// is k16: one ldmatrix x4 per m16 tile of A, one x4.trans per pair of n8 tiles of B, then 16 mma.

struct TensorCoreMath {
  static constexpr int kWarpsM = 2;
  static constexpr int kWarpsN = kThreads / 32 / kWarpsM;   // 4
  static constexpr int kWarpTileM = kBM / kWarpsM;          // 64
  static constexpr int kWarpTileN = kBN / kWarpsN;          // 32
  static constexpr int kMmaM = kWarpTileM / 16;             // 4
  static constexpr int kMmaN = kWarpTileN / 8;              // 4
  static constexpr int kKSteps = kBK * kElementBytes / 32;  // 2

  float acc[kMmaM][kMmaN][4];
  uint32_t a_lane_;  // byte offset of this lane's ldmatrix row in an A tile, k-step 0, m16 tile 0
  uint32_t b_lane_;  // same for B

  __device__ __forceinline__ TensorCoreMath(int tid) {
    const int warp = tid >> 5, lane = tid & 31;
    const int wm = (warp / kWarpsN) * kWarpTileM, wn = (warp % kWarpsN) * kWarpTileN;
    // A x4: matrices (rows 0-7, chunk 0), (rows 8-15, chunk 0), (rows 0-7, chunk 1), (rows 8-15,
    // chunk 1) = a0..a3 of the m16 tile; lane l gives row l % 16 of chunk l / 16.
    a_lane_ = uint32_t((wm + (lane & 15)) * kAStride + (lane >> 4) * 16);
    // B x4.trans over [k][n]: (k 0-7) = b0, (k 8-15) = b1 of n8 tile 0, then of n8 tile 1.
    b_lane_ = uint32_t((lane & 15) * kBStride + (wn / 8 + (lane >> 4)) * 16);
#pragma unroll
    for (int mi = 0; mi < kMmaM; ++mi)
#pragma unroll
      for (int ni = 0; ni < kMmaN; ++ni)
#pragma unroll
        for (int j = 0; j < 4; ++j) acc[mi][ni][j] = 0.f;
  }

  /// All k-steps of one K tile held in the buffer at shared addresses (a_tile, b_tile).
  __device__ __forceinline__ void Compute(uint32_t a_tile, uint32_t b_tile) {
#pragma unroll
    for (int ks = 0; ks < kKSteps; ++ks) {
      uint32_t fa[kMmaM][4];
      uint32_t fb[kMmaN][2];
#pragma unroll
      for (int mi = 0; mi < kMmaM; ++mi) {
        ptx::LdmatrixX4(fa[mi], a_tile + a_lane_ + mi * 16 * kAStride + ks * 32);
      }
#pragma unroll
      for (int nj = 0; nj < kMmaN / 2; ++nj) {
        uint32_t r[4];
        LdmatrixX4Trans(r, b_tile + b_lane_ + ks * 16 * kBStride + nj * 32);
        fb[2 * nj][0] = r[0], fb[2 * nj][1] = r[1];
        fb[2 * nj + 1][0] = r[2], fb[2 * nj + 1][1] = r[3];
      }
#pragma unroll
      for (int mi = 0; mi < kMmaM; ++mi)
#pragma unroll
        for (int ni = 0; ni < kMmaN; ++ni) ptx::MmaM16N8K16F16(acc[mi][ni], fa[mi], fb[ni]);
    }
  }

  /// C from the accumulators: c0,c1 at (g, 2t..2t+1), c2,c3 at (g+8, ...) of each m16n8 tile,
  /// stored as fp16 pairs (the tile is inside C and N is even).
  __device__ __forceinline__ void Store(__half* C, int N, int m0, int n0, int tid) const {
    const int warp = tid >> 5, lane = tid & 31;
    const int g = lane >> 2, t = lane & 3;
    const int wm = m0 + (warp / kWarpsN) * kWarpTileM, wn = n0 + (warp % kWarpsN) * kWarpTileN;
#pragma unroll
    for (int mi = 0; mi < kMmaM; ++mi)
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        const int row = wm + mi * 16 + half * 8 + g;
        __half* c_row = C + int64_t(row) * N;
#pragma unroll
        for (int ni = 0; ni < kMmaN; ++ni) {
          const int col = wn + ni * 8 + 2 * t;
          *reinterpret_cast<__half2*>(c_row + col) =
              __floats2half2_rn(acc[mi][ni][2 * half], acc[mi][ni][2 * half + 1]);
        }
      }
  }
};

/// The C tile of this block: grouped rasterization of the linear block index (8 tile rows per
/// group, column by column within a group, so concurrently running blocks share rows of A and
/// columns of B in L2), as every tiled family of the built-in library orders its tiles.
__device__ __forceinline__ int2 BlockOrigin(int M, int N) {
  constexpr int kGroupM = 8;
  const int tiles_m = M / kBM, tiles_n = N / kBN;
  const int bid = int(blockIdx.x);
  const int per_group = kGroupM * tiles_n;
  const int first_m = (bid / per_group) * kGroupM;
  const int group_rows = min(tiles_m - first_m, kGroupM);
  const int in_group = bid % per_group;
  return make_int2((first_m + in_group % group_rows) * kBM, (in_group / group_rows) * kBN);
}

}  // namespace

// One block computes a 128 x 128 tile of C; the grid is 1-D, (M / 128) * (N / 128) blocks. The
// launch bounds ask ptxas for 2 blocks of 256 threads per SM (at most 128 registers).
extern "C" __global__ void __launch_bounds__(kThreads, 2)
    pipe_gemm(const __half* __restrict__ A, const __half* __restrict__ B, __half* __restrict__ C,
              int M, int N, int K) {
  extern __shared__ __align__(128) unsigned char smem[];
  const uint32_t smem_base = ptx::SmemAddr(smem);
  const int tid = int(threadIdx.x);
  const int2 origin = BlockOrigin(M, N);

  // A: BM x BK tiles moving right; B: BK x BN tiles moving down.
  TileLoader<kBM, kBK, kAStride, false> a_load(A, K, origin.x, 0, tid);
  TileLoader<kBK, kBN, kBStride, true> b_load(B, N, 0, origin.y, tid);
  TensorCoreMath math(tid);

  const int k_tiles = K / kBK;
  // Byte offsets of buffer `buf`'s A and B tiles from the start of shared memory.
  auto a_tile = [](int buf) { return uint32_t(buf * kBufferBytes); };
  auto b_tile = [](int buf) { return uint32_t(buf * kBufferBytes + kATileBytes); };
  auto compute = [&](int buf) { math.Compute(smem_base + a_tile(buf), smem_base + b_tile(buf)); };
  // LDG of the loaders' current tile into their registers (the register path's first half).
  [[maybe_unused]] auto load_registers = [&] {
    a_load.LoadRegisters();
    b_load.LoadRegisters();
    a_load.Advance();
    b_load.Advance();
  };
  // STS of those registers into buffer `buf` (its second half).
  [[maybe_unused]] auto store_registers = [&](int buf) {
    a_load.StoreRegisters(smem_base + a_tile(buf));
    b_load.StoreRegisters(smem_base + b_tile(buf));
  };
  // cp.async of the loaders' current tile into buffer `buf` (not committed here).
  [[maybe_unused]] auto copy_async = [&](int buf) {
    a_load.CopyAsync(smem_base + a_tile(buf));
    b_load.CopyAsync(smem_base + b_tile(buf));
    a_load.Advance();
    b_load.Advance();
  };

#if BUFFERS == 1 && CPASYNC == 0
  // Baseline: load -> sync -> compute -> sync; only other resident blocks hide the load.
#pragma unroll 1
  for (int kt = 0; kt < k_tiles; ++kt) {
    load_registers();
    store_registers(0);
    __syncthreads();
    compute(0);
    __syncthreads();
  }
#elif BUFFERS == 1 && CPASYNC == 1
  // One buffer filled by cp.async: copy -> wait -> sync -> compute -> sync. The copy skips the
  // registers, but nothing overlaps it either.
#pragma unroll 1
  for (int kt = 0; kt < k_tiles; ++kt) {
    copy_async(0);
    ptx::CpAsyncCommitGroup();
    ptx::CpAsyncWaitGroup<0>();
    __syncthreads();
    compute(0);
    __syncthreads();
  }
#elif BUFFERS == 2 && CPASYNC == 0
  // ldg. Prologue: tile 0 into buffer 0.
  load_registers();
  store_registers(0);
  __syncthreads();
  // Main loop: tile kt+1's LDG is in flight while tile kt computes (no barrier between them).
#pragma unroll 1
  for (int kt = 0; kt < k_tiles - 1; ++kt) {
    const int cur = kt & 1;
    load_registers();
    compute(cur);
    __syncthreads();  // the first of two barriers: every warp is done reading before any STS
    store_registers(cur ^ 1);
    __syncthreads();  // tile kt+1 is visible to every warp
  }
  // Epilogue: the last tile, loaded by the last main-loop iteration (or the prologue).
  compute((k_tiles - 1) & 1);
#elif BUFFERS == 2 && CPASYNC == 1
  // cpasync. Prologue: tile 0 into buffer 0, waited for.
  copy_async(0);
  ptx::CpAsyncCommitGroup();
  ptx::CpAsyncWaitGroup<0>();
  __syncthreads();
  // ptxas hoists cp.async.wait_group (DEPBAR) above the mma of its basic block (they touch no
  // memory), so every warp would wait for tile kt+1 before computing tile kt: no overlap left. A
  // branch on a condition the compiler cannot fold (K > 0, true whenever the kernel runs) puts
  // the wait in a block of its own, after all of the tile's math.
  int k_opaque;
  asm volatile("mov.b32 %0, %1;\n" : "=r"(k_opaque) : "r"(K));
  const bool wait_after_math = k_opaque > 0;
  // Main loop: tile kt+1's cp.async is committed before tile kt computes, waited for after.
#pragma unroll 1
  for (int kt = 0; kt < k_tiles - 1; ++kt) {
    const int cur = kt & 1;
    copy_async(cur ^ 1);
    ptx::CpAsyncCommitGroup();
    compute(cur);
    if (wait_after_math) ptx::CpAsyncWaitGroup<0>();
    __syncthreads();  // tile kt+1 visible; buffer cur free for tile kt+2
  }
  // Epilogue: the last tile, copied by the last main-loop iteration (or the prologue).
  compute((k_tiles - 1) & 1);
#else
#error "BUFFERS must be 1 or 2 and CPASYNC 0 or 1"
#endif

  math.Store(C, N, origin.x, origin.y, tid);
}
