// The statistics behind `report` and `compare`. Pure and deterministic.
//
// Items and rounds. A run measures every item (variant x dtype x shape) once per round, the
// rounds visiting the items in shuffled orders, so an item's data is one RoundData per round: the
// round's samples (ms, or SM cycles) and its median. The item's median (ItemMedian) is the median
// of all its samples pooled when every round has samples, else the median of its rounds' medians
// (rows stored without samples); of one round, that round's median as stored; medians, because GPU
// timings have a long right tail (clock dips, preemption) that moves a mean but not a median.
//
// Changes. A change is a ratio of two item medians, minus 1. In the report, the speed change of a
// rung against the one it is compared with: median(previous) / median(this) - 1 (+0.10: 10%
// faster). In compare, the time change of run B against run A: median(b) / median(a) - 1 (+0.05:
// B takes 5% longer).
//
// Intervals. 95%, a percentile bootstrap that resamples ROUNDS as the unit, because the drift
// between rounds (power cap, temperature, clocks) is several times the noise within one: a draw
// picks R rounds with replacement and recomputes each side's median from the samples of the
// rounds picked, each as often as it was picked.
//  - Within a run (SpeedChange) the draw is paired: both sides take the same round indices, since
//    a round is a span of time that both items were measured in. R: the rounds both sides have.
//  - Across runs (TimeChange) each side's rounds are drawn on their own.
//  - Which draws: when the possible ordered draws number at most `resamples` (R^R paired,
//    Ra^Ra * Rb^Rb across runs: 3 rounds give 27 and 729), every one of them once, which is the
//    bootstrap distribution exactly; else `resamples` draws from SplitMix64(seed), an index below
//    n being (x * n) >> 64 of the next output x; drawn apart, the numerator's indices (previous,
//    or B) come first, then the denominator's.
//  - The bounds: the B ratios sorted, v[0] <= ... <= v[B-1], at p = 0.025 and 0.975 the quantile
//    with linear interpolation between closest ranks (Hyndman-Fan type 7, R's default):
//    q(p) = v[i] + f * (v[i+1] - v[i]) where i + f = p * (B - 1).
//  - With fewer than 2 rounds (in common, or on a side across runs): the same bootstrap over the
//    single samples, each side on its own, basis kSamples: "one round: interval from samples,
//    drift not included". With fewer than 2 samples on a side as well: the estimate alone.
//
// Floor. An item's round spread is (max - min) / median of its rounds' medians (2+ rounds); the
// run's floor is the median of its items' round spreads, 0 (unknown) when no item has 2 rounds.
// A change is "within noise" when its interval contains 0 OR |estimate| < floor (both give or
// take kRounding): a difference smaller than how far an item's own rounds disagree is nothing to
// bet on, however narrow the interval. Compare uses the larger of the two runs' floors.
//
// Cycles. The same computations on per-sample SM cycles (sample_cycles; a round's median_cycles
// where the samples are absent), which a clock change does not move; with their own floor.
//
// Paired changes. Rows of one run measured in one window were interleaved: sample c of each comes
// from cycle c, which launched every variant of the window once, so both saw the same clock and
// the ratio of their samples c cancels it (PairedRound). Of two rows that shared windows in R
// rounds, the speed change of self against vs:
//  - per round r, d_r = the median over the window's cycles c of log(vs[c] / self[c]), a cycle
//    counting only where both values are finite and positive (a failed clock probe leaves NaN;
//    the values stay aligned by c, never filtered side by side first);
//  - the estimate exp(mean d_r) - 1;
//  - R >= 2: the 95% interval exp(mean +- h) - 1 with h = sqrt(t^2 + f^2), t = t_0.975(R-1)
//    sd(d) / sqrt(R) and f the run's paired floor (below), basis kPairedRounds. Student's t, not
//    the bootstrap over rounds: with 3 rounds that bootstrap cannot reach beyond [min, max] of
//    the rounds and so is too narrow, where the t interval widens by what so few rounds cannot
//    tell. The floor beside it because the rounds of one run share what the run gives every
//    pair (its buffers' placement, the GPU's state): on the H200 three runs' paired changes of a
//    rung differed by up to twice one run's t half-width, and by less than the floor;
//  - R = 1: the percentile bootstrap over the window's cycles of the median log ratio (as above:
//    every draw when they number at most `resamples`, else draws from SplitMix64(seed)), basis
//    kPairedCycles: "one round: interval from the window's cycles, drift not included";
//    fewer than 2 cycles: the estimate alone (kMedians).
// The paired floor: the median, over every two items that shared windows in 2+ rounds, of
// max d_r - min d_r (PairedSpread), in logs: at these sizes the same as a ratio. A paired change
// is within noise as any other (its interval holds 0, or it is below that floor).
// The clock's part: self's clock / vs's - 1 from each round's median clocks, exp(mean log ratio)
// - 1; since time = cycles / clock, (1 + time change) ~ (1 + cycles change) (1 + clock change).
//
// Welch. compare's model (JSON) also carries Welch's unequal-variance t-test on the logarithms of
// all samples pooled, for reference: it treats samples as independent draws, which the drift
// between rounds makes them not, so no verdict uses it. Two-sided p from Student's t with the
// Welch-Satterthwaite degrees of freedom; 95% interval of the time change exp(diff +- t_0.975(df) *
// se) - 1.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string_view>
#include <vector>

