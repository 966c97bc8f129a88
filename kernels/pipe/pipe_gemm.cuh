// The pipe_ GEMM: one tiled kernel per data type, tile sizes as template
// parameters, and three ways to bring in the next K tile (Pipeline):
//   baseline  load (LDG+STS) -> sync -> compute -> sync, one buffer
//   ldg       prologue: tile 0 -> buf 0, sync; loop: LDG tile N+1 into registers, compute buf[N&1],
//             sync, STS into buf[(N+1)&1], sync; epilogue: compute the last tile
//   cpasync   prologue: cp.async tile 0, commit, wait, sync; loop: cp.async tile N+1 into
//             buf[(N+1)&1], commit, compute buf[N&1], wait_group 0, sync; epilogue: the last tile
// C = A * B: A M x K row-major; B K x N row-major (fp16, fp32) or N x K row-major (int8, whose
// mma wants B "col"); C M x N row-major: fp16 (fp32 accumulate, HMMA m16n8k16), int32 (int8 IMMA
// m16n8k32), fp32 (FFMA).
//
// The three pipelines of one type and tile run the same Compute on the same shared-memory layout:
// every accumulator sees the same operations in ascending k, so their outputs are bit-identical
// and their HMMA/IMMA/FFMA count per main-loop iteration is equal (one K tile per iteration).
//
// Ragged shapes: M, N, K need not be tile multiples. A tile that lies inside the matrix, of a
// matrix whose rows are 16-byte aligned, is copied in 16-byte chunks; any other tile (the edges of
// M, N and K, or every tile of a matrix whose leading dimension is not a multiple of 16 bytes)
// takes the checked path per chunk: cp.async with src-size (zero-fill) where the chunk start is
// aligned, else element loads with bounds checks, zero-filled, stored with st.shared (cp.async
// needs a valid, aligned source, so an edge tile must not copy blindly past the matrix). Zeros in
// A's or B's padding K columns add nothing to any accumulator.
#pragma once

#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

#include "kernels/common/ptx.cuh"
#include "kernels/common/raster.cuh"
#include "kernels/pipe/pipe_config.h"
#include "kernels/pipe/pipe_ptx.cuh"

