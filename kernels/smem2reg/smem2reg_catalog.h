// Catalog entries (names, metadata, work model, can_implement) of the smem2reg micro-benchmarks:
// the ablation GEMM's shared-memory -> register fragment loads alone, without mma, so that the
// cost of ldmatrix against ld.shared shows where the full kernel hides it behind the tensor cores
// (a GEMM bound by mma throughput or DRAM bandwidth shows no difference there). Host-only.
#pragma once

#include <string>
#include <vector>

#include "kernels/common/problem.h"
#include "kernels/registry.h"

namespace ablation::kernels {

/// Shared-memory stages a block fills: two k-tiles, read alternately as the pipelined GEMM reads
/// its stages, so consecutive k-tiles load from different addresses and no load is loop-invariant.
inline constexpr int kSmem2RegStages = 2;

/// The knobs of one smem2reg variant; each means what it means in the ablation family.
struct Smem2RegConfig {
  int read_mode = 0;  ///< 0: ld.shared per fragment element, 1: ldmatrix
  int b_layout = 0;   ///< 0: Bs[BK][BN] (B is K x N), 1: Bs[BN][BK] (B is N x K)
  int swizzle = 0;    ///< 0: plain rows, 1: XOR swizzle

  friend bool operator==(const Smem2RegConfig&, const Smem2RegConfig&) = default;
};

/// "smem2reg_R{r}_bl{b}_sw{w}".
std::string Smem2RegVariantName(const Smem2RegConfig& c);

/// All 8 configurations in registry order: read_mode, b_layout, swizzle (the last varies fastest).
std::vector<Smem2RegConfig> AllSmem2RegConfigs();

/// Per-warp fragment load instructions of one k-tile (two k16 steps, four m16 A tiles, four n8 B
/// tiles): ldmatrix 8 x4 + 8 x2 = 16; ld.shared with Bs[BN][BK] 32 b32 (A) + 16 b32 (B) = 48;
/// with Bs[BK][BN] 32 b32 + 32 b16 = 64.
int Smem2RegLoadsPerWarpTile(const Smem2RegConfig& c);

/// Bytes a warp moves from shared memory into registers per k-tile: the A fragments of 64x32
/// and the B fragments of 32x32 elements, 6144 B whatever the instructions.
int Smem2RegBytesPerWarpTile();

/// The work of one launch at M x N x K: (M/128)(N/128) blocks of 8 warps, each warp issuing the
/// loads of K/32 k-tiles, exactly as many as the ablation GEMM issues at that shape. No flops.
WorkModel Smem2RegWork(const Smem2RegConfig& c, const Problem& p);

/// "" if the micro-benchmark can run `p`: bf16 or fp16 (it moves 16-bit elements as bits) and
/// the shape limits of the ablation family, whose tile loader fills its shared memory.
std::string Smem2RegCanImplement(const Problem& p);

/// Registers the 8 smem2reg variants (each for bf16 and fp16).
void RegisterSmem2Reg(Registry& registry);

}  // namespace ablation::kernels
