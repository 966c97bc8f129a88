// The order in which a round visits a run's items: a permutation shuffled from the run's order
// seed and the round, reproducible anywhere (the generator and the shuffle are spelled out here,
// not left to a standard library's unspecified std::shuffle), so a stored run says exactly what
// ran when.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace ablation::core {

/// Indices 0..n-1 in round `round`'s order.
std::vector<size_t> RoundOrder(size_t n, uint64_t order_seed, int round);

/// The order seed of a run that did not ask for one: from its id, never 0.
uint64_t DefaultOrderSeed(int64_t run_id);

}  // namespace ablation::core
