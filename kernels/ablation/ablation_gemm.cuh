// The ablation GEMM: one template whose parameters each switch one data path of
// a bf16/fp16 mma.sync GEMM, so that the difference between two variants is attributable to that
// one knob. C = A * B, A M x K row-major, B K x N (b_layout 0) or N x K (b_layout 1), fp32
// accumulation, C M x N row-major in the input type.
//
// Every variant runs the same mma chain: for each accumulator fragment the k-steps are applied in
// ascending k order with identical operands, so all variants give bit-identical C. The knobs only
// change how the operands travel gmem -> smem -> registers.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "kernels/ablation/ablation_shape.h"
#include "kernels/common/ptx.cuh"
#include "kernels/common/raster.cuh"

namespace ablation::kernels::ablation_gemm {

/// The mma.sync instruction for an input element type.
template <typename T>
struct Mma;
template <>
struct Mma<__nv_bfloat16> {
  static __device__ __forceinline__ void Run(float (&d)[4], const uint32_t (&a)[4],
                                             const uint32_t (&b)[2]) {
    ptx::MmaM16N8K16Bf16(d, a, b);
  }
  static __device__ __forceinline__ uint32_t Pack(float lo, float hi) {
    __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
    return *reinterpret_cast<uint32_t*>(&v);
  }
};
template <>
struct Mma<__half> {
  static __device__ __forceinline__ void Run(float (&d)[4], const uint32_t (&a)[4],
                                             const uint32_t (&b)[2]) {
    ptx::MmaM16N8K16F16(d, a, b);
  }
  static __device__ __forceinline__ uint32_t Pack(float lo, float hi) {
    __half2 v = __floats2half2_rn(lo, hi);
    return *reinterpret_cast<uint32_t*>(&v);
  }
};

/// The knobs of one variant. Each is a compile-time constant so that `if constexpr` removes the
/// paths a variant does not take (no run-time branching on the knob).
template <int LOAD_MODE_,  /// gmem->smem: 0 ld.global.v4 + st.shared.v4, 1 cp.async.cg 16 B
          int READ_MODE_,  /// smem->reg: 0 ld.shared per fragment element, 1 ldmatrix
          int B_LAYOUT_,   /// B in smem: 0 Bs[BK][BN] (B given K x N), 1 Bs[BN][BK] (N x K)
          int STAGES_,     /// shared-memory stages: 1 load-sync-compute-sync, >=2 pipelined
          int SWIZZLE_,    /// smem rows: 0 plain, 1 XOR-swizzled 16-byte chunks (conflict free)
          int RB_>         /// 1: register double buffer, next k-step's fragments load early
struct Config {
  static constexpr int kLoadMode = LOAD_MODE_;
  static constexpr int kReadMode = READ_MODE_;
  static constexpr int kBLayout = B_LAYOUT_;
  static constexpr int kStages = STAGES_;
  static constexpr int kSwizzle = SWIZZLE_;
  static constexpr int kRegisterBuffer = RB_;

  static_assert(kLoadMode == 0 || kLoadMode == 1, "LOAD_MODE is 0 or 1");
  static_assert(kReadMode == 0 || kReadMode == 1, "READ_MODE is 0 or 1");
  static_assert(kBLayout == 0 || kBLayout == 1, "B_LAYOUT is 0 or 1");
  static_assert(kStages >= 1 && kStages <= 4, "STAGES is 1..4");
  static_assert(kSwizzle == 0 || kSwizzle == 1, "SWIZZLE is 0 or 1");
  static_assert(kRegisterBuffer == 0 || kRegisterBuffer == 1, "RB is 0 or 1");

