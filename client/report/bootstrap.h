// The percentile bootstrap of the report's intervals (stats.h says which draws and why): the
// resampling engine under stats.cc, its sides, draws and percentiles. Internal to client/report.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "client/report/stats.h"

namespace ablation::client::report::bootstrap {

using Units = std::vector<std::vector<double>>;

// One side of a bootstrap: the values of its units (rounds, or single samples) sorted, each with
// its unit. A draw's multiset is these values, each as often as its unit was drawn, so its
// median is one walk that counts, with no copy and no sort per draw.
class Side {
 public:
  // window: the half-width, in sorted positions, of DrawMedian's window around the middle (0:
  // kWindowSds standard deviations of a draw's median position); the tests set a small one.
  explicit Side(const Units& units, std::size_t window = 0)
      : sizes_(units.size()), memoise_(units.size() <= 16) {
    for (std::uint32_t u = 0; u < units.size(); ++u) {
      sizes_[u] = units[u].size();
      for (double v : units[u]) sorted_.emplace_back(v, u);
    }
    std::sort(sorted_.begin(), sorted_.end());
    PlaceWindow(window);
  }
  std::size_t units() const { return sizes_.size(); }
  // Whether Median may be called from several threads at once (no memo to fill).
  bool shareable() const { return !memoise_; }
  // Two independent 64-bit hashes of the values, their units and the units' sizes: the key, with
  // the seed and the draws' count, under which a side's sampled draws are kept (DrawMedians, the
  // one caller: made there, not for every side).
  std::pair<std::uint64_t, std::uint64_t> Fingerprint() const;

  // counts[u]: how often unit u was drawn. With few units many draws repeat a multiset (27
  // ordered draws of 3 rounds are 10 multisets), hence the memo.
  double Median(const std::vector<std::uint32_t>& counts);
  // One draw of units() units from units() (units() calls of rng.Below(units()), as the draw of
  // counts makes them) and its median: Median of those counts, bit for bit. Where every unit is
  // one sample (a round's single samples, thousands of them), without the counts: each drawn
  // sample's sorted position either falls below a window around the middle (counted) or in it
  // (a histogram of the window), and the median is read from the window; a draw whose median
  // lies outside the window (beyond kWindowSds standard deviations: about never) is drawn again
  // from a copy of the generator into the counts and walked as Median walks. `scratch`: the
  // calling thread's own, of units() entries.
  double DrawMedian(SplitMix64& rng, std::vector<std::uint32_t>& scratch);
  // The draws DrawMedian took the whole walk for since the side was made (the tests' window).
  std::size_t whole_walks() const { return whole_walks_.load(); }
  // Whether DrawMedian may count its draws 8 at a time where the CPU has AVX-512 (the default);
  // the tests turn it off to compare the two, which give the same medians bit for bit.
  void set_vector(bool vector) { vector_ = vector; }

  // A draw's median position has a standard deviation of about sqrt(n) / 2 positions.
  static constexpr double kWindowSds = 8;

 private:
  void PlaceWindow(std::size_t window);
  // The median of a multiset of n values over sorted_'s positions [from, to), `seen` of them
  // below `from` and count(p) at position p: the mean of its values of ranks (n - 1) / 2 and
  // n / 2 (equal for odd n), set in *median. False, *median untouched, where either rank lies
  // outside [from, to). Median and DrawMedian's window both walk it.
  template <class Count>
  bool WalkMedian(std::size_t n, std::size_t seen, std::size_t from, std::size_t to, Count count,
                  double* median) const {
    const std::size_t lo_rank = (n - 1) / 2, hi_rank = n / 2;
    if (seen > lo_rank) return false;
    double lo = 0;
    bool have_lo = false;
    for (std::size_t p = from; p < to; ++p) {
      seen += count(p);
      if (!have_lo && seen > lo_rank) {
        lo = sorted_[p].first;
        have_lo = true;
      }
      if (seen > hi_rank) {
        *median = (lo + sorted_[p].first) / 2;
        return true;
      }
    }
    return false;
  }

  std::vector<std::pair<double, std::uint32_t>> sorted_;
  std::vector<std::size_t> sizes_;
  bool memoise_;
  std::map<std::vector<std::uint32_t>, double> memo_;
  // DrawMedian's: each unit's position in sorted_ (empty unless every unit is one sample), and
  // the window of positions [low_, low_ + width_).
  std::vector<std::uint32_t> position_;
  std::size_t low_ = 0, width_ = 0;
  bool vector_ = true;
  std::atomic<std::size_t> whole_walks_{0};
};

void RandomCounts(SplitMix64& rng, std::vector<std::uint32_t>& counts);

/// Whether this CPU and build take DrawMedian's AVX-512 walk (Side::set_vector).
bool VectorDraws();

struct Bounds {
  double low = 0, high = 0;
};

/// The medians of the draws of one side's units: every draw once where they number at most
/// `resamples`, else `resamples` draws from SplitMix64(seed).
std::vector<double> DrawMedians(Side& side, std::uint64_t seed, int resamples);
/// The 2.5% and 97.5% quantiles of `ratios` (sorted in place).
Bounds Percentiles(std::vector<double>& ratios);
/// median(num) / median(den) - 1 over draws that give both sides the same indices.
Bounds Paired(Side& num, Side& den, std::uint64_t seed, int resamples);
/// median(num) / median(den) - 1 over draws of each side on its own.
Bounds Apart(Side& num, Side& den, std::uint64_t seed, int resamples);

}  // namespace ablation::client::report::bootstrap
