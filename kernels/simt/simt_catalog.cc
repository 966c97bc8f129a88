#include "kernels/simt/simt_catalog.h"

#include <cstdint>
#include <utility>

#include "kernels/common/catalog_util.h"
#include "kernels/simt/simt_shape.h"

namespace ablation::kernels {
namespace {

using namespace simt_gemm;

/// What the rung adds over the previous one (the ladder is cumulative).
const char* Adds(const SimtRung& r) {
  if (r.double_buffer)
    return "+ double-buffered shared memory (next tile's ld.global overlaps the FFMAs, one barrier "
           "per tile)";
  if (r.coalesced_c)
    return "+ C written with float4 stores (each warp store covers whole 256-byte row segments)";
  if (r.swizzle)
    return "+ XOR swizzle of the transposed A store (m ^ 16*(k/4)): bank-conflict free";
  if (r.a_transposed)
    return "+ A transposed into shared memory (As[k][m]): the inner loop reads A as float4";
  return "shared-memory tiling 128x128x8, 256 threads, 8x8 outputs per thread (register blocking)";
}

}  // namespace

std::string SimtCanImplement(const Problem& p) {
  return BlockTiledCanImplement(p, DType::kFP32, "simt", {kBlockM, kBlockN, kBlockK});
}

void RegisterSimt(Registry& registry) {
  for (const SimtRung& r : kSimtRungs) {
    Variant v;
    v.name = r.name;
    v.family = "simt";
    v.description = std::string("FP32 FFMA (CUDA cores, no Tensor Cores): ") + Adds(r);
    v.params = {{"a_transposed", r.a_transposed},
                {"swizzle", r.swizzle},
                {"coalesced_c", r.coalesced_c},
                {"double_buffer", r.double_buffer},
                {"thread_tile", "8x8"}};
    v.dtypes = {DType::kFP32};
    v.tile = {kBlockM, kBlockN, kBlockK};
    v.threads = kThreads;
    v.smem_bytes = SmemBytes(r.double_buffer);
    v.b_layout = BLayout::kKN;
    // Same outputs per thread, one fmaf chain per output in ascending k on every rung.
    v.bit_exact_family = true;
    v.can_implement = &SimtCanImplement;
    registry.Add(std::move(v));
  }
}

}  // namespace ablation::kernels
