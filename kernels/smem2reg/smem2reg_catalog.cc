#include "kernels/smem2reg/smem2reg_catalog.h"

#include <cstdint>

#include "kernels/ablation/ablation_catalog.h"
#include "kernels/ablation/ablation_shape.h"

namespace ablation::kernels {
namespace {

using namespace ablation_gemm;

constexpr int kKSteps = kBlockK / 16;  // k16 steps per k-tile
constexpr int kMmaM = kWarpM / 16;     // m16 A tiles per warp
constexpr int kMmaN = kWarpN / 8;      // n8 B tiles per warp
constexpr int kWarps = kThreads / 32;  // per block

std::string Describe(const Smem2RegConfig& c) {
  std::string d = "smem->register fragment loads only, no mma: ";
  d += c.read_mode == 0 ? "ld.shared" : "ldmatrix";
  d += c.b_layout == 0 ? ", Bs[BK][BN]" : ", Bs[BN][BK]";
  d += c.swizzle == 0 ? ", plain smem rows" : ", XOR-swizzled smem";
  d += ". For MxNxK: (M/128)x(N/128) blocks of 256 threads, each loading the A and B fragments of "
       "K/32 k-tiles as abl_*_R" +
       std::to_string(c.read_mode) + "_bl" + std::to_string(c.b_layout) + "_*_sw" +
       std::to_string(c.swizzle) + " does; " + std::to_string(Smem2RegLoadsPerWarpTile(c)) +
       " loads of 6144 B per warp and k-tile; C receives a checksum, not a product";
  return d;
}

}  // namespace

std::string Smem2RegVariantName(const Smem2RegConfig& c) {
  return "smem2reg_R" + std::to_string(c.read_mode) + "_bl" + std::to_string(c.b_layout) + "_sw" +
         std::to_string(c.swizzle);
}

std::vector<Smem2RegConfig> AllSmem2RegConfigs() {
  std::vector<Smem2RegConfig> all;
  for (int r = 0; r <= 1; ++r)
    for (int b = 0; b <= 1; ++b)
      for (int w = 0; w <= 1; ++w) all.push_back({r, b, w});
  return all;
}

int Smem2RegLoadsPerWarpTile(const Smem2RegConfig& c) {
  // Per m16 A tile: ldmatrix.x4, or four ld.shared.b32 (a0..a3).
  const int a = c.read_mode == 1 ? 1 : 4;
  // Per n8 B tile: ldmatrix.x2 (.trans for Bs[BK][BN]), or two ld.shared.b32 (Bs[BN][BK]), or
  // four ld.shared.b16 (Bs[BK][BN]: a register's two elements sit in two k rows).
  const int b = c.read_mode == 1 ? 1 : (c.b_layout == 1 ? 2 : 4);
  return kKSteps * (kMmaM * a + kMmaN * b);
}

int Smem2RegBytesPerWarpTile() {
  return kKSteps * (kMmaM * 16 * 16 + kMmaN * 16 * 8) * kElementBytes;
}

WorkModel Smem2RegWork(const Smem2RegConfig& c, const Problem& p) {
  const double warp_tiles =
      double(p.m / kBlockM) * double(p.n / kBlockN) * kWarps * double(p.k / kBlockK);
  WorkModel w;
  w.bytes = warp_tiles * Smem2RegBytesPerWarpTile();
  w.fragment_loads = warp_tiles * Smem2RegLoadsPerWarpTile(c);
  return w;
}

std::string Smem2RegCanImplement(const Problem& p) {
  if (p.dtype != DType::kBF16 && p.dtype != DType::kFP16) {
    return "dtype must be bf16 or fp16 for the smem2reg family, got " +
           std::string(ToString(p.dtype));
  }
  return AblationCanImplement(p);
}

void RegisterSmem2Reg(Registry& registry) {
  for (const Smem2RegConfig& c : AllSmem2RegConfigs()) {
    Variant v;
    v.name = Smem2RegVariantName(c);
    v.family = "smem2reg";
    v.description = Describe(c);
    v.params = {{"read_mode", c.read_mode}, {"b_layout", c.b_layout}, {"swizzle", c.swizzle}};
    v.dtypes = {DType::kBF16, DType::kFP16};
    v.tile = {kBlockM, kBlockN, kBlockK};
    v.threads = kThreads;
    v.smem_bytes = SmemBytes(kSmem2RegStages);
    v.b_layout = c.b_layout == 0 ? BLayout::kKN : BLayout::kNK;
    v.can_implement = &Smem2RegCanImplement;
    v.work = [c](const Problem& p) { return Smem2RegWork(c, p); };
    registry.Add(std::move(v));
  }
}

}  // namespace ablation::kernels