  static constexpr int kSmemBytes = int(SmemBytes(kStages));
};

inline constexpr int kWarpsN = kBlockN / kWarpN;  // 4 (warps along M: 2)
inline constexpr int kMmaM = kWarpM / 16;         // 4 m16 tiles per warp
inline constexpr int kMmaN = kWarpN / 8;          // 4 n8 tiles per warp
inline constexpr int kKSteps = kBlockK / 16;      // 2 k16 steps per tile
// The register double buffer alternates buffers per k-step and restarts at buffer 0 each tile.
static_assert(kKSteps % 2 == 0, "RB=1 assumes an even number of k-steps per tile");
inline constexpr int kTileBytes = kBlockM * kBlockK * kElementBytes;  // A tile = B tile = 8 KiB
/// Output tiles are visited in groups of this many tile rows so that concurrently running blocks
/// share A rows and B columns in L2. Applied identically to every variant.
inline constexpr int kRasterGroupM = 8;

// ---- Shared-memory layouts (byte offsets within one stage's tile). A 16-byte chunk is 8 elements.
//
// "Row-K" tiles: 128 rows of 32 elements (64 B = 4 chunks). A always; B when b_layout == 1 (rows
// are n). An 8-row ldmatrix phase or a 32-lane ld.shared.b32 touches 8 consecutive rows at one
// chunk: plain rows put them in 2 distinct 16-byte bank groups (4-way conflict); XOR-ing the chunk
// with (row >> 1) & 3 spreads the 8 rows over all 8 bank groups of a 128-byte line.
template <int SWIZZLE>
__device__ __forceinline__ uint32_t RowKOffset(int row, int chunk) {
  const int swz = SWIZZLE ? ((row >> 1) & 3) : 0;
  return uint32_t(row * (kBlockK * kElementBytes) + ((chunk ^ swz) << 4));
}
// "Row-N" tiles: B when b_layout == 0, 32 rows (k) of 128 elements (256 B = 16 chunks). Reads
// touch 8 consecutive k rows at one chunk (ldmatrix.trans) or 4 rows of the same parity
// (ld.shared.b16); rows are 256 B apart, so all land in one bank group unless the chunk is
// XOR-ed with row & 7.
template <int SWIZZLE>
__device__ __forceinline__ uint32_t RowNOffset(int row, int chunk) {
  const int swz = SWIZZLE ? (row & 7) : 0;
  return uint32_t(row * (kBlockN * kElementBytes) + ((chunk ^ swz) << 4));
}

inline constexpr uint32_t kRowKBytes = kBlockK * kElementBytes;  // bytes per row-K tile row
inline constexpr uint32_t kRowNBytes = kBlockN * kElementBytes;  // bytes per row-N tile row

/// Per-thread shared addresses of the fragment reads in stage 0, computed once. Every address is
/// (stage + rows + lane part) ^ (chunk part): rows are multiples of the row size (additions of
/// immediates: m16/n8 tile, +8 rows, k-step rows of a row-N tile) and the lane part holds the
/// swizzled chunk in the bits below, so a k-step or n8 block that changes the logical chunk is an
/// XOR with an immediate. This keeps one register per operand instead of one per fragment, which
/// is what lets the RB=1 variants hold two fragment sets at two blocks per SM without spilling.
/// (Needs smem_a, smem_b aligned to 256 B: the base is 1 KiB-aligned and tiles are 8 KiB.)
template <class Cfg>
struct FragmentOffsets {
  static constexpr int kSw = Cfg::kSwizzle;
  uint32_t a;     // A: ldmatrix row address / ld.shared (g, 2t) element, k-step 0
  uint32_t b[2];  // B: as A for b_layout 1 (b[0]); b_layout 0: b[p] for k parity p (b[0] only
                  // for ldmatrix.trans)