namespace ablation::kernels::pipe {

/// Element types of a dtype: In for A and B, Out for C.
template <DType D>
struct Types;
template <>
struct Types<DType::kFP16> {
  using In = __half;
  using Out = __half;
};
template <>
struct Types<DType::kINT8> {
  using In = int8_t;
  using Out = int32_t;
};
template <>
struct Types<DType::kFP32> {
  using In = float;
  using Out = float;
};

/// One instance: pipeline, type and block tile.
template <Pipeline Pipeline_,  /// how tile N+1 travels while tile N computes
          DType DType_,        /// fp16 (HMMA), int8 (IMMA) or fp32 (FFMA)
          int BM_,             /// block tile rows of C
          int BN_,             /// block tile columns of C
          int BK_,             /// K elements per tile (one main-loop iteration)
          int Threads_>        /// threads per block
struct Config {
  static constexpr Pipeline kPipeline = Pipeline_;
  static constexpr DType kDType = DType_;
  static constexpr PipeTile kTile{DType_, BM_, BN_, BK_, Threads_};
  static constexpr int kBM = BM_;
  static constexpr int kBN = BN_;
  static constexpr int kBK = BK_;
  static constexpr int kThreads = Threads_;
  using In = typename Types<DType_>::In;
  using Out = typename Types<DType_>::Out;
  static constexpr int kElementBytes = InputBytes(DType_);
  static constexpr bool kBIsNK = BIsNK(DType_);
  static constexpr int kAStride = AStrideBytes(kTile);
  static constexpr int kBStride = BStrideBytes(kTile);
  static constexpr int kATileBytes = ATileBytes(kTile);
  static constexpr int kBufferBytes = BufferBytes(kTile);
  static constexpr int kSmemBytes = SmemBytes(Pipeline_, kTile);
  /// Blocks per SM that __launch_bounds__ asks ptxas to fit: a 128-register budget (16 warps per
  /// SM), except FP32's 8x8 thread tile (64 accumulators + 32 staging + 40 fragment registers),
  /// which gets the whole 255. Stated explicitly because with the block size alone ptxas 13 aimed
  /// the 128-thread int8 baseline at 64 registers on sm_80 and spilled.
  static constexpr int kMinBlocks =
      (DType_ == DType::kFP32 && BM_ * BN_ >= 128 * 128) ? 1 : 512 / Threads_;
  static_assert(sizeof(In) == kElementBytes, "element size");
  static_assert(kThreads % 32 == 0, "whole warps");
};

// ---------------------------------------------------------------------------------------------
// gmem -> smem: one operand tile of kRows x kCols elements of a row-major matrix (leading
// dimension = its column count) into rows of kStride bytes. Each thread owns kPerThread 16-byte
// chunks in one chunk column, kRowsPerPass rows apart.

template <class Cfg,
          int kRows_,          /// tile rows
          int kCols_,          /// tile columns (elements)
          int kStride_,        /// smem row stride in bytes
          bool kAdvanceRows_>  /// successive K tiles are further down (true) or right (false)
struct TileLoader {
  using In = typename Cfg::In;
  static constexpr int kEb = Cfg::kElementBytes;
  static constexpr int kChunkElems = 16 / kEb;
  static constexpr int kChunksPerRow = kCols_ * kEb / 16;
  static constexpr int kRowsPerPass = Cfg::kThreads / kChunksPerRow;
  static constexpr int kPerThread = kRows_ / kRowsPerPass;
  static_assert(kCols_ * kEb % 16 == 0, "tile rows are whole 16-byte chunks");
  static_assert(Cfg::kThreads % kChunksPerRow == 0, "a pass covers whole rows");
  static_assert(kRows_ % kRowsPerPass == 0 && kPerThread >= 1, "whole passes");

  const In* const base_;  // the matrix
  const In* src_;         // this thread's first chunk in the current tile
  const int64_t ld_;      // elements per matrix row
  const int rows_, cols_;
  int tile_row_, tile_col_;   // matrix coordinates of the current tile's origin (block-uniform)
  const int r_, c_;           // this thread's first chunk: tile row, chunk column
  const uint32_t dst_;        // its smem byte offset within a tile
  const bool aligned_;        // every row start is 16-byte aligned
  uint4 staged_[kPerThread];  // LDG path: the registers the data passes through

  __device__ __forceinline__ TileLoader(const In* base, int rows, int cols, int tile_row,
                                        int tile_col, int tid)
      : base_(base),
        ld_(cols),
        rows_(rows),
        cols_(cols),
        tile_row_(tile_row),
        tile_col_(tile_col),
        r_(tid / kChunksPerRow),
        c_(tid % kChunksPerRow),
        dst_(uint32_t(r_ * kStride_ + c_ * 16)),
        aligned_((reinterpret_cast<uintptr_t>(base) & 15) == 0 && (int64_t(cols) * kEb) % 16 == 0) {
    src_ = base + (int64_t(tile_row + r_) * ld_ + tile_col + c_ * kChunkElems);
  }

