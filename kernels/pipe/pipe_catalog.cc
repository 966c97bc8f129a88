#include "kernels/pipe/pipe_catalog.h"

#include <cstdint>

namespace ablation::kernels {
namespace {

using pipe::Pipeline;
using pipe::PipeTile;

std::string Describe(Pipeline p, const PipeTile& t) {
  std::string d;
  switch (p) {
    case Pipeline::kBaseline:
      d = "baseline: load (ld.global+st.shared), sync, compute, sync; one buffer";
      break;
    case Pipeline::kLdg:
      d = "ldg: tile N+1 prefetched into registers (ld.global) while tile N computes, then stored "
          "to the other buffer between two barriers; two buffers";
      break;
    case Pipeline::kCpAsync:
      d = "cpasync: tile N+1 copied into the other buffer with cp.async.cg (committed before the "
          "compute of tile N, waited and synchronised after it); two buffers";
      break;
  }
  switch (t.dtype) {
    case DType::kFP16:
      d += "; fp16 mma.sync m16n8k16 (HMMA), fp32 accumulate, C fp16; B K x N (ldmatrix.trans)";
      break;
    case DType::kINT8:
      d += "; int8 mma.sync m16n8k32 (IMMA), int32 accumulate, C int32; B N x K";
      break;
    default:
      d += "; fp32 FFMA, 4x8 or 8x8 outputs per thread, C fp32; B K x N";
      break;
  }
  d += "; " + std::to_string(t.bm) + "x" + std::to_string(t.bn) + "x" + std::to_string(t.bk) +
       " tile, " + std::to_string(t.threads) + " threads";
  d += "; ragged M/N/K: edge chunks zero-filled (cp.async src-size, or checked loads)";
  d += "; bit-identical to the other two pipelines of this type and tile (same accumulation order)";
  return d;
}

}  // namespace

std::string PipeCanImplement(DType dtype, const Problem& p) {
  if (p.dtype != dtype) {
    return "dtype must be " + std::string(ToString(dtype)) + " for this entry, got " +
           std::string(ToString(p.dtype));
  }
  constexpr int64_t kIntMax = INT32_MAX;
  for (auto [field, v] : {std::pair{"m", p.m}, std::pair{"n", p.n}, std::pair{"k", p.k}}) {
    if (v <= 0) return std::string(field) + " must be positive, got " + std::to_string(v);
    if (v > kIntMax) return std::string(field) + " must fit in int32, got " + std::to_string(v);
  }
  // One block per 64x64 tile (the smallest registered) in a 1-D grid.
  const int64_t blocks = ((p.m + 63) / 64) * ((p.n + 63) / 64);
  if (blocks > kIntMax) {
    return "m*n must be below 2^31 tiles of 64x64 (the grid is one-dimensional), got " +
           std::to_string(blocks) + " tiles";
  }
  return "";
}

void RegisterPipe(Registry& registry) {
  for (const PipeTile& t : pipe::kPipeTiles) {
    for (Pipeline p : pipe::kPipelines) {
      Variant v;
      v.name = pipe::PipeVariantName(p, t);
      v.family = "pipe";
      v.description = Describe(p, t);
      v.params = {{"variant", std::string(pipe::PipelineName(p))},
                  {"dtype", std::string(ToString(t.dtype))},
                  {"bm", t.bm},
                  {"bn", t.bn},
                  {"bk", t.bk},
                  {"threads", t.threads}};
      v.dtypes = {t.dtype};
      v.tile = {t.bm, t.bn, t.bk};
      v.threads = t.threads;
      v.smem_bytes = pipe::SmemBytes(p, t);
      v.b_layout = pipe::BIsNK(t.dtype) ? BLayout::kNK : BLayout::kKN;
      // Identical bits hold within one type and tile, not across the family's types.
      v.bit_exact_family = false;
      const DType dtype = t.dtype;
      v.can_implement = [dtype](const Problem& problem) {
        return PipeCanImplement(dtype, problem);
      };
      registry.Add(std::move(v));
    }
  }
}

}  // namespace ablation::kernels