  __device__ __forceinline__ FragmentOffsets(int warp_m, int warp_n, int lane, uint32_t smem_a,
                                             uint32_t smem_b) {
    const int g = lane >> 2;  // mma "groupID": fragment row (A) / column (B)
    const int t = lane & 3;   // mma "threadID_in_group": fragment k pair
    const int wm = warp_m * kWarpM, wn = warp_n * kWarpN;
    b[1] = 0;
    if constexpr (Cfg::kReadMode == 1) {
      // A x4: matrices (rows 0-7, k 0-7), (rows 8-15, k 0-7), (rows 0-7, k 8-15),
      // (rows 8-15, k 8-15) = a0..a3; lane l addresses row l % 16 of chunk 2*ks + l / 16.
      a = smem_a + RowKOffset<kSw>(wm + (lane & 15), lane >> 4);
      if constexpr (Cfg::kBLayout == 1) {
        // x2: matrices (n 0-7, k 0-7) = b0 and (n 0-7, k 8-15) = b1; lanes 0-15 address them.
        b[0] = smem_b + RowKOffset<kSw>(wn + (lane & 7), (lane >> 3) & 1);
      } else {
        // x2.trans: matrices (k 0-7) = b0 and (k 8-15) = b1 of one n8 column block.
        b[0] = smem_b + RowNOffset<kSw>(lane & 15, wn / 8);
      }
    } else {
      // A: a0 (g, 2t), a1 (g+8, 2t), a2 (g, 2t+8), a3 (g+8, 2t+8), two elements each.
      const uint32_t e = uint32_t(t * 2 * kElementBytes);
      a = smem_a + RowKOffset<kSw>(wm + g, 0) + e;
      if constexpr (Cfg::kBLayout == 1) {
        // Bs[n][k] is laid out like A: b0 (n g, k 2t..2t+1), b1 (n g, k 2t+8..2t+9).
        b[0] = smem_b + RowKOffset<kSw>(wn + g, 0) + e;
      } else {
        // Bs[k][n]: element (k 2t+p, n g) of each n8 block, one b16 each.
        for (int p = 0; p < 2; ++p)
          b[p] = smem_b + RowNOffset<kSw>(2 * t + p, wn / 8) + uint32_t(g * kElementBytes);
      }
    }
  }
};

/// Loads the A fragment of m16 tile `mi`, k-step `ks`, from the stage at byte offset `stage`.
template <class Cfg>
__device__ __forceinline__ void LoadFragmentA(uint32_t stage, int ks, int mi,
                                              const FragmentOffsets<Cfg>& off, uint32_t (&fa)[4]) {
  const uint32_t m = stage + off.a + mi * 16 * kRowKBytes;
  const uint32_t k = uint32_t(2 * ks) << 4;  // chunk 2*ks: an XOR on the swizzled chunk bits
  if constexpr (Cfg::kReadMode == 1) {
    ptx::LdmatrixX4(fa, m ^ k);
  } else {
    fa[0] = ptx::LdShared32(m ^ k);
    fa[1] = ptx::LdShared32((m + 8 * kRowKBytes) ^ k);
    fa[2] = ptx::LdShared32(m ^ (k | 16));  // k + 8: the next chunk
    fa[3] = ptx::LdShared32((m + 8 * kRowKBytes) ^ (k | 16));
  }
}

/// Loads the B fragments of all n8 tiles, k-step `ks`, from the stage at byte offset `stage`.
template <class Cfg>
__device__ __forceinline__ void LoadFragmentsB(uint32_t stage, int ks,
                                               const FragmentOffsets<Cfg>& off,
                                               uint32_t (&fb)[kMmaN][2]) {
#pragma unroll
  for (int ni = 0; ni < kMmaN; ++ni) {
    if constexpr (Cfg::kBLayout == 1) {
      const uint32_t n = stage + off.b[0] + ni * 8 * kRowKBytes;
      const uint32_t k = uint32_t(2 * ks) << 4;
      if constexpr (Cfg::kReadMode == 1) {
        ptx::LdmatrixX2(fb[ni], n ^ k);
      } else {
        fb[ni][0] = ptx::LdShared32(n ^ k);
        fb[ni][1] = ptx::LdShared32(n ^ (k | 16));
      }
    } else {
      const uint32_t k = stage + ks * 16 * kRowNBytes;
      const uint32_t c = uint32_t(ni) << 4;  // n8 block ni: an XOR on the swizzled chunk bits
      if constexpr (Cfg::kReadMode == 1) {
        ptx::LdmatrixX2Trans(fb[ni], (k + off.b[0]) ^ c);
      } else {
        // The two elements of a fragment register sit in consecutive k rows: two b16 loads each.
        const uint32_t lo0 = ptx::LdShared16((k + off.b[0]) ^ c);
        const uint32_t hi0 = ptx::LdShared16((k + off.b[1]) ^ c);
        const uint32_t lo1 = ptx::LdShared16((k + off.b[0] + 8 * kRowNBytes) ^ c);
        const uint32_t hi1 = ptx::LdShared16((k + off.b[1] + 8 * kRowNBytes) ^ c);
        fb[ni][0] = lo0 | (hi0 << 16);
        fb[ni][1] = lo1 | (hi1 << 16);
      }
    }
  }
}

/// The fragments of one k-step: A for the warp's four m16 tiles, B for its four n8 tiles.
struct Fragments {
  uint32_t a[kMmaM][4];
  uint32_t b[kMmaN][2];
};

template <class Cfg>
__device__ __forceinline__ void LoadFragments(uint32_t a_base, uint32_t b_base, int ks,
                                              const FragmentOffsets<Cfg>& off, Fragments& f) {
#pragma unroll
  for (int mi = 0; mi < kMmaM; ++mi) LoadFragmentA<Cfg>(a_base, ks, mi, off, f.a[mi]);
  LoadFragmentsB<Cfg>(b_base, ks, off, f.b);
}

/// The 16 mma of one k-step, m16 tile by m16 tile; every variant issues them in this order.
template <typename T>
__device__ __forceinline__ void MmaStep(float (&acc)[kMmaM][kMmaN][4], const Fragments& f) {
#pragma unroll
  for (int mi = 0; mi < kMmaM; ++mi)
#pragma unroll
    for (int ni = 0; ni < kMmaN; ++ni) Mma<T>::Run(acc[mi][ni], f.a[mi], f.b[ni]);
}

/// RB=1: the same 16 mma on `cur` while the next k-step's fragments load into `nxt` (B first, then
/// A one m16 tile at a time as `cur`'s A registers free up, which keeps both sets within the
/// register budget of two blocks per SM).
template <typename T, class Cfg>
__device__ __forceinline__ void MmaStepPrefetch(float (&acc)[kMmaM][kMmaN][4], const Fragments& cur,
                                                Fragments& nxt, uint32_t a_base, uint32_t b_base,
                                                int ks, const FragmentOffsets<Cfg>& off) {
  LoadFragmentsB<Cfg>(b_base, ks, off, nxt.b);
#pragma unroll
  for (int mi = 0; mi < kMmaM; ++mi) {
    LoadFragmentA<Cfg>(a_base, ks, mi, off, nxt.a[mi]);
#pragma unroll
    for (int ni = 0; ni < kMmaN; ++ni) Mma<T>::Run(acc[mi][ni], cur.a[mi], cur.b[ni]);
  }
}

/// gmem -> smem copies of one thread: two 16-byte chunks of the A tile and two of the B tile. The
/// second chunk of each is 64 rows (A, B N x K) or 16 k rows (B K x N) below the first: the same
/// swizzle phase, 4 KiB further in smem.
template <typename T, class Cfg>
struct TileLoader {
  static constexpr uint32_t kSecondChunk = 4096;  // bytes, for both tile kinds
  // Registers are the scarce resource here: the sources are 32-bit element offsets from the
  // kernel's A and B (parameters, read from the constant bank; can_implement keeps M*K and N*K
  // below 2^31), and distances between chunks and tiles are recomputed from N and K.
  const T* const a_;
  const T* const b_;
  const int n_;
  const int k_;
  uint32_t a_off;  // element offset of this thread's first A chunk in the current k tile
  uint32_t b_off;
  uint32_t a_dst;  // shared address in stage 0's A tile
  uint32_t b_dst;
  uint4 staged[4];  // LOAD_MODE 0: the registers the data passes through