  /// Block-uniform: the whole tile is inside the matrix and its rows are 16-byte aligned.
  __device__ __forceinline__ bool Interior() const {
    return aligned_ && tile_row_ + kRows_ <= rows_ && tile_col_ + kCols_ <= cols_;
  }
  __device__ __forceinline__ const In* ChunkSrc(int i) const {
    return src_ + int64_t(i) * kRowsPerPass * ld_;
  }
  __device__ __forceinline__ uint32_t ChunkDst(uint32_t tile, int i) const {
    return tile + dst_ + uint32_t(i * kRowsPerPass * kStride_);
  }
  /// Elements of chunk i inside the matrix (0..kChunkElems); they are its leading elements.
  __device__ __forceinline__ int ValidElems(int i) const {
    const int row = tile_row_ + r_ + i * kRowsPerPass;
    const int col = tile_col_ + c_ * kChunkElems;
    if (row >= rows_ || col >= cols_) return 0;
    return min(cols_ - col, kChunkElems);
  }
  static __device__ __forceinline__ uint32_t ElementBits(const In* p) {
    if constexpr (kEb == 1) return uint32_t(*reinterpret_cast<const uint8_t*>(p));
    if constexpr (kEb == 2) return uint32_t(*reinterpret_cast<const uint16_t*>(p));
    if constexpr (kEb == 4) return *reinterpret_cast<const uint32_t*>(p);
  }
  /// Edge chunk: 16-byte load where whole and aligned, else element loads, zeros outside.
  __device__ __forceinline__ uint4 LoadChecked(int i) const {
    const int valid = ValidElems(i);
    const In* p = ChunkSrc(i);
    if (aligned_ && valid == kChunkElems) return *reinterpret_cast<const uint4*>(p);
    uint32_t w[4] = {0, 0, 0, 0};
#pragma unroll
    for (int e = 0; e < kChunkElems; ++e) {
      if (e < valid) w[(e * kEb) / 4] |= ElementBits(p + e) << (8 * ((e * kEb) % 4));
    }
    return make_uint4(w[0], w[1], w[2], w[3]);
  }

  /// LDG half of the register path: the current tile into staged_.
  __device__ __forceinline__ void LoadRegisters() {
    if (Interior()) {
#pragma unroll
      for (int i = 0; i < kPerThread; ++i)
        staged_[i] = *reinterpret_cast<const uint4*>(ChunkSrc(i));
    } else {
#pragma unroll
      for (int i = 0; i < kPerThread; ++i) staged_[i] = LoadChecked(i);
    }
  }
  /// STS half: staged_ into the tile at shared address `tile`.
  __device__ __forceinline__ void StoreRegisters(uint32_t tile) const {
#pragma unroll
    for (int i = 0; i < kPerThread; ++i) ptx::StShared128(ChunkDst(tile, i), staged_[i]);
  }
  /// cp.async path: the current tile straight into the tile at `tile` (not committed here).
  __device__ __forceinline__ void CopyAsync(uint32_t tile) const {
    if (Interior()) {
#pragma unroll
      for (int i = 0; i < kPerThread; ++i)
        kernels::ptx::CpAsyncCg16(ChunkDst(tile, i), ChunkSrc(i));
    } else if (aligned_) {
      // Zero-fill form: reads only the valid leading bytes of each chunk.
#pragma unroll
      for (int i = 0; i < kPerThread; ++i) {
        const int valid = ValidElems(i);
        ptx::CpAsyncCg16ZeroFill(ChunkDst(tile, i), valid > 0 ? ChunkSrc(i) : base_,
                                 uint32_t(valid * kEb));
      }
    } else {
      // Rows not 16-byte aligned: cp.async cannot take the chunk; synchronous checked loads.
#pragma unroll
      for (int i = 0; i < kPerThread; ++i) ptx::StShared128(ChunkDst(tile, i), LoadChecked(i));
    }
  }
  /// On to the next K tile.
  __device__ __forceinline__ void Advance() {
    if constexpr (kAdvanceRows_) {
      tile_row_ += Cfg::kBK;
      src_ += int64_t(Cfg::kBK) * ld_;
    } else {
      tile_col_ += Cfg::kBK;
      src_ += Cfg::kBK;
    }
  }
};

// ---------------------------------------------------------------------------------------------
// Tensor-core math (fp16 HMMA, int8 IMMA). Warps 2 x (warps/2), each a 16*kMmaM x 8*kMmaN tile.
// A k-step is 32 bytes of K (k16 fp16, k32 int8): one ldmatrix x4 per m16 tile of A, one x4 per
// pair of n8 tiles of B (x4.trans for fp16's K x N B), then kMmaM * kMmaN mma.

template <class Cfg>
struct TensorCoreMath {
  static constexpr int kWarps = Cfg::kThreads / 32;
  static constexpr int kWarpsM = 2;
  static constexpr int kWarpsN = kWarps / kWarpsM;
  static constexpr int kWarpTileM = Cfg::kBM / kWarpsM;
  static constexpr int kWarpTileN = Cfg::kBN / kWarpsN;
  static constexpr int kMmaM = kWarpTileM / 16;
  static constexpr int kMmaN = kWarpTileN / 8;
  static constexpr int kKSteps = Cfg::kBK * Cfg::kElementBytes / 32;
  static constexpr bool kInt = Cfg::kDType == DType::kINT8;
  using Acc = std::conditional_t<kInt, int32_t, float>;
  static_assert(kWarps % kWarpsM == 0 && kMmaM >= 1 && kMmaN % 2 == 0 && kKSteps >= 1,
                "tile does not split into m16n8 mma tiles");
  static_assert(Cfg::kBK * Cfg::kElementBytes % 32 == 0, "BK is whole k-steps");