#include "common/stats.h"

namespace ablation::client::report {

inline constexpr int kBootstrapResamples = 2000;
/// The threads a large sampled bootstrap's draws are split among (0: the machine's cores, at most
/// 16; 1: none). Every draw is the one the serial loop makes (SplitMix64::Skip), so the figures
/// do not depend on it; the tests set it to compare.
void SetBootstrapThreads(int threads);
/// Forgets the sampled draws kept so far (a report asks for one row's interval in several of its
/// sections; each side's draws are made once per process and kept): the tests that compare two
/// ways of drawing call it between them.
void ForgetBootstrapDraws();
// Changes and bounds within a billionth of 0 are 0: what floating point leaves of the same time
// computed two ways (the fake worker's cycles at two clocks), far below any timer's resolution.
inline constexpr double kRounding = 1e-9;
inline constexpr const char* kOneRoundNote = "one round: interval from samples, drift not included";
inline constexpr const char* kNoSamplesNote = "one round, under 2 samples a side: no interval";
inline constexpr const char* kPairedOneRoundNote =
    "one round: interval from the window's cycles, drift not included";

// The median (NaN for none) and the type-7 quantile: common/stats.h's, the worker's and the
// daemon's too.
using common::Median;
using common::Quantile;

/// SplitMix64 (Steele, Lea, Flood 2014): tiny, and the same on every platform, which the
/// standard library's distributions are not.
class SplitMix64 {
 public:
  /// The state's step a call, and the output mix's two multipliers (bootstrap.cc's vector walk
  /// makes the same outputs from them).
  static constexpr std::uint64_t kGamma = 0x9E3779B97F4A7C15ull;
  static constexpr std::uint64_t kMix1 = 0xBF58476D1CE4E5B9ull;
  static constexpr std::uint64_t kMix2 = 0x94D049BB133111EBull;

  explicit SplitMix64(std::uint64_t seed) : state_(seed) {}
  std::uint64_t Next() {
    std::uint64_t z = (state_ += kGamma);
    z = (z ^ (z >> 30)) * kMix1;
    z = (z ^ (z >> 27)) * kMix2;
    return z ^ (z >> 31);
  }
  /// The generator as it is after `draws` more calls of Next (its state moves by a constant a
  /// call), so that a resample's draws can be made without making those before it.
  void Skip(std::uint64_t draws) { state_ += draws * kGamma; }
  /// The state the next call of Next moves on from (a vector path makes several calls at once).
  std::uint64_t state() const { return state_; }
  /// Uniform in [0, n) by multiply-shift (bias below n / 2^64).
  std::size_t Below(std::size_t n) {
    return static_cast<std::size_t>((static_cast<unsigned __int128>(Next()) * n) >> 64);
  }

