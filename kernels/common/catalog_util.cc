#include "kernels/common/catalog_util.h"

#include <cstdint>
#include <utility>

namespace ablation::kernels {

std::string BlockTiledCanImplement(const Problem& p, DType dtype, std::string_view family,
                                   Tile block) {
  if (p.dtype != dtype) {
    return "dtype must be " + std::string(ToString(dtype)) + " for the " + std::string(family) +
           " family, got " + std::string(ToString(p.dtype));
  }
  for (auto [field, v] : {std::pair{"m", p.m}, std::pair{"n", p.n}, std::pair{"k", p.k}}) {
    if (v <= 0) return std::string(field) + " must be positive, got " + std::to_string(v);
  }
  const std::string bm = std::to_string(block.m);
  const std::string bn = std::to_string(block.n);
  if (p.m % block.m != 0) {
    return "m must be a multiple of " + bm + " (the block tile BM), got " + std::to_string(p.m);
  }
  if (p.n % block.n != 0) {
    return "n must be a multiple of " + bn + " (the block tile BN), got " + std::to_string(p.n);
  }
  if (p.k % block.k != 0) {
    return "k must be a multiple of " + std::to_string(block.k) + " (the block tile BK), got " +
           std::to_string(p.k);
  }
  constexpr int64_t kIntMax = (int64_t(1) << 31) - 1;
  if (p.m > kIntMax || p.n > kIntMax || p.k > kIntMax) return "m, n and k must fit in int";
  if ((p.m / block.m) * (p.n / block.n) > kIntMax) {
    return "(m/" + bm + ")*(n/" + bn + ") must fit in int (one block per C tile)";
  }
  return "";
}

}  // namespace ablation::kernels
