#include "kernels/ablation/ablation_catalog.h"

#include <cstdint>

#include "kernels/ablation/ablation_shape.h"

namespace ablation::kernels {
namespace {

using namespace ablation_gemm;

std::string Describe(const AblationConfig& c) {
  std::string d = c.load_mode == 0 ? "ld.global+st.shared" : "cp.async.cg";
  d += c.read_mode == 0 ? ", ld.shared fragments" : ", ldmatrix fragments";
  d += c.b_layout == 0 ? ", Bs[BK][BN] (B is KxN)" : ", Bs[BN][BK] (B is NxK)";
  d += ", " + std::to_string(c.stages) +
       (c.stages == 1 ? " stage (load-sync-compute-sync)" : " stages (pipelined)");
  d += c.swizzle == 0 ? ", plain smem rows" : ", XOR-swizzled smem";
  if (c.rb == 1) d += ", register double buffer";
  return d;
}

std::string Positive(const char* field, int64_t v) {
  if (v > 0) return "";
  return std::string(field) + " must be positive, got " + std::to_string(v);
}

}  // namespace

std::string AblationCanImplement(const Problem& p) {
  if (p.dtype != DType::kBF16 && p.dtype != DType::kFP16) {
    return "dtype must be bf16 or fp16 for the ablation family, got " +
           std::string(ToString(p.dtype));
  }
  for (auto [field, v] : {std::pair{"m", p.m}, std::pair{"n", p.n}, std::pair{"k", p.k}}) {
    if (std::string e = Positive(field, v); !e.empty()) return e;
  }
  if (p.m % kBlockM != 0) {
    return "m must be a multiple of 128 (the block tile BM), got " + std::to_string(p.m);
  }
  if (p.n % kBlockN != 0) {
    return "n must be a multiple of 128 (the block tile BN), got " + std::to_string(p.n);
  }
  if (p.k % kBlockK != 0) {
    return "k must be a multiple of 32 (the block tile BK), got " + std::to_string(p.k);
  }
  // The kernel addresses A and B with 32-bit element offsets (registers are its scarce resource).
  constexpr int64_t kLimit = int64_t(1) << 31;
  if (p.m * p.k >= kLimit)
    return "m*k must be below 2^31 elements, got " + std::to_string(p.m * p.k);
  if (p.n * p.k >= kLimit)
    return "n*k must be below 2^31 elements, got " + std::to_string(p.n * p.k);
  return "";
}

void RegisterAblation(Registry& registry) {
  for (const AblationConfig& c : AllAblationConfigs()) {
    Variant v;
    v.name = AblationVariantName(c);
    v.family = "ablation";
    v.description = Describe(c);
    v.params = {{"load_mode", c.load_mode}, {"read_mode", c.read_mode}, {"b_layout", c.b_layout},
                {"stages", c.stages},       {"swizzle", c.swizzle},     {"rb", c.rb}};
    v.dtypes = {DType::kBF16, DType::kFP16};
    v.tile = {kBlockM, kBlockN, kBlockK};
    v.threads = kThreads;
    v.smem_bytes = SmemBytes(c.stages);
    v.b_layout = c.b_layout == 0 ? BLayout::kKN : BLayout::kNK;
    v.bit_exact_family = true;
    v.can_implement = &AblationCanImplement;
    registry.Add(std::move(v));
  }
}

}  // namespace ablation::kernels