  __device__ __forceinline__ TileLoader(const T* A, const T* B, int N, int K, int m0, int n0,
                                        int tid, uint32_t smem_a, uint32_t smem_b)
      : a_(A), b_(B), n_(N), k_(K) {
    const int r = tid >> 2, c = tid & 3;  // row-K tile: 4 chunks per row
    a_off = uint32_t((m0 + r) * K + c * 8);
    a_dst = RowKOffset<Cfg::kSwizzle>(r, c);
    if constexpr (Cfg::kBLayout == 1) {
      b_off = uint32_t((n0 + r) * K + c * 8);
      b_dst = RowKOffset<Cfg::kSwizzle>(r, c);
    } else {
      const int kr = tid >> 4, nc = tid & 15;  // row-N tile: 16 chunks per row
      b_off = uint32_t(kr * N + n0 + nc * 8);
      b_dst = RowNOffset<Cfg::kSwizzle>(kr, nc);
    }
    a_dst += smem_a;  // absolute, so a stage is addressed by its byte offset alone
    b_dst += smem_b;
  }

  __device__ __forceinline__ uint32_t a_second() const { return uint32_t(64 * k_); }
  __device__ __forceinline__ uint32_t b_second() const {
    return uint32_t(Cfg::kBLayout == 1 ? 64 * k_ : 16 * n_);
  }
  __device__ __forceinline__ uint32_t b_step() const {
    return uint32_t(Cfg::kBLayout == 1 ? kBlockK : kBlockK * n_);
  }
  __device__ __forceinline__ const T* a_src(uint32_t extra = 0) const {
    return a_ + (a_off + extra);
  }
  __device__ __forceinline__ const T* b_src(uint32_t extra = 0) const {
    return b_ + (b_off + extra);
  }

