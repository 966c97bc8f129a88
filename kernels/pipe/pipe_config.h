// The pipe_ family's configuration space: one tiled GEMM per data type, three ways
// to move the next K tile while the current one computes. Host-only and constexpr, so the
// catalog (no CUDA) and the kernel instances derive names, tiles and shared-memory sizes from the
// same table and cannot drift apart.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "kernels/common/problem.h"

namespace ablation::kernels::pipe {

/// How the K loop overlaps the load of tile N+1 with the compute of tile N.
enum class Pipeline : int {
  kBaseline = 0,  ///< one buffer: load (LDG+STS), sync, compute, sync; nothing overlaps
  kLdg = 1,       ///< two buffers: LDG tile N+1 to registers, compute N, sync, STS, sync
  kCpAsync = 2,   ///< two buffers: cp.async tile N+1, commit, compute N, wait_group 0, sync
};

inline constexpr Pipeline kPipelines[] = {Pipeline::kBaseline, Pipeline::kLdg, Pipeline::kCpAsync};

/// One block tile of one data type. Threads: 4 warps for 64x64 tiles, 8 for 128x128.
struct PipeTile {
  DType dtype = DType::kFP16;
  int bm = 0;
  int bn = 0;
  int bk = 0;
  int threads = 0;
};

/// Registered tiles: the small tile of the usual pipelining example, whose doubled buffers stay
/// far below any shared-memory occupancy cliff (2 KiB A + 2 KiB B per buffer, i.e. BM*BK = BK*BN
/// = 2 KiB of input: k16 for fp16, k32 for int8, k8 for fp32), and 128x128x32 for each type.
inline constexpr PipeTile kPipeTiles[] = {
    {DType::kFP16, 64, 64, 16, 128}, {DType::kFP16, 128, 128, 32, 256},
    {DType::kINT8, 64, 64, 32, 128}, {DType::kINT8, 128, 128, 32, 256},
    {DType::kFP32, 64, 64, 8, 128},  {DType::kFP32, 128, 128, 32, 256},
};

constexpr std::string_view PipelineName(Pipeline p) {
  switch (p) {
    case Pipeline::kBaseline:
      return "baseline";
    case Pipeline::kLdg:
      return "ldg";
    case Pipeline::kCpAsync:
      return "cpasync";
  }
  return "?";
}

/// The short type tag of a variant name (CUTLASS style: f16, i8, f32).
constexpr std::string_view DTypeTag(DType d) {
  switch (d) {
    case DType::kFP16:
      return "f16";
    case DType::kINT8:
      return "i8";
    case DType::kFP32:
      return "f32";
    default:
      return "?";
  }
}

/// Bytes of one input element of the types this family implements (constexpr ElementBytes).
constexpr int InputBytes(DType d) { return d == DType::kINT8 ? 1 : d == DType::kFP16 ? 2 : 4; }

/// int8 mma.sync m16n8k32 takes B "col" (N x K): the int8 variants read B as N x K (b_layout
/// kNK), so both operands are K-contiguous and load with ldmatrix without a byte transpose. fp16
/// reads B as K x N (ldmatrix.trans), fp32 as K x N (rows of B are what an FFMA outer product
/// wants).
constexpr bool BIsNK(DType d) { return d == DType::kINT8; }

/// Shared-memory rows are padded by 16 bytes: every row stride is an odd number of 16-byte units,
/// so the 8 rows one ldmatrix phase reads fall in 8 distinct bank groups (no swizzle to keep in
/// step with ragged-edge loads), and rows stay 16-byte aligned for cp.async and st.shared.v4.
inline constexpr int kRowPadBytes = 16;

/// Row strides (bytes) and tile sizes of one buffer: A is BM rows of BK elements; B is BK rows of
/// BN elements (K x N) or BN rows of BK elements (N x K).
constexpr int AStrideBytes(const PipeTile& t) { return t.bk * InputBytes(t.dtype) + kRowPadBytes; }
constexpr int BStrideBytes(const PipeTile& t) {
  return (BIsNK(t.dtype) ? t.bk : t.bn) * InputBytes(t.dtype) + kRowPadBytes;
}
constexpr int ATileBytes(const PipeTile& t) { return t.bm * AStrideBytes(t); }
constexpr int BTileBytes(const PipeTile& t) {
  return (BIsNK(t.dtype) ? t.bn : t.bk) * BStrideBytes(t);
}
constexpr int BufferBytes(const PipeTile& t) { return ATileBytes(t) + BTileBytes(t); }
constexpr int Buffers(Pipeline p) { return p == Pipeline::kBaseline ? 1 : 2; }
/// Dynamic shared memory of a variant: its buffers, nothing else (C is written from registers).
constexpr int SmemBytes(Pipeline p, const PipeTile& t) { return Buffers(p) * BufferBytes(t); }

/// "pipe_{baseline|ldg|cpasync}_{f16|i8|f32}_{BM}x{BN}x{BK}", e.g. pipe_cpasync_f16_64x64x16.
inline std::string PipeVariantName(Pipeline p, const PipeTile& t) {
  return "pipe_" + std::string(PipelineName(p)) + "_" + std::string(DTypeTag(t.dtype)) + "_" +
         std::to_string(t.bm) + "x" + std::to_string(t.bn) + "x" + std::to_string(t.bk);
}

}  // namespace ablation::kernels::pipe
