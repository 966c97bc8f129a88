// The small-shape ladder's per-bucket rung (S8, notes/small-shape-ladder.md): a table from a
// shape's bucket to the Hopper build that ran it fastest, made from measured results databases
// by tools/sm90_bucket_table.py (sm90_bucket_picks.inc, which names them). Host-only header: the
// catalog describes the rung with it, the worker follows it, the host tests check it.
//
// A shape's bucket is the class of each of M, N and K (the first bound at or above it; past the
// last, one more). A bucket the table names runs that build's entry whole (its few-row path,
// tiles, swaps and checks); any other runs the ladder's last rung (kBucketDefault). The table
// holds only picks that beat the default beyond the noise at every measured shape of their
// bucket (the tool's rule), so S8 is S7 wherever nothing was measured.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string_view>

#include "kernels/common/problem.h"
#include "kernels/sm90/sm90_few_rows.h"

namespace ablation::kernels::sm90 {

/// The per-bucket rung's variant name.
inline constexpr std::string_view kBucketRung = "sm90_s8_buckets";
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

/// Whether `name` is a rung of the small-shape ladder (the table's default must be one).
constexpr bool IsSmallRung(std::string_view name) {
  for (const SmallRung& r : kSmallRungs)
    if (r.name == name) return true;
  return false;
}
static_assert(IsSmallRung(kBucketDefault),
              "the bucket table's default is a rung of the small-shape ladder: make the table "
              "again (tools/sm90_bucket_table.py) against one");

/// The build `picks` (the table) names for p's bucket, or the default.
constexpr std::string_view BucketVariantFor(const Problem& p,
                                            std::span<const BucketPick> picks = kBucketPicks) {
  const int m = BucketClass(p.m, kBucketRowBounds), n = BucketClass(p.n, kBucketRowBounds),
            k = BucketClass(p.k, kBucketDepthBounds);
  for (const BucketPick& pick : picks)
    if (pick.m_class == m && pick.n_class == n && pick.k_class == k) return pick.variant;
  return kBucketDefault;
}

}  // namespace ablation::kernels::sm90

namespace ablation::kernels {
class Registry;
namespace sm90 {
/// Registers the per-bucket rung (sm90_buckets.cc) as `name` over the entries of the builds it
/// runs by `picks`, registered before; nothing where one of them is missing. (The tests give a
/// table and a name of their own.)
void RegisterSm90BucketRung(Registry& registry, std::span<const BucketPick> picks = kBucketPicks,
                            std::string_view name = kBucketRung);
/// Binds it in the worker: each problem runs the launch of the build its bucket names, every one
/// of them bound before.
void BindSm90BucketRung(Registry& registry, std::span<const BucketPick> picks = kBucketPicks,
                        std::string_view name = kBucketRung);
}  // namespace sm90
}  // namespace ablation::kernels