  /// Moves the sources on to the next k tile (tiles are loaded in order).
  __device__ __forceinline__ void Advance() {
    a_off += kBlockK;
    b_off += b_step();
  }
  /// LOAD_MODE 1: cp.async the current k tile into the stage at byte offsets (a_stage, b_stage).
  __device__ __forceinline__ void IssueAsync(uint32_t a_stage, uint32_t b_stage) const {
    ptx::CpAsyncCg16(a_stage + a_dst, a_src());
    ptx::CpAsyncCg16(a_stage + a_dst + kSecondChunk, a_src(a_second()));
    ptx::CpAsyncCg16(b_stage + b_dst, b_src());
    ptx::CpAsyncCg16(b_stage + b_dst + kSecondChunk, b_src(b_second()));
  }
  /// LOAD_MODE 0, first half: 16-byte ld.global of the current k tile into registers.
  __device__ __forceinline__ void LoadRegisters() {
    staged[0] = *reinterpret_cast<const uint4*>(a_src());
    staged[1] = *reinterpret_cast<const uint4*>(a_src(a_second()));
    staged[2] = *reinterpret_cast<const uint4*>(b_src());
    staged[3] = *reinterpret_cast<const uint4*>(b_src(b_second()));
  }
  /// LOAD_MODE 0, second half: 16-byte st.shared of the registers into a stage.
  __device__ __forceinline__ void StoreRegisters(uint32_t a_stage, uint32_t b_stage) const {
    StoreShared16(a_stage + a_dst, staged[0]);
    StoreShared16(a_stage + a_dst + kSecondChunk, staged[1]);
    StoreShared16(b_stage + b_dst, staged[2]);
    StoreShared16(b_stage + b_dst + kSecondChunk, staged[3]);
  }
  static __device__ __forceinline__ void StoreShared16(uint32_t addr, const uint4& v) {
    asm volatile("st.shared.v4.b32 [%0], {%1, %2, %3, %4};\n" ::"r"(addr), "r"(v.x), "r"(v.y),
                 "r"(v.z), "r"(v.w)
                 : "memory");
  }
};

/// Writes the warp's 64x32 accumulator tile as T. The m16n8 fragment gives each lane two adjacent
/// columns per n8 tile; a 4x4 transpose inside each lane quad (two shfl.xor rounds) gives each
/// lane eight adjacent columns instead, so every lane issues one 16-byte store per row.
template <typename T>
__device__ __forceinline__ void StoreC(const float (&acc)[kMmaM][kMmaN][4], T* C, int N, int row0,
                                       int col0, int lane) {
  const int g = lane >> 2, t = lane & 3;
#pragma unroll
  for (int mi = 0; mi < kMmaM; ++mi) {
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      uint32_t w[kMmaN];  // w[ni]: this lane's two columns of n8 tile ni
#pragma unroll
      for (int ni = 0; ni < kMmaN; ++ni) {
        w[ni] = Mma<T>::Pack(acc[mi][ni][2 * half], acc[mi][ni][2 * half + 1]);
      }
      // Quad transpose: afterwards lane t holds n8 tile t, w[j] = columns 2j, 2j+1 of it.
      {
        const bool hi = (t & 2) != 0;
        const uint32_t s0 = hi ? w[0] : w[2], s1 = hi ? w[1] : w[3];
        const uint32_t r0 = __shfl_xor_sync(0xffffffffu, s0, 2);
        const uint32_t r1 = __shfl_xor_sync(0xffffffffu, s1, 2);
        if (hi) {
          w[0] = r0, w[1] = r1;
        } else {
          w[2] = r0, w[3] = r1;
        }
      }
      {
        const bool odd = (t & 1) != 0;
        const uint32_t s0 = odd ? w[0] : w[1], s1 = odd ? w[2] : w[3];
        const uint32_t r0 = __shfl_xor_sync(0xffffffffu, s0, 1);
        const uint32_t r1 = __shfl_xor_sync(0xffffffffu, s1, 1);
        if (odd) {
          w[0] = r0, w[2] = r1;
        } else {
          w[1] = r0, w[3] = r1;
        }
      }
      const int row = row0 + mi * 16 + half * 8 + g;
      T* dst = C + int64_t(row) * N + col0 + t * 8;
      *reinterpret_cast<uint4*>(dst) = make_uint4(w[0], w[1], w[2], w[3]);
    }
  }
}

