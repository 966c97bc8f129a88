#include "server/worker/sample_plan.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace ablation::worker {

// A switch rather than a table, so that the compiler names a value left out (-Wswitch): alike
// in shape to the other enum words of the tree, with words of its own.
const char* L2MethodText(L2Method m) {
  switch (m) {
    case L2Method::kRotate:
      return "cold (rotated)";
    case L2Method::kFlush:
      return "cold (flushed)";
    case L2Method::kHot:
      return "hot";
  }
  return "?";
}

L2Method RequestedL2Method(bool hot_l2, bool flush_l2) {
  if (hot_l2) return L2Method::kHot;
  return flush_l2 ? L2Method::kFlush : L2Method::kRotate;
}

L2Plan PlanL2(bool hot_l2, bool flush_l2, double set_bytes, double l2_bytes, double free_bytes) {
  L2Plan plan;
  plan.method = RequestedL2Method(hot_l2, flush_l2);
  if (plan.method != L2Method::kRotate) return plan;
  set_bytes = std::max(set_bytes, 1.0);
  const double copies = std::max(2.0, std::floor(2 * std::max(l2_bytes, 0.0) / set_bytes) + 1);
  const double extra = (copies - 1) * set_bytes;
  if (extra > kRotationMemoryShare * free_bytes) {
    char buf[256];
    std::snprintf(buf, sizeof buf,
                  "L2 rotation needs %.0f copies of %.1f MiB of inputs, %.1f MiB beyond the first, "
                  "more than %.0f%% of the %.1f MiB free: the L2 is flushed before each sample",
                  copies, set_bytes / (1 << 20), extra / (1 << 20), 100 * kRotationMemoryShare,
                  free_bytes / (1 << 20));
    plan.method = L2Method::kFlush;
    plan.note = buf;
    return plan;
  }
  plan.method = L2Method::kRotate;
  plan.copies = int64_t(copies);
  return plan;
}

bool WindowDone(const WindowSpec& w, int64_t cycles, double elapsed_ms) {
  if (w.max_cycles > 0 && cycles >= w.max_cycles) return true;
  return cycles >= std::max<int64_t>(w.min_cycles, 1) && elapsed_ms >= w.window_ms;
}

int64_t CyclesLeft(const WindowSpec& w, int64_t cycles, double elapsed_ms, double cycle_ms) {
  if (WindowDone(w, cycles, elapsed_ms)) return 0;
  int64_t left = std::max<int64_t>(std::max<int64_t>(w.min_cycles, 1) - cycles, 1);
  if (cycle_ms > 0 && std::isfinite(cycle_ms) && elapsed_ms < w.window_ms) {
    const double by_time = std::ceil((w.window_ms - elapsed_ms) / cycle_ms);
    // A cap far beyond any real window keeps the conversion defined.
    left = std::max<int64_t>(left, int64_t(std::min(by_time, 1e12)));
  }
  if (w.max_cycles > 0) left = std::min(left, w.max_cycles - cycles);
  return std::max<int64_t>(left, 1);
}

int WindowBatchSize(int members, int64_t next, int64_t cycles_left, double sample_ms) {
  if (members < 1 || cycles_left <= 0) return 0;
  const int64_t position = next % members;
  if (members > kMaxBatch) return int(std::min<int64_t>(kMaxBatch, members - position));
  // Whole cycles from a cycle boundary; a batch that starts mid-cycle (after a dropped batch or a
  // cap) first completes its cycle.
  if (position != 0) return int(members - position);
  double cycles = std::floor(double(kMaxBatch) / members);
  if (sample_ms > 0 && std::isfinite(sample_ms))
    cycles = std::min(cycles, std::floor(kBatchTargetMs / (sample_ms * members)));
  cycles = std::clamp(cycles, 1.0, double(cycles_left));
  return int(cycles) * members;
}

namespace {

// SplitMix64 (Steele, Lea, Flood 2014), written out: the standard library's engines are fixed,
// but its distributions and std::shuffle are not, and a window's order must be the same on
// every platform.
uint64_t SplitMix64(uint64_t* state) {
  uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

}  // namespace

std::vector<int> CycleOrder(int members, uint64_t seed, int64_t cycle) {
  std::vector<int> order(size_t(std::max(members, 0)));
  for (int i = 0; i < members; ++i) order[size_t(i)] = i;
  uint64_t state = seed ^ (0xD1B54A32D192ED03ull * uint64_t(cycle + 1));
  for (int i = members - 1; i > 0; --i) {
    // An index below i + 1 by multiply-shift (bias below (i + 1) / 2^64).
    const uint64_t j =
        uint64_t((static_cast<unsigned __int128>(SplitMix64(&state)) * uint64_t(i + 1)) >> 64);
    std::swap(order[size_t(i)], order[size_t(j)]);
  }
  return order;
}

}  // namespace ablation::worker
