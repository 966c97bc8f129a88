// Every shape of the sm90 family's contract (M, N, K of at least 1): how a launch of a rung runs
// a problem that is not a multiple of its tile. Host-only header (no CUDA types): the catalog
// describes and accepts shapes with it, the launchers (sm90_launch.cuh) follow its plan, and the
// host tests check the plan without a device.
//
// Three cases, decided by PlanShape:
//   on the tile   M a multiple of 128 x cluster_m, N of 256 x cluster_n, K of 64, the operands
//                 16-byte aligned: the rung's own build runs, the code the ladder was measured
//                 with;
//   off the tile  the rung's guarded build (Knobs::guarded, Guarded(rung)): TMA fills the rows
//                 and columns past the matrices with zeros and clips its stores, the cp.async
//                 rung copies zero bytes of them, the 16-byte stores past M or N are skipped;
//   padded        TMA and 16-byte copies address rows of whole 16-byte chunks: a row stride
//                 that is not a multiple of 16 bytes (K not a multiple of 8 for A and B, N not a
//                 multiple of 8 for C) or a pointer that is not 16-byte aligned cannot be
//                 described to the hardware. Those operands are copied into padded rows (zeros
//                 past the matrix) before the guarded build runs, and C is copied back after it,
//                 on the launch's stream: the copies are part of the launch, so a timing of the
//                 rung includes them (notes/gpu-runs.md measures what they cost).
#pragma once

#include <cstdint>
#include <string>

#include "kernels/common/problem.h"
#include "kernels/sm90/sm90_config.h"

namespace ablation::kernels {
struct GemmArgs;
}

namespace ablation::kernels::sm90 {

/// How one launch runs a problem.
struct ShapePlan {
  bool on_tile = false;  ///< the rung's own build, on the caller's operands
  bool pad_a = false;    ///< A copied into rows of `k` elements (zeros past K)
  bool pad_b = false;    ///< B copied into `n` rows of `k` elements (zeros past N and K)
  bool pad_c = false;    ///< C computed into rows of `n` elements, then copied out
  int64_t n = 0;         ///< N as the kernel sees it: rounded up to 8 when C is padded
  int64_t k =
      0;  ///< K as the kernel sees it: rounded up to a 16-byte chunk when A and B are padded

  bool Pads() const { return pad_a || pad_b || pad_c; }
};

inline constexpr int64_t RoundUp8(int64_t v) { return (v + 7) / 8 * 8; }
inline constexpr int64_t RoundUp(int64_t v, int64_t to) { return (v + to - 1) / to * to; }

/// The dtype a rung's knobs compute: bf16, or fp8 (Knobs::fp8).
constexpr DType RungDType(const Knobs& k) { return k.fp8 ? DType::kFP8 : DType::kBF16; }

/// The plan of knobs `knobs` at problem `p` with operands at addresses a, b and c.
inline ShapePlan PlanShape(const Problem& p, const Knobs& knobs, uintptr_t a, uintptr_t b,
                           uintptr_t c) {
  ShapePlan s;
  // Elements of A's and B's in a 16-byte chunk: 8 bf16, 16 e4m3.
  const int64_t chunk = 16 / OperandBytes(knobs);
  const bool k_rows = p.k % chunk == 0;  // A's and B's rows are whole 16-byte chunks
  const bool n_rows = p.n % 8 == 0;      // C's (bf16) rows are
  // K not a multiple of 8 pads both A and B (they share the rounded K); otherwise each operand
  // is padded only when its pointer is misaligned.
  s.pad_a = !k_rows || a % 16 != 0;
  // The cp.async rung reads B's rows up to the kernel's N: when that is rounded up, B is too.
  s.pad_b = !k_rows || b % 16 != 0 || (knobs.mainloop == Mainloop::kMmaCpAsync && !n_rows);
  s.pad_c = !n_rows || c % 16 != 0;
  s.k = k_rows ? p.k : RoundUp(p.k, chunk);
  s.n = n_rows ? p.n : RoundUp8(p.n);
  s.on_tile = !s.Pads() && p.m % (int64_t(knobs.block_m) * knobs.cluster_m) == 0 &&
              p.n % (int64_t(knobs.block_n) * knobs.cluster_n) == 0 && p.k % BlockK(knobs) == 0;
  return s;
}

/// `p` with A and B swapped: the problem of C^T = B A^T (swap-AB).
constexpr Problem SwappedProblem(const Problem& p) { return Problem{p.n, p.m, p.k, p.dtype}; }

/// "" when a rung of `dtype` (bf16, or fp8 for the fp8 ladder) can run `p` at all (that dtype,
/// M, N, K from 1 to the kernels' 32-bit coordinates, the count of its block_m x block_n tiles in
/// 32 bits), else the sentence naming the field.
std::string ShapeError(const Problem& p, DType dtype = DType::kBF16, int block_m = kBlockM,
                       int block_n = kBlockN);

/// Copies the operands `plan` pads into buffers of the process (kept and grown, as the stream-K
/// workspace: the worker launches from one thread) on args.stream, and sets `out` to the
/// problem the kernel runs: the padded operands and `plan.n`, `plan.k`. "" or what failed.
std::string PadOperands(const GemmArgs& args, const ShapePlan& plan, GemmArgs* out);

/// After the kernel ran on `padded` (PadOperands): copies its C into the caller's, when padded.
std::string UnpadC(const GemmArgs& args, const ShapePlan& plan, const GemmArgs& padded);

}  // namespace ablation::kernels::sm90