  Acc acc[kMmaM][kMmaN][4];
  uint32_t a_lane_;  // byte offset of this lane's ldmatrix row in an A tile, k-step 0, m16 tile 0
  uint32_t b_lane_;  // same for B

  __device__ __forceinline__ TensorCoreMath(int tid) {
    const int warp = tid >> 5, lane = tid & 31;
    const int wm = (warp / kWarpsN) * kWarpTileM, wn = (warp % kWarpsN) * kWarpTileN;
    // A x4: matrices (rows 0-7, chunk 0), (rows 8-15, chunk 0), (rows 0-7, chunk 1), (rows 8-15,
    // chunk 1) = a0..a3 of the m16 tile; lane l gives row l % 16 of chunk l / 16.
    a_lane_ = uint32_t((wm + (lane & 15)) * Cfg::kAStride + (lane >> 4) * 16);
    if constexpr (Cfg::kBIsNK) {
      // B x4 over [n][k]: (n 0-7, chunk 0) = b0, (n 0-7, chunk 1) = b1 of n8 tile 0, then the
      // same for n 8-15 (n8 tile 1).
      b_lane_ =
          uint32_t((wn + (lane & 7) + ((lane >> 4) << 3)) * Cfg::kBStride + ((lane >> 3) & 1) * 16);
    } else {
      // B x4.trans over [k][n]: (k 0-7) = b0, (k 8-15) = b1 of n8 tile 0, then of n8 tile 1.
      b_lane_ = uint32_t((lane & 15) * Cfg::kBStride + (wn / 8 + (lane >> 4)) * 16);
    }
#pragma unroll
    for (int mi = 0; mi < kMmaM; ++mi)
#pragma unroll
      for (int ni = 0; ni < kMmaN; ++ni)
#pragma unroll
        for (int j = 0; j < 4; ++j) acc[mi][ni][j] = Acc(0);
  }

  /// All k-steps of one K tile held in the buffer at shared addresses (a_tile, b_tile).
  __device__ __forceinline__ void Compute(uint32_t a_tile, uint32_t b_tile) {
#pragma unroll
    for (int ks = 0; ks < kKSteps; ++ks) {
      uint32_t fa[kMmaM][4];
      uint32_t fb[kMmaN][2];
#pragma unroll
      for (int mi = 0; mi < kMmaM; ++mi) {
        kernels::ptx::LdmatrixX4(fa[mi], a_tile + a_lane_ + mi * 16 * Cfg::kAStride + ks * 32);
      }
#pragma unroll
      for (int nj = 0; nj < kMmaN / 2; ++nj) {
        uint32_t r[4];
        if constexpr (Cfg::kBIsNK) {
          kernels::ptx::LdmatrixX4(r, b_tile + b_lane_ + nj * 16 * Cfg::kBStride + ks * 32);
        } else {
          ptx::LdmatrixX4Trans(r, b_tile + b_lane_ + ks * 16 * Cfg::kBStride + nj * 32);
        }
        fb[2 * nj][0] = r[0], fb[2 * nj][1] = r[1];
        fb[2 * nj + 1][0] = r[2], fb[2 * nj + 1][1] = r[3];
      }
#pragma unroll
      for (int mi = 0; mi < kMmaM; ++mi)
#pragma unroll
        for (int ni = 0; ni < kMmaN; ++ni) {
          if constexpr (kInt) {
            ptx::MmaM16N8K32S8(acc[mi][ni], fa[mi], fb[ni]);
          } else {
            kernels::ptx::MmaM16N8K16F16(acc[mi][ni], fa[mi], fb[ni]);
          }
        }
    }
  }

