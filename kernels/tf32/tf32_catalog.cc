#include "kernels/tf32/tf32_catalog.h"

#include <cstdint>
#include <utility>

#include "kernels/common/catalog_util.h"
#include "kernels/tf32/tf32_shape.h"

namespace ablation::kernels {

using namespace tf32_gemm;

std::string Tf32CanImplement(const Problem& p) {
  return BlockTiledCanImplement(p, DType::kTF32, "tf32", {kBlockM, kBlockN, kBlockK});
}

void RegisterTf32(Registry& registry) {
  for (const Tf32Variant& t : kTf32Variants) {
    Variant v;
    v.name = t.name;
    v.family = "tf32";
    v.description =
        std::string("TF32 Tensor Cores, mma.sync.m16n8k8 .tf32 with fp32 accumulation; ") +
        (t.load_mode == 0 ? "synchronous ld.global.v4 + st.shared.v4 through registers"
                          : "cp.async.cg 16 B (LDGSTS), commit / wait_group 0") +
        "; 128x128x16 block, 8 warps of 64x32; A fragments by ldmatrix.x4, B by ld.shared.b32; "
        "XOR-swizzled smem (conflict free); double-buffered smem, one barrier per tile";
    v.params = {{"load_mode", t.load_mode},
                {"read_mode", "ldmatrix A, ld.shared B"},
                {"stages", kStages},
                {"swizzle", 1}};
    v.dtypes = {DType::kTF32};
    v.tile = {kBlockM, kBlockN, kBlockK};
    v.threads = kThreads;
    v.smem_bytes = kSmemBytes;
    v.b_layout = BLayout::kKN;
    // The two only move data differently: same mma on each accumulator in the same order.
    v.bit_exact_family = true;
    v.can_implement = &Tf32CanImplement;
    registry.Add(std::move(v));
  }
}

}  // namespace ablation::kernels