/// The C tile of this block: grouped rasterization of the linear block index, identical for every
/// variant. ctaid is read through volatile asm so that the epilogue recomputes the origin instead
/// of keeping it in two registers across the main loop.
__device__ __forceinline__ int2 BlockOrigin(int M, int N) {
  uint32_t bid;
  asm volatile("mov.u32 %0, %%ctaid.x;\n" : "=r"(bid));
  const int2 t = GroupedTile(int(bid), M / kBlockM, N / kBlockN, kRasterGroupM);
  return make_int2(t.x * kBlockM, t.y * kBlockN);
}

// The kernel's steps (AblationGemmKernel below), each inlined into it: a k tile loaded into a
// stage, and the main loop over the k tiles with one stage or a pipeline of S.

// Synchronous load of the current k tile into a stage: LOAD_MODE 0 passes it through registers
// (ld.global then st.shared, the thread waits for the load), LOAD_MODE 1 issues cp.async.
template <class T, class Cfg>
__device__ __forceinline__ void LoadTile(TileLoader<T, Cfg>& loader, uint32_t stage) {
  if constexpr (Cfg::kLoadMode == 0) {
    loader.LoadRegisters();
    loader.StoreRegisters(stage, stage);
  } else {
    loader.IssueAsync(stage, stage);
  }
  loader.Advance();
}