  /// C from the accumulators: c0,c1 at (g, 2t..2t+1), c2,c3 at (g+8, ...) of each m16n8 tile.
  /// Pairs are stored whole where both columns are inside and aligned, else element by element.
  __device__ __forceinline__ void Store(typename Cfg::Out* C, int M, int N, int m0, int n0,
                                        int tid) const {
    const int warp = tid >> 5, lane = tid & 31;
    const int g = lane >> 2, t = lane & 3;
    const int wm = m0 + (warp / kWarpsN) * kWarpTileM, wn = n0 + (warp % kWarpsN) * kWarpTileN;
    const bool pairs = (N % 2) == 0 && (reinterpret_cast<uintptr_t>(C) % (2 * sizeof(*C))) == 0;
#pragma unroll
    for (int mi = 0; mi < kMmaM; ++mi)
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        const int row = wm + mi * 16 + half * 8 + g;
        if (row >= M) continue;
        typename Cfg::Out* c_row = C + int64_t(row) * N;
#pragma unroll
        for (int ni = 0; ni < kMmaN; ++ni) {
          const int col = wn + ni * 8 + 2 * t;
          const Acc v0 = acc[mi][ni][2 * half], v1 = acc[mi][ni][2 * half + 1];
          if constexpr (kInt) {
            if (pairs && col + 1 < N) {
              *reinterpret_cast<int2*>(c_row + col) = make_int2(v0, v1);
            } else {
              if (col < N) c_row[col] = v0;
              if (col + 1 < N) c_row[col + 1] = v1;
            }
          } else {
            if (pairs && col + 1 < N) {
              *reinterpret_cast<__half2*>(c_row + col) = __floats2half2_rn(v0, v1);
            } else {
              if (col < N) c_row[col] = __float2half_rn(v0);
              if (col + 1 < N) c_row[col + 1] = __float2half_rn(v1);
            }
          }
        }
      }
  }
};

// ---------------------------------------------------------------------------------------------
// FP32 math (FFMA): each thread an kTM x 8 tile of C, its 8 columns in two groups of 4 half a
// block tile apart (so a quarter warp's 16-byte B reads are consecutive: no bank conflicts). Per
// 4 k: kTM 16-byte A reads (a row's 4 k, broadcast within a quarter warp), then per k two 16-byte
// B reads and kTM*8 FFMA.

template <class Cfg>
struct FfmaMath {
  static constexpr int kTN = 8;
  static constexpr int kThreadsN = Cfg::kBN / kTN;
  static constexpr int kThreadsM = Cfg::kThreads / kThreadsN;
  static constexpr int kTM = Cfg::kBM / kThreadsM;
  static constexpr int kGroupStride = Cfg::kBN / 2;  // columns between the two groups of 4
  static_assert(Cfg::kThreads % kThreadsN == 0 && kThreadsM * kTM == Cfg::kBM, "thread tile");
  static_assert(Cfg::kBK % 4 == 0, "BK is whole float4 of K");
  static_assert(kThreadsN >= 8, "a quarter warp shares one A row");

  float acc[kTM][kTN];
  uint32_t a_off_;  // byte offset of this thread's first A row in an A tile
  uint32_t b_off_;  // byte offset of its first column group in a B row

