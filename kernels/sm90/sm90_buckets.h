// The small-shape ladder's per-bucket rungs (S8 over S7, S10 over S9, S12 over S11;
// notes/small-shape-ladder.md): each a table from a shape's bucket to the Hopper build that ran it
// fastest beside the rung it is over (by the geometric mean of its gains, S8 and S10, or by its
// slowest cell, S12), made from measured results databases by
// tools/sm90_bucket_table.py (sm90_bucket_picks.inc, sm90_bucket_picks_s10.inc,
// sm90_bucket_picks_s12.inc, which name them). Host-only header: the
// catalog describes the rungs with it, the worker follows them, the host tests check them.
//
// A shape's bucket is the class of each of M, N and K (the first bound at or above it; past the
// last, one more). A bucket a table names runs that build's entry whole (its few-row path, tiles,
// swaps and checks), except a problem the build refuses (a swapped build: M not a multiple of 8);
// any other runs the rung the table is over (its default). A table holds only
// picks that beat its default beyond the noise at every measured shape of their bucket (the
// tool's rule), so a per-bucket rung is its default wherever nothing was measured.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string_view>

#include "kernels/common/problem.h"
#include "kernels/sm90/sm90_few_rows.h"

namespace ablation::kernels::sm90 {

/// Bounds of the classes of M and of N (1, 2-16, 17-128, 129-512, 513-4096, more) and of K
/// (tools/sm90_bucket_table.py has the same).
inline constexpr std::array<int64_t, 5> kBucketRowBounds = {1, 16, 128, 512, 4096};
inline constexpr std::array<int64_t, 2> kBucketDepthBounds = {4096, 16384};

/// A bucket's classes (0 up) and the build the table names for it.
struct BucketPick {
  int m_class = 0, n_class = 0, k_class = 0;
  std::string_view variant;
};

template <size_t N>
constexpr int BucketClass(int64_t value, const std::array<int64_t, N>& bounds) {
  for (size_t i = 0; i < N; ++i)
    if (value <= bounds[i]) return int(i);
  return int(N);
}

#include "kernels/sm90/sm90_bucket_picks.inc"
#include "kernels/sm90/sm90_bucket_picks_s10.inc"
#include "kernels/sm90/sm90_bucket_picks_s12.inc"

/// A per-bucket rung: its variant name and ladder id, the rung its table is over and the table.
struct BucketTable {
  std::string_view rung, id, fallback;
  std::span<const BucketPick> picks;
};

/// The per-bucket rungs, each one change from the rung it is over (S8: a table over S7; S10: a
/// table over S9; S12: a table over S11; the earlier ones kept as measured).
inline constexpr std::array<BucketTable, 3> kBucketTables = {{
    {"sm90_s8_buckets", "S8", bucket_s8::kDefault, bucket_s8::kPicks},
    {"sm90_s10_buckets", "S10", bucket_s10::kDefault, bucket_s10::kPicks},
    {"sm90_s12_buckets", "S12", bucket_s12::kDefault, bucket_s12::kPicks},
}};

/// Whether `name` is a rung of the small-shape ladder (a table's default must be one).
constexpr bool IsSmallRung(std::string_view name) {
  for (const SmallRung& r : kSmallRungs)
    if (r.name == name) return true;
  return false;
}
constexpr bool EveryTableIsOverASmallRung() {
  for (const BucketTable& t : kBucketTables)
    if (!IsSmallRung(t.fallback)) return false;
  return true;
}
static_assert(EveryTableIsOverASmallRung(),
              "a bucket table's default is a rung of the small-shape ladder: make the table "
              "again (tools/sm90_bucket_table.py) against one");

/// The build `table` names for p's bucket, or its default (the registered rung also runs its
/// default where that build refuses p: sm90_buckets.cc).
constexpr std::string_view BucketVariantFor(const Problem& p, const BucketTable& table) {
  const int m = BucketClass(p.m, kBucketRowBounds), n = BucketClass(p.n, kBucketRowBounds),
            k = BucketClass(p.k, kBucketDepthBounds);
  for (const BucketPick& pick : table.picks)
    if (pick.m_class == m && pick.n_class == n && pick.k_class == k) return pick.variant;
  return table.fallback;
}

}  // namespace ablation::kernels::sm90

namespace ablation::kernels {
class Registry;
namespace sm90 {
/// Registers the per-bucket rung `table` (sm90_buckets.cc) over the entries of the builds it
/// runs, registered before; nothing where one of them is missing. (The tests give tables of their
/// own.)
void RegisterSm90BucketRung(Registry& registry, const BucketTable& table);
/// Binds it in the worker: each problem runs the launch of the build its bucket names, every one
/// of them bound before.
void BindSm90BucketRung(Registry& registry, const BucketTable& table);
/// Every per-bucket rung of kBucketTables.
void RegisterSm90BucketRungs(Registry& registry);
void BindSm90BucketRungs(Registry& registry);
}  // namespace sm90
}  // namespace ablation::kernels
