#include "server/core/runs/round_order.h"

#include <numeric>

namespace ablation::core {
namespace {

// SplitMix64 (Steele, Lea, Flood 2014): a tiny generator whose every output is specified, so the
// same seed gives the same order with any compiler and standard library.
uint64_t SplitMix64(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

}  // namespace

std::vector<size_t> RoundOrder(size_t n, uint64_t order_seed, int round) {
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), size_t{0});
  uint64_t state = order_seed ^ (0x5851f42d4c957f2dull * uint64_t(round + 1));
  // Fisher-Yates; the modulo's bias is below 2^-40 for any n a plan can hold.
  for (size_t i = n; i > 1; --i) std::swap(order[i - 1], order[SplitMix64(state) % i]);
  return order;
}

uint64_t DefaultOrderSeed(int64_t run_id) {
  uint64_t state = uint64_t(run_id);
  const uint64_t seed = SplitMix64(state);
  return seed ? seed : 1;
}

}  // namespace ablation::core