  __device__ __forceinline__ FfmaMath(int tid)
      : a_off_(uint32_t((tid / kThreadsN) * kTM * Cfg::kAStride)),
        b_off_(uint32_t((tid % kThreadsN) * 16)) {
#pragma unroll
    for (int i = 0; i < kTM; ++i)
#pragma unroll
      for (int j = 0; j < kTN; ++j) acc[i][j] = 0.f;
  }

  /// All of one K tile held in the buffer at byte offsets (a_tile, b_tile) from `smem`.
  __device__ __forceinline__ void Compute(const uint8_t* smem, uint32_t a_tile, uint32_t b_tile) {
    const uint8_t* a = smem + a_tile + a_off_;
    const uint8_t* b = smem + b_tile + b_off_;
#pragma unroll
    for (int kq = 0; kq < Cfg::kBK / 4; ++kq) {
      float4 fa[kTM];
#pragma unroll
      for (int i = 0; i < kTM; ++i)
        fa[i] = *reinterpret_cast<const float4*>(a + i * Cfg::kAStride + kq * 16);
#pragma unroll
      for (int kk = 0; kk < 4; ++kk) {
        const uint8_t* b_row = b + (kq * 4 + kk) * Cfg::kBStride;
        const float4 b0 = *reinterpret_cast<const float4*>(b_row);
        const float4 b1 = *reinterpret_cast<const float4*>(b_row + kGroupStride * 4);
        const float fb[kTN] = {b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w};
#pragma unroll
        for (int i = 0; i < kTM; ++i) {
          const float x = kk == 0 ? fa[i].x : kk == 1 ? fa[i].y : kk == 2 ? fa[i].z : fa[i].w;
#pragma unroll
          for (int j = 0; j < kTN; ++j) acc[i][j] = fmaf(x, fb[j], acc[i][j]);
        }
      }
    }
  }

  /// Rows of 4 columns as one 16-byte store where inside and aligned, else element by element.
  __device__ __forceinline__ void Store(float* C, int M, int N, int m0, int n0, int tid) const {
    const int row0 = m0 + (tid / kThreadsN) * kTM;
    const int col0 = n0 + (tid % kThreadsN) * 4;
    const bool vec = (N % 4) == 0 && (reinterpret_cast<uintptr_t>(C) & 15) == 0;
#pragma unroll
    for (int i = 0; i < kTM; ++i) {
      const int row = row0 + i;
      if (row >= M) continue;
      float* c_row = C + int64_t(row) * N;
#pragma unroll
      for (int grp = 0; grp < 2; ++grp) {
        const int col = col0 + grp * kGroupStride;
        const float* v = &acc[i][grp * 4];
        if (vec && col + 3 < N) {
          *reinterpret_cast<float4*>(c_row + col) = make_float4(v[0], v[1], v[2], v[3]);
        } else {
#pragma unroll
          for (int j = 0; j < 4; ++j)
            if (col + j < N) c_row[col + j] = v[j];
        }
      }
    }
  }
};

/// The C tile of this block: grouped rasterization of the linear block index (8 tile rows per
/// group, so concurrently running blocks share rows of A and columns of B in L2).
template <class Cfg>
__device__ __forceinline__ int2 BlockOrigin(int M, int N) {
  const int tiles_m = (M + Cfg::kBM - 1) / Cfg::kBM, tiles_n = (N + Cfg::kBN - 1) / Cfg::kBN;
  const int2 t = GroupedTile(int(blockIdx.x), tiles_m, tiles_n, 8);
  return make_int2(t.x * Cfg::kBM, t.y * Cfg::kBN);
}

template <class Cfg>
using MathOf = std::conditional_t<Cfg::kDType == DType::kFP32, FfmaMath<Cfg>, TensorCoreMath<Cfg>>;