 private:
  std::uint64_t state_;
};

/// One round of an item: its samples (finite and positive; empty where the row has none) and
/// its median (of the samples, else as stored).
struct RoundData {
  int round = 0;
  std::vector<double> samples;
  double median = std::numeric_limits<double>::quiet_NaN();
};
using ItemRounds = std::vector<RoundData>;  // by round, ascending

/// All samples pooled when every round has samples, else the rounds' medians; one round: its
/// median. NaN for none.
double ItemMedian(const ItemRounds& item);
/// (max - min) / median of the rounds' medians; NaN with fewer than 2 rounds.
double RoundSpread(const ItemRounds& item);
/// The median of the finite spreads; 0 when there is none.
double NoiseFloor(const std::vector<double>& spreads);

// Levels. A kernel can settle, for a whole window, on one of a few speeds (on an H100 one build
// read 35.1, 40.4 or 42.3 TFLOPS a window, each window with 0.1% noise, the two rounds of one run
// on different levels: notes/gpu-runs.md, 2026-12-07). Its pooled median is then a mix of levels
// that no single window shows, and a figure from one window is one draw of them. An item's rounds
// are "apart" when the spread of their medians (RoundSpread) is at least kApartMin and at least
// kApartFactor times the spread within a round: the median over its rounds of (p75 - p25) /
// median of the round's samples. Every round needs kApartMinSamples samples; on SM cycles where
// they are known, so that a clock that moved between rounds is not taken for levels.
inline constexpr double kApartMin = 0.02;
inline constexpr double kApartFactor = 4;
inline constexpr std::size_t kApartMinSamples = 8;
struct RoundLevels {
  double spread = 0;  ///< RoundSpread of the item
  double within = 0;  ///< the median relative interquartile range of its rounds
};
/// The item's rounds' RoundLevels when they are apart; nullopt when they are not, or cannot be told
/// (under 2 rounds, a round under kApartMinSamples samples).
std::optional<RoundLevels> RoundsApart(const ItemRounds& item);
/// An item's RoundsApart on its SM cycles where every round has kApartMinSamples of them
/// (*on_cycles set), else on its times: the rounds of one item, as run_index's Times and Cycles.
std::optional<RoundLevels> LevelsOf(const ItemRounds& times, const ItemRounds& cycles,
                                    bool* on_cycles = nullptr);

enum class Basis {
  kMedians,       ///< no interval: fewer than 2 rounds and fewer than 2 samples on a side
  kSamples,       ///< one round: a bootstrap over samples, drift not included
  kRounds,        ///< a bootstrap over rounds
  kPairedRounds,  ///< paired windows, 2+ rounds: Student's t over the rounds' median log ratios
  kPairedCycles,  ///< one paired window: a bootstrap over its cycles, drift not included
};

struct Change {
  double estimate = 0;        ///< the ratio of the medians, minus 1
  bool has_interval = false;  ///< false for kMedians
  double low = 0;             ///< 95%
  double high = 0;
  Basis basis = Basis::kMedians;
  int rounds = 0;  ///< rounds resampled (paired: in common; across runs: the fewer of the sides)
  double floor = 0;
  bool paired = false;  ///< from shared windows (PairedChange)
  bool within_noise() const {
    return (has_interval && low <= kRounding && high >= -kRounding) ||
           std::fabs(estimate) < std::max(floor, kRounding);
  }
};

/// The speed change of `self` against `previous`, both of one run: median(previous) /
/// median(self) - 1, with the paired round bootstrap.
Change SpeedChange(const ItemRounds& previous, const ItemRounds& self, double floor,
                   std::uint64_t seed, int resamples = kBootstrapResamples);
/// The time change of run B's item against run A's: median(b) / median(a) - 1, the rounds of
/// each side resampled on their own.
Change TimeChange(const ItemRounds& a, const ItemRounds& b, double floor, std::uint64_t seed,
                  int resamples = kBootstrapResamples);

/// A 95% interval of an item's median (ItemMedian): the percentile bootstrap over its rounds,
/// each draw the median of the rounds picked as ItemMedian pools them, every draw once where they
/// number at most `resamples`; one round: over its single samples. False (no interval) with
/// fewer than 2 rounds and fewer than 2 samples.
bool MedianInterval(const ItemRounds& item, std::uint64_t seed, double* low, double* high,
                    int resamples = kBootstrapResamples);

/// One window that two rows of a run were interleaved in: each row's per-sample values (ms, SM
/// cycles or MHz) as stored, sample c of both from cycle c; NaN or <= 0 where a probe failed.
struct PairedRound {
  int round = 0;
  std::vector<double> self;
  std::vector<double> vs;
};

/// log(vs[c] / self[c]) for every c of both where both are finite and positive, in order of c.
std::vector<double> PairedLogRatios(const PairedRound& round);
/// The round's d: the median of its log ratios; NaN without a pair.
double PairedRoundLog(const PairedRound& round);
/// max d - min d over the rounds that have a d; NaN with fewer than 2.
double PairedSpread(const std::vector<PairedRound>& rounds);
/// The speed change of self against vs from their shared windows (above); nullopt when no round
/// has a pair, which leaves the unpaired computation to the caller.
std::optional<Change> PairedChange(const std::vector<PairedRound>& rounds, double floor,
                                   std::uint64_t seed, int resamples = kBootstrapResamples);
/// self / vs - 1 of the clocks, exp(mean over rounds of log(median self / median vs)) - 1, each
/// side's median over its finite, positive values; NaN without a round that has both.
double PairedClockChange(const std::vector<PairedRound>& clocks);
/// What moved the time of a change, from the cycles change (the work) and the clock change
/// (power): "" within noise; "clock (power)" when |log(1 + clock)| > |log(1 + cycles)|; "work"
/// when |log(1 + clock)| < a quarter of |log(1 + cycles)|; else "work and clock".
const char* ChangeSource(bool within_noise, double cycles_change, double clock_change);

/// A seed from a text key (FNV-1a), so each row's interval is reproducible on its own.
std::uint64_t SeedFor(std::string_view key);

/// Welch's t-test on log times: b against a.
struct WelchResult {
  bool valid = false;      ///< false with fewer than 2 samples on a side
  double time_change = 0;  ///< exp(mean log b - mean log a) - 1: +0.05 means b takes 5% longer
  double low = 0;          ///< 95% interval of time_change
  double high = 0;
  double t = 0;
  double df = 0;
  double p = 1;  ///< two-sided
};
WelchResult WelchLogT(const std::vector<double>& a_ms, const std::vector<double>& b_ms);

/// Student's t distribution: P(T <= t) with `df` degrees of freedom (df > 0), and its inverse.
double StudentTCdf(double t, double df);
double StudentTQuantile(double p, double df);

}  // namespace ablation::client::report