// One stage: load -> sync -> compute -> sync, nothing overlaps the load but other resident blocks.
template <class T, class Cfg>
__device__ __forceinline__ void SingleStageMainloop(TileLoader<T, Cfg>& loader,
                                                    const FragmentOffsets<Cfg>& off,
                                                    float (&acc)[kMmaM][kMmaN][4],
                                                    Fragments (&frag)[1 + Cfg::kRegisterBuffer],
                                                    int k_tiles) {
  // Stages are addressed by byte offsets; the tile bases are folded into loader and offsets.
  auto a_stage = [](int s) { return uint32_t(s * kTileBytes); };
  auto b_stage = [](int s) { return uint32_t(s * kTileBytes); };
  auto load_tile = [&](uint32_t stage) { LoadTile<T, Cfg>(loader, stage); };
  // Not unrolled: interleaving two tiles' fragments would not fit two blocks' registers.
#pragma unroll 1
  for (int kt = 0; kt < k_tiles; ++kt) {
    load_tile(a_stage(0));
    if constexpr (Cfg::kLoadMode == 1) {
      ptx::CpAsyncCommitGroup();
      ptx::CpAsyncWaitGroup<0>();
    }
    __syncthreads();
    if constexpr (Cfg::kRegisterBuffer) {
      // Within the tile only: the next tile does not exist before the closing barrier.
      LoadFragments<Cfg>(a_stage(0), b_stage(0), 0, off, frag[0]);
#pragma unroll
      for (int ks = 0; ks < kKSteps - 1; ++ks) {
        MmaStepPrefetch<T, Cfg>(acc, frag[ks & 1], frag[(ks + 1) & 1], a_stage(0), b_stage(0),
                                ks + 1, off);
      }
      MmaStep<T>(acc, frag[(kKSteps - 1) & 1]);
    } else {
      // RB=0 means what it says: not unrolled, so the compiler cannot hoist the next k-step's
      // fragment loads above this one's mma (which would be RB=1 in disguise).
#pragma unroll 1
      for (int ks = 0; ks < kKSteps; ++ks) {
        LoadFragments<Cfg>(a_stage(0), b_stage(0), ks, off, frag[0]);
        MmaStep<T>(acc, frag[0]);
      }
    }
    __syncthreads();
  }
}

// S stages: tiles kt+1..kt+S-1 loading while tile kt is computed.
template <class T, class Cfg>
__device__ __forceinline__ void PipelinedMainloop(TileLoader<T, Cfg>& loader,
                                                  const FragmentOffsets<Cfg>& off,
                                                  float (&acc)[kMmaM][kMmaN][4],
                                                  Fragments (&frag)[1 + Cfg::kRegisterBuffer],
                                                  int k_tiles) {
  constexpr int S = Cfg::kStages;
  auto a_stage = [](int s) { return uint32_t(s * kTileBytes); };
  auto b_stage = [](int s) { return uint32_t(s * kTileBytes); };
  auto load_tile = [&](uint32_t stage) { LoadTile<T, Cfg>(loader, stage); };
  // Prologue: tiles 0..S-2 stored (LOAD_MODE 0) or in flight (LOAD_MODE 1). One commit per
  // tile, empty groups included, keeps the wait_group count uniform to the end.
#pragma unroll
  for (int s = 0; s < S - 1; ++s) {
    if (s < k_tiles) load_tile(a_stage(s));
    if constexpr (Cfg::kLoadMode == 1) ptx::CpAsyncCommitGroup();
  }
  if constexpr (Cfg::kLoadMode == 1) ptx::CpAsyncWaitGroup<S - 2>();
  __syncthreads();

  // Byte offset of the stage holding tile kt. Tile kt+S-1 goes to the stage before it (mod S),
  // whose last reader was iteration kt-1.
  uint32_t read_stage = 0;
  auto write_stage = [&] {
    return read_stage == 0 ? uint32_t((S - 1) * kTileBytes) : read_stage - kTileBytes;
  };
  auto advance = [&] {
    read_stage = read_stage == uint32_t((S - 1) * kTileBytes) ? 0 : read_stage + kTileBytes;
  };
  if constexpr (Cfg::kRegisterBuffer) {
    LoadFragments<Cfg>(a_stage(0), b_stage(0), 0, off, frag[0]);
  }

  // Not unrolled: interleaving two tiles' fragments would not fit two blocks' registers.
#pragma unroll 1
  for (int kt = 0; kt < k_tiles; ++kt) {
    // Tile kt+S-1 into the free stage. LOAD_MODE 0 is "sync load + double buffer", the rung
    // measured before cp.async so that double buffering and cp.async are credited separately:
    // ld.global + st.shared into buffer[write] while buffer[read] is computed after the barrier;
    // the thread stalls on its own load, other warps' math covers it. LOAD_MODE 1 hands the
    // copy to cp.async and goes straight on to the math.
    if (kt + S - 1 < k_tiles) load_tile(write_stage());
    if constexpr (Cfg::kLoadMode == 1) ptx::CpAsyncCommitGroup();

    if constexpr (Cfg::kRegisterBuffer) {
#pragma unroll
      for (int ks = 0; ks < kKSteps - 1; ++ks) {
        MmaStepPrefetch<T, Cfg>(acc, frag[ks & 1], frag[(ks + 1) & 1], read_stage, read_stage,
                                ks + 1, off);
      }
      // Last k-step: make tile kt+1 visible first, so its first k-step can be prefetched while
      // this one computes. (After the last tile this reads a stale stage, harmlessly.)
      if constexpr (Cfg::kLoadMode == 1) ptx::CpAsyncWaitGroup<S - 2>();
      __syncthreads();
      advance();
      MmaStepPrefetch<T, Cfg>(acc, frag[(kKSteps - 1) & 1], frag[0], read_stage, read_stage, 0,
                              off);
    } else {
      // RB=0 means what it says: not unrolled, so the compiler cannot hoist the next k-step's
      // fragment loads above this one's mma (which would be RB=1 in disguise).
#pragma unroll 1
      for (int ks = 0; ks < kKSteps; ++ks) {
        LoadFragments<Cfg>(read_stage, read_stage, ks, off, frag[0]);
        MmaStep<T>(acc, frag[0]);
      }
      if constexpr (Cfg::kLoadMode == 1) ptx::CpAsyncWaitGroup<S - 2>();
      __syncthreads();
      advance();
    }
  }
}