/// One block computes a BM x BN tile of C. Any M, N, K >= 1 (the grid covers ceil(M/BM) *
/// ceil(N/BN) tiles); A, B, C as cudaMalloc gives them (alignment is checked, not assumed).
template <class Cfg>
__global__ void __launch_bounds__(Cfg::kThreads, Cfg::kMinBlocks)
    PipeGemmKernel(const typename Cfg::In* __restrict__ A, const typename Cfg::In* __restrict__ B,
                   typename Cfg::Out* __restrict__ C, int M, int N, int K) {
  extern __shared__ __align__(128) uint8_t smem[];
  const uint32_t smem_base = kernels::ptx::SmemAddr(smem);
  const int tid = int(threadIdx.x);
  const int2 origin = BlockOrigin<Cfg>(M, N);

  // A: BM x BK tiles moving right; B: BK x BN tiles moving down (K x N) or BN x BK moving right.
  TileLoader<Cfg, Cfg::kBM, Cfg::kBK, Cfg::kAStride, false> a_load(A, M, K, origin.x, 0, tid);
  using BLoader =
      std::conditional_t<Cfg::kBIsNK, TileLoader<Cfg, Cfg::kBN, Cfg::kBK, Cfg::kBStride, false>,
                         TileLoader<Cfg, Cfg::kBK, Cfg::kBN, Cfg::kBStride, true>>;
  BLoader b_load =
      Cfg::kBIsNK ? BLoader(B, N, K, origin.y, 0, tid) : BLoader(B, K, N, 0, origin.y, tid);
  MathOf<Cfg> math(tid);

  const int k_tiles = (K + Cfg::kBK - 1) / Cfg::kBK;
  // Byte offsets of buffer `buf`'s A and B tiles from the start of shared memory.
  auto a_tile = [](int buf) { return uint32_t(buf * Cfg::kBufferBytes); };
  auto b_tile = [](int buf) { return uint32_t(buf * Cfg::kBufferBytes + Cfg::kATileBytes); };
  auto compute = [&](int buf) {
    if constexpr (Cfg::kDType == DType::kFP32) {
      math.Compute(smem, a_tile(buf), b_tile(buf));
    } else {
      math.Compute(smem_base + a_tile(buf), smem_base + b_tile(buf));
    }
  };
  auto load_registers = [&] {  // LDG of the loaders' current tile
    a_load.LoadRegisters();
    b_load.LoadRegisters();
    a_load.Advance();
    b_load.Advance();
  };
  auto store_registers = [&](int buf) {  // STS into buffer `buf`
    a_load.StoreRegisters(smem_base + a_tile(buf));
    b_load.StoreRegisters(smem_base + b_tile(buf));
  };
  auto copy_async = [&](int buf) {  // cp.async of the loaders' current tile into `buf`
    a_load.CopyAsync(smem_base + a_tile(buf));
    b_load.CopyAsync(smem_base + b_tile(buf));
    a_load.Advance();
    b_load.Advance();
  };

  if constexpr (Cfg::kPipeline == Pipeline::kBaseline) {
    // load -> sync -> compute -> sync: only other resident blocks hide the load.
#pragma unroll 1
    for (int kt = 0; kt < k_tiles; ++kt) {
      load_registers();
      store_registers(0);
      __syncthreads();
      compute(0);
      __syncthreads();
    }
  } else if constexpr (Cfg::kPipeline == Pipeline::kLdg) {
    // Prologue: tile 0 into buffer 0.
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
  } else {
    // Prologue: tile 0 into buffer 0, waited for.
    copy_async(0);
    kernels::ptx::CpAsyncCommitGroup();
    kernels::ptx::CpAsyncWaitGroup<0>();
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
      kernels::ptx::CpAsyncCommitGroup();
      compute(cur);
      if (wait_after_math) kernels::ptx::CpAsyncWaitGroup<0>();
      __syncthreads();  // tile kt+1 visible; buffer cur free for tile kt+2
    }
    compute((k_tiles - 1) & 1);
  }

  math.Store(C, M, N, origin.x, origin.y, tid);
}

}  // namespace ablation::kernels::pipe