/// One block computes a 128x128 tile of C. Preconditions (checked by can_implement and the
/// launcher): M, N multiples of 128, K a multiple of 32, pointers 16-byte aligned.
template <typename T, class Cfg>
__global__ void __launch_bounds__(kThreads, 2)
    AblationGemmKernel(const T* __restrict__ A, const T* __restrict__ B, T* __restrict__ C, int M,
                       int N, int K) {
  constexpr int S = Cfg::kStages;
  extern __shared__ __align__(1024) uint8_t smem[];
  // Stage-major: A tiles of all stages, then B tiles of all stages.
  const uint32_t smem_a = ptx::SmemAddr(smem);
  const uint32_t smem_b = smem_a + S * kTileBytes;

  const int2 origin = BlockOrigin(M, N);

  const int tid = int(threadIdx.x);
  const int lane = tid & 31;
  const int warp = tid >> 5;
  const int warp_m = warp / kWarpsN;
  const int warp_n = warp % kWarpsN;

  TileLoader<T, Cfg> loader(A, B, N, K, origin.x, origin.y, tid, smem_a, smem_b);
  float acc[kMmaM][kMmaN][4];
#pragma unroll
  for (int mi = 0; mi < kMmaM; ++mi)
#pragma unroll
    for (int ni = 0; ni < kMmaN; ++ni)
#pragma unroll
      for (int j = 0; j < 4; ++j) acc[mi][ni][j] = 0.f;

  const int k_tiles = K / kBlockK;
  const FragmentOffsets<Cfg> off(warp_m, warp_n, lane, smem_a, smem_b);
  // Register fragments: two sets when double-buffered (RB=1), else one set reused per k-step.
  Fragments frag[1 + Cfg::kRegisterBuffer];

  if constexpr (S == 1) {
    SingleStageMainloop<T, Cfg>(loader, off, acc, frag, k_tiles);
  } else {
    PipelinedMainloop<T, Cfg>(loader, off, acc, frag, k_tiles);
  }
  {
    const int2 o = BlockOrigin(M, N);
    const int w = int(threadIdx.x) >> 5;
    StoreC<T>(acc, C, N, o.x + (w / kWarpsN) * kWarpM, o.y + (w % kWarpsN) * kWarpN,
              int(threadIdx.x) & 31);
  }
}

}  // namespace ablation::kernels::ablation_gemm
