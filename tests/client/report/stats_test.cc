// The statistics pinned to values worked out by hand (stats.h says how each is defined): the
// type-7 quantile, the generator, Student's t against the printed tables, Welch's interval, the
// exact round bootstrap for 2 and 3 rounds, the sample fall-back, the floor and "within noise";
// then synthetic runs with a known drift between rounds.
#include "client/report/stats.h"

#include "client/report/bootstrap.h"

#include <cmath>
#include <iostream>
#include <optional>

#include <gtest/gtest.h>

namespace ablation::client::report {
namespace {

// A round of one sample, or of several.
RoundData Round(int round, std::vector<double> samples) {
  RoundData r{round, samples};
  r.median = Median(samples);
  return r;
}

// A round of n samples around `ms`, a small deterministic wiggle (+-0.1%) on each.
RoundData Wiggled(int round, double ms, int n = 21) {
  std::vector<double> samples;
  for (int i = 0; i < n; ++i) samples.push_back(ms * (1 + 0.001 * std::sin(1.7 * i + round)));
  return Round(round, samples);
}

TEST(Stats, Median) {
  EXPECT_EQ(Median({3, 1, 2}), 2);
  EXPECT_EQ(Median({4, 1, 3, 2}), 2.5);
  EXPECT_TRUE(std::isnan(Median({})));
}

TEST(Stats, QuantileInterpolatesBetweenClosestRanks) {
  // 5 values: p = 0.025 is at rank 0.1, p = 0.975 at rank 3.9.
  EXPECT_DOUBLE_EQ(Quantile({1, 2, 3, 4, 5}, 0.025), 1.1);
  EXPECT_DOUBLE_EQ(Quantile({1, 2, 3, 4, 5}, 0.975), 4.9);
  EXPECT_DOUBLE_EQ(Quantile({1, 2, 3, 4, 5}, 0.5), 3);
  EXPECT_DOUBLE_EQ(Quantile({7}, 0.975), 7);
}

TEST(Stats, SplitMix64IsTheReferenceGenerator) {
  // The reference outputs of splitmix64.c (Vigna) for seed 1234567.
  SplitMix64 rng(1234567);
  EXPECT_EQ(rng.Next(), 6457827717110365317ull);
  EXPECT_EQ(rng.Next(), 3203168211198807973ull);
  EXPECT_EQ(rng.Next(), 9817491932198370423ull);
  // Below(n) = (x * n) >> 64: 6457827717110365317 * 10 / 2^64 = 3.50...
  SplitMix64 again(1234567);
  EXPECT_EQ(again.Below(10), 3u);
  EXPECT_EQ(SeedFor(""), 0xcbf29ce484222325ull);  // FNV-1a 64, offset basis
  EXPECT_EQ(SeedFor("a"), 0xaf63dc4c8601ec8cull);
}

TEST(Stats, StudentTMatchesTables) {
  EXPECT_NEAR(StudentTCdf(0, 5), 0.5, 1e-12);
  EXPECT_NEAR(StudentTQuantile(0.975, 10), 2.228, 5e-4);  // t_0.975(10) = 2.228
  EXPECT_NEAR(StudentTQuantile(0.95, 10), 1.812, 5e-4);   // t_0.95(10): a 90% interval's
  EXPECT_NEAR(StudentTQuantile(0.975, 5), 2.571, 5e-4);
  EXPECT_NEAR(StudentTQuantile(0.975, 30), 2.042, 5e-4);
  EXPECT_NEAR(StudentTQuantile(0.975, 1e6), 1.960, 5e-4);  // the normal limit
  EXPECT_NEAR(StudentTCdf(-2.228, 10), 0.025, 1e-4);
}

TEST(Stats, WelchIntervalIs95PercentWithTheWelchDegreesOfFreedom) {
  // log a = {0, 0, 0, .1, .1, .1}, log b = log a + 0.1: equal variances 0.003 and n = 6 a side,
  // so df = (2v/6)^2 / (2 (v/6)^2 / 5) = 10 exactly and se = sqrt(2 * 0.003 / 6) = sqrt(0.001).
  // 95%: 0.1 -+ t_0.975(10) * se = 0.1 -+ 2.228139 * 0.0316228 = [0.029540, 0.170460] in logs,
  // a time change of [exp(0.029540) - 1, exp(0.170460) - 1] = [+2.9981%, +18.5850%]. (A 90%
  // interval, t_0.95(10) = 1.812, would give [+4.4%, +16.8%].)
  std::vector<double> a, b;
  for (double x : {0.0, 0.0, 0.0, 0.1, 0.1, 0.1}) {
    a.push_back(std::exp(x));
    b.push_back(std::exp(x + 0.1));
  }
  const WelchResult w = WelchLogT(a, b);
  ASSERT_TRUE(w.valid);
  EXPECT_NEAR(w.df, 10, 1e-9);
  EXPECT_NEAR(w.time_change, std::expm1(0.1), 1e-12);
  EXPECT_NEAR(w.low, 0.029981, 2e-6);
  EXPECT_NEAR(w.high, 0.185850, 2e-6);
  EXPECT_NEAR(w.t, std::sqrt(10.0), 1e-9);  // 0.1 / sqrt(0.001)
  EXPECT_NEAR(w.p, 0.01012, 2e-5);          // 2 P(T_10 > 3.1623), by numerical integration
  EXPECT_NEAR(WelchLogT(a, a).p, 1, 1e-9);
  EXPECT_FALSE(WelchLogT({1.0}, {1.0, 1.1}).valid);
  EXPECT_FALSE(WelchLogT({1.0, -1.0}, {1.0, 1.1}).valid);  // a time must be positive
}

TEST(Stats, TwoRoundsPairedAreFourDrawsEnumerated) {
  // previous: 1.0 in both rounds; self: 1.0 in round 0, 1.25 in round 1. The 4 ordered draws of
  // 2 rounds, the same for both sides: {0,0} self 1.0 -> change 0; {0,1} and {1,0} self
  // median(1.0, 1.25) = 1.125 -> 1/1.125 - 1 = -1/9; {1,1} 1.25 -> -0.2. Sorted: -0.2, -1/9,
  // -1/9, 0. Low at rank 0.075: -0.2 + 0.075 (0.2 - 1/9) = -0.193333; high at rank 2.925: -1/9 +
  // 0.925 (1/9) = -0.008333. The estimate over all samples: 1.0 / 1.125 - 1 = -1/9.
  const Change c =
      SpeedChange({Round(0, {1.0}), Round(1, {1.0})}, {Round(0, {1.0}), Round(1, {1.25})}, 0, 42);
  ASSERT_TRUE(c.has_interval);
  EXPECT_EQ(c.basis, Basis::kRounds);
  EXPECT_EQ(c.rounds, 2);
  EXPECT_NEAR(c.estimate, -1.0 / 9, 1e-12);
  EXPECT_NEAR(c.low, -0.2 + 0.075 * (0.2 - 1.0 / 9), 1e-12);
  EXPECT_NEAR(c.high, -0.075 / 9, 1e-12);
  EXPECT_FALSE(c.within_noise());
  // The seed does not matter when every draw is enumerated.
  const Change d =
      SpeedChange({Round(0, {1.0}), Round(1, {1.0})}, {Round(0, {1.0}), Round(1, {1.25})}, 0, 7);
  EXPECT_EQ(c.low, d.low);
  EXPECT_EQ(c.high, d.high);
}

TEST(Stats, ThreeRoundsAre27DrawsPooledWithMultiplicity) {
  // previous: 1.0 each round; self: round 0 {0.8, 0.9}, round 1 {1.0, 1.1}, round 2 {1.2, 1.3}.
  // A draw pools its rounds' samples, each round as often as drawn. Of the 27 draws: {2,2,2}
  // alone has median 1.25 (change -0.2, rank 0); the 6 with two 2s and one other have median
  // 1.2 (-1/6, ranks 1-6); at the top {0,0,0} has 0.85 (+0.176471, rank 26) and the 6 with two
  // 0s have 0.9 (+1/9, ranks 20-25). Low at rank 0.65: -0.2 + 0.65 (0.2 - 1/6) = -0.178333;
  // high at rank 25.35: 1/9 + 0.35 (1/0.85 - 1 - 1/9) = 0.133987. The estimate: all 6 samples,
  // median 1.05: 1/1.05 - 1 = -0.047619, well inside: the drift between rounds is the noise.
  const ItemRounds previous = {Round(0, {1.0}), Round(1, {1.0}), Round(2, {1.0})};
  const ItemRounds self = {Round(0, {0.8, 0.9}), Round(1, {1.0, 1.1}), Round(2, {1.2, 1.3})};
  const Change c = SpeedChange(previous, self, 0, 42);
  ASSERT_TRUE(c.has_interval);
  EXPECT_EQ(c.rounds, 3);
  EXPECT_NEAR(c.estimate, 1 / 1.05 - 1, 1e-12);
  EXPECT_NEAR(c.low, -0.2 + 0.65 * (0.2 - 1.0 / 6), 1e-12);
  EXPECT_NEAR(c.high, 1.0 / 9 + 0.35 * (1 / 0.85 - 1 - 1.0 / 9), 1e-12);
  EXPECT_TRUE(c.within_noise());
}

TEST(Stats, PairedRoundsCancelADriftThatBothSidesShare) {
  // Both rungs drift alike (+0%, +10%, +20% by round), self 20% faster in every round: every
  // paired draw gives exactly 1/0.8 - 1 = +25%.
  ItemRounds previous, self;
  for (int r = 0; r < 3; ++r) {
    previous.push_back(Round(r, {1.0 + 0.1 * r}));
    self.push_back(Round(r, {0.8 * (1.0 + 0.1 * r)}));
  }
  const Change c = SpeedChange(previous, self, 0, 1);
  EXPECT_NEAR(c.estimate, 0.25, 1e-12);
  EXPECT_NEAR(c.low, 0.25, 1e-12);
  EXPECT_NEAR(c.high, 0.25, 1e-12);
  // Rounds are matched by their number: a round one side lacks is left out of the draws.
  self.erase(self.begin() + 1);
  EXPECT_EQ(SpeedChange(previous, self, 0, 1).rounds, 2);
}

TEST(Stats, OneRoundFallsBackToSamplesAndSaysSo) {
  // One round each: previous {1.0, 1.2}, self {0.8, 1.0}, resampled apart: 4 x 4 = 16 draws.
  // previous' draw medians 1.0, 1.1, 1.1, 1.2; self's 0.8, 0.9, 0.9, 1.0. The 16 ratios sorted:
  // 0, .1, .1, .1111, .1111, .2, .2222 x4, .25, .3333 x2, .375 x2, .5. Low at rank 0.375:
  // 0.0375; high at rank 14.625: 0.375 + 0.625 (0.5 - 0.375) = 0.453125. Estimate 1.1/0.9 - 1.
  const Change c = SpeedChange({Round(0, {1.0, 1.2})}, {Round(0, {0.8, 1.0})}, 0, 42);
  ASSERT_TRUE(c.has_interval);
  EXPECT_EQ(c.basis, Basis::kSamples);
  EXPECT_EQ(c.rounds, 1);
  EXPECT_NEAR(c.estimate, 1.1 / 0.9 - 1, 1e-12);
  EXPECT_NEAR(c.low, 0.0375, 1e-12);
  EXPECT_NEAR(c.high, 0.453125, 1e-12);
  EXPECT_FALSE(c.within_noise());

  // One sample a side: the estimate alone, from the stored medians where samples are absent.
  RoundData stored{0, {}, 2.0};
  const Change alone = SpeedChange({stored}, {Round(0, {1.0})}, 0, 1);
  EXPECT_FALSE(alone.has_interval);
  EXPECT_EQ(alone.basis, Basis::kMedians);
  EXPECT_NEAR(alone.estimate, 1.0, 1e-12);
  EXPECT_FALSE(alone.within_noise());
}

// A side of single samples draws its medians through a window around the middle
// (bootstrap::Side::DrawMedian); each is the median of the counts the same draws make, bit for
// bit, with the generator left where those draws leave it; a draw outside a (made small) window
// is walked whole, with the same result; a side of rounds takes the counts' way.
TEST(Stats, AWindowedDrawsMedianIsTheCountsMedianBitForBit) {
  bootstrap::Units singles;
  for (int i = 0; i < 3001; ++i)  // ties, and an odd count; then an even one
    singles.push_back({std::round(1000 + 40 * std::sin(0.7 * i) + 3 * std::cos(i)) / 10});
  bootstrap::Units even = singles;
  even.push_back({97.5});
  const bootstrap::Units rounds = {{1.0, 1.2, 0.9}, {1.1, 1.0}, {0.95, 1.3, 1.05, 1.0}};
  // As many samples as units, not one a unit: an empty unit beside one of two.
  bootstrap::Units uneven = singles;
  uneven[0].clear();
  uneven[1].push_back(101.5);
  struct Case {
    const bootstrap::Units* units;
    std::size_t window;
    bool walks;  // some draws fall outside the window
  };
  // Few singles, so that the vector walk's last step of 8 has 1 to 7 draws and its lanes reach
  // the side's ends: 17 to 24 units (16 or fewer take the counts' memo).
  std::vector<bootstrap::Units> few;
  for (std::size_t n = 17; n <= 24; ++n)
    few.push_back(bootstrap::Units(singles.begin(), singles.begin() + std::ptrdiff_t(n)));
  std::vector<Case> cases = {Case{&singles, 0, false}, Case{&even, 0, false},
                             Case{&singles, 2, true},  Case{&even, 5, true},
                             Case{&rounds, 0, false},  Case{&uneven, 0, false}};
  for (const bootstrap::Units& units : few) cases.push_back(Case{&units, 0, false});
  if (!bootstrap::VectorDraws())
    std::cout << "note: this CPU has no AVX-512, so only the scalar walk is compared\n";
  for (const bool vector : {true, false})
    for (const Case& c : cases) {
      bootstrap::Side windowed(*c.units, c.window), counted(*c.units);
      windowed.set_vector(vector);
      SplitMix64 a(7), b(7);
      std::vector<std::uint32_t> scratch(c.units->size()), counts(c.units->size());
      for (int r = 0; r < 400; ++r) {
        const double w = windowed.DrawMedian(a, scratch);
        bootstrap::RandomCounts(b, counts);
        ASSERT_EQ(w, counted.Median(counts))
            << c.units->size() << " window " << c.window << " r " << r << " vector " << vector;
      }
      EXPECT_EQ(a.Next(), b.Next());
      EXPECT_EQ(windowed.whole_walks() > 0, c.walks) << windowed.whole_walks();
      if (c.walks) EXPECT_LT(windowed.whole_walks(), 400u);  // the window still serves some
    }
}

// A sampled bootstrap large enough to be split among threads (a cap run's 1 s windows: thousands
// of samples a row) gives, bit for bit, the serial loop's interval whatever the threads: each
// thread's generator is jumped to the draws the serial loop makes there.
TEST(Stats, ThreadsSplittingALargeBootstrapGiveTheSerialFigures) {
  RoundData previous = Wiggled(0, 1.00, 4000), self = Wiggled(0, 0.97, 3500);
  for (double& v : self.samples) v *= 1 + 0.01 * std::cos(v * 977);  // not the same shape
  PairedRound window{0, {}, {}};
  for (int c = 0; c < 5000; ++c) {
    window.self.push_back(1000 + 7 * std::sin(0.37 * c));
    window.vs.push_back(1020 + 9 * std::cos(0.11 * c));
  }
  struct Figures {
    double speed_low, speed_high, median_low, median_high, paired_low, paired_high;
  };
  auto figures = [&](int threads) {
    SetBootstrapThreads(threads);
    ForgetBootstrapDraws();  // else every count after the first would be served the serial draws
    Figures f{};
    const Change c = SpeedChange({previous}, {self}, 0, 42);
    EXPECT_EQ(c.basis, Basis::kSamples);
    f.speed_low = c.low;
    f.speed_high = c.high;
    EXPECT_TRUE(MedianInterval({self}, 43, &f.median_low, &f.median_high));
    const std::optional<Change> p = PairedChange({window}, 0, 44);
    EXPECT_TRUE(p && p->basis == Basis::kPairedCycles);
    if (p) {
      f.paired_low = p->low;
      f.paired_high = p->high;
    }
    return f;
  };
  const Figures serial = figures(1);
  EXPECT_LT(serial.speed_low, serial.speed_high);
  EXPECT_LT(serial.median_low, serial.median_high);
  EXPECT_LT(serial.paired_low, serial.paired_high);
  for (int threads : {2, 3, 7, 0}) {
    const Figures split = figures(threads);
    EXPECT_EQ(split.speed_low, serial.speed_low) << threads;
    EXPECT_EQ(split.speed_high, serial.speed_high) << threads;
    EXPECT_EQ(split.median_low, serial.median_low) << threads;
    EXPECT_EQ(split.median_high, serial.median_high) << threads;
    EXPECT_EQ(split.paired_low, serial.paired_low) << threads;
    EXPECT_EQ(split.paired_high, serial.paired_high) << threads;
  }
  SetBootstrapThreads(0);
}

// A side's sampled draws are kept for the process (a report asks for one row's interval in
// several sections): asked again, the same samples and seed give the same interval without new
// draws; other samples of the same count under the same seed, or the same samples under another
// seed, are drawn afresh, never served another's.
TEST(Stats, KeptDrawsServeOnlyTheSameSamplesAndSeed) {
  ForgetBootstrapDraws();
  const RoundData base = Wiggled(0, 1.00, 3000);
  RoundData other = base;
  for (double& v : other.samples) v *= 1.10;
  RoundData nudged = base;
  nudged.samples[1234] *= 1.5;  // one sample of 3,000: the median moves by a rank at most
  auto interval = [](const RoundData& r, std::uint64_t seed) {
    std::pair<double, double> b{0, 0};
    EXPECT_TRUE(MedianInterval({r}, seed, &b.first, &b.second));
    return b;
  };
  const auto first = interval(base, 43);
  EXPECT_EQ(interval(base, 43), first);  // kept
  const auto scaled = interval(other, 43);
  EXPECT_NEAR(scaled.first, first.first * 1.10, 1e-9 * first.first);
  EXPECT_NEAR(scaled.second, first.second * 1.10, 1e-9 * first.second);
  const auto reseeded = interval(base, 44);
  const auto moved = interval(nudged, 43);
  ForgetBootstrapDraws();  // each drawn afresh: what the kept ones must equal
  EXPECT_EQ(interval(base, 43), first);
  EXPECT_EQ(interval(base, 44), reseeded);
  EXPECT_EQ(interval(nudged, 43), moved);
  EXPECT_NE(reseeded, first) << "another seed draws other resamples";
}

// The generator jumped ahead is the generator stepped.
TEST(Stats, SplitMix64SkipIsThatManyDraws) {
  SplitMix64 stepped(7), jumped(7);
  for (int i = 0; i < 12345; ++i) stepped.Next();
  jumped.Skip(12345);
  EXPECT_EQ(jumped.Next(), stepped.Next());
}

TEST(Stats, RoundsWithoutSamplesUseTheirMedians) {
  // Old rows: medians only. The item's median is the median of its rounds' medians, and the
  // bootstrap draws those: as the 2-round example above with one value a round.
  const ItemRounds previous = {{0, {}, 1.0}, {1, {}, 1.0}};
  const ItemRounds self = {{0, {}, 1.0}, {1, {}, 1.25}};
  EXPECT_DOUBLE_EQ(ItemMedian(self), 1.125);
  const Change c = SpeedChange(previous, self, 0, 3);
  EXPECT_EQ(c.basis, Basis::kRounds);
  EXPECT_NEAR(c.low, -0.2 + 0.075 * (0.2 - 1.0 / 9), 1e-12);
  EXPECT_NEAR(c.high, -0.075 / 9, 1e-12);
}

TEST(Stats, AcrossRunsEachSidesRoundsAreDrawnApart) {
  // Two rounds each, one sample a round: a {1.0, 1.0}, b {1.0, 1.2}. b's 4 draws have medians
  // 1.0, 1.1, 1.1, 1.2 and a's are all 1.0: 16 ratios, 4 x 0, 8 x 0.1, 4 x 0.2; low at rank
  // 0.375 is 0, high at 14.625 is 0.2. Paired within one run, the same data would give rounds
  // 0.075 and 2.925 of 0, .1, .1, .2: [0.0075, 0.1925].
  const ItemRounds a = {Round(0, {1.0}), Round(1, {1.0})}, b = {Round(0, {1.0}), Round(1, {1.2})};
  const Change c = TimeChange(a, b, 0, 9);
  EXPECT_EQ(c.basis, Basis::kRounds);
  EXPECT_NEAR(c.estimate, 0.1, 1e-12);  // median(b) / median(a) - 1: b takes 10% longer
  EXPECT_NEAR(c.low, 0, 1e-12);
  EXPECT_NEAR(c.high, 0.2, 1e-12);
  EXPECT_TRUE(c.within_noise());
  const Change paired = SpeedChange(b, a, 0, 9);  // the same ratio, paired
  EXPECT_NEAR(paired.low, 0.0075, 1e-12);
  EXPECT_NEAR(paired.high, 0.1925, 1e-12);
}

TEST(Stats, ManyRoundsAreSampledReproducibly) {
  // 5 rounds: 5^5 = 3125 draws, more than 2000: sampled from the seed. Allowing 3125 enumerates
  // them all; the sampled bounds lie close to those exact ones.
  ItemRounds previous, self;
  for (int r = 0; r < 5; ++r) {
    previous.push_back(Wiggled(r, 1.0 + 0.01 * r));
    self.push_back(Wiggled(r, 1.0 + 0.01 * ((r * 3) % 5)));
  }
  const Change sampled = SpeedChange(previous, self, 0, 11);
  const Change again = SpeedChange(previous, self, 0, 11);
  const Change exact = SpeedChange(previous, self, 0, 11, 3125);
  EXPECT_EQ(sampled.low, again.low);
  EXPECT_EQ(sampled.high, again.high);
  EXPECT_NEAR(sampled.low, exact.low, 0.003);
  EXPECT_NEAR(sampled.high, exact.high, 0.003);
  EXPECT_LT(exact.low, 0);
  EXPECT_GT(exact.high, 0);
}

TEST(Stats, FloorIsTheMedianItemsRoundSpread) {
  // Round medians {1.00, 1.01, 1.02}: (1.02 - 1.00) / 1.01 = 0.019802; {2.0, 2.0, 2.1}: 0.1 / 2
  // = 0.05; {1, 1, 1}: 0; one round: no spread. The floor: the median of 0, 0.019802, 0.05.
  auto rounds = [](std::vector<double> medians) {
    ItemRounds item;
    for (std::size_t r = 0; r < medians.size(); ++r) item.push_back({int(r), {}, medians[r]});
    return item;
  };
  EXPECT_NEAR(RoundSpread(rounds({1.00, 1.01, 1.02})), 0.02 / 1.01, 1e-12);
  EXPECT_NEAR(RoundSpread(rounds({2.0, 2.0, 2.1})), 0.05, 1e-12);
  EXPECT_TRUE(std::isnan(RoundSpread(rounds({1.0}))));
  EXPECT_NEAR(
      NoiseFloor({RoundSpread(rounds({1.00, 1.01, 1.02})), RoundSpread(rounds({2.0, 2.0, 2.1})),
                  RoundSpread(rounds({1, 1, 1})), RoundSpread(rounds({1.0}))}),
      0.02 / 1.01, 1e-12);
  EXPECT_EQ(NoiseFloor({}), 0);
}

// A round of 9 samples around `median`: median +- `half` * median at the quartiles' ranks, so
// that the round's (p75 - p25) / median is 2 * half (type 7 on 9 sorted values: p25 at rank 2,
// p75 at rank 6).
RoundData Round(int round, double median, double half) {
  const double lo = median * (1 - half), hi = median * (1 + half);
  RoundData r{round, {lo * 0.99, lo, lo, median, median, median, hi, hi, hi * 1.01}, median};
  return r;
}

TEST(Stats, RoundsOnLevelsFarBeyondTheirOwnSpreadAreApart) {
  // Two levels, 1.00 and 1.20 (spread 0.2 / 1.1 = 18.2%), each round's own IQR 1%: apart.
  const std::optional<RoundLevels> apart =
      RoundsApart({Round(0, 1.00, 0.005), Round(1, 1.20, 0.005)});
  ASSERT_TRUE(apart.has_value());
  EXPECT_NEAR(apart->spread, 0.2 / 1.1, 1e-12);
  EXPECT_NEAR(apart->within, 0.01, 1e-12);
  // Three rounds, two on one level: the spread of the medians {1.0, 1.0, 1.2} is 0.2 / 1.0.
  const auto three =
      RoundsApart({Round(0, 1.0, 0.005), Round(1, 1.2, 0.005), Round(2, 1.0, 0.005)});
  ASSERT_TRUE(three.has_value());
  EXPECT_NEAR(three->spread, 0.2, 1e-12);
}

TEST(Stats, RoundsAreNotApartWithinTheirOwnSpreadOrBelowTheMinimumOrWithoutSamples) {
  // 18.2% apart but each round spreads 5% (IQR 10%): 0.182 < 4 x 0.10.
  EXPECT_FALSE(RoundsApart({Round(0, 1.00, 0.05), Round(1, 1.20, 0.05)}).has_value());
  // Far beyond a tight round (0.02% IQR) but under kApartMin: 1.5% is a drift, not levels.
  EXPECT_FALSE(RoundsApart({Round(0, 1.000, 0.0001), Round(1, 1.015, 0.0001)}).has_value());
  // Just past both bounds: 2.5% apart, rounds of 0.5% IQR (4 x 0.5% = 2%).
  EXPECT_TRUE(RoundsApart({Round(0, 1.000, 0.0025), Round(1, 1.025, 0.0025)}).has_value());
  // One round; a round under kApartMinSamples samples (medians as stored): cannot be told.
  EXPECT_FALSE(RoundsApart({Round(0, 1.0, 0.001)}).has_value());
  ItemRounds stored{{0, {}, 1.0}, {1, {}, 1.5}};
  EXPECT_FALSE(RoundsApart(stored).has_value());
  ItemRounds few{Round(0, 1.0, 0.001), Round(1, 1.5, 0.001)};
  few[1].samples.resize(kApartMinSamples - 1);
  EXPECT_FALSE(RoundsApart(few).has_value());
}

TEST(Stats, WithinNoiseIsAnIntervalAround0OrAChangeBelowTheFloor) {
  Change c;
  c.estimate = 0.02;
  c.has_interval = true;
  c.low = 0.01;
  c.high = 0.03;
  EXPECT_FALSE(c.within_noise());
  c.floor = 0.025;  // 2% is less than the run's rounds disagree
  EXPECT_TRUE(c.within_noise());
  c.floor = 0.015;
  EXPECT_FALSE(c.within_noise());
  c.estimate = -0.02;  // the magnitude counts
  c.low = -0.03;
  c.high = -0.01;
  c.floor = 0.025;
  EXPECT_TRUE(c.within_noise());
  c.low = -0.01;
  c.high = 0.01;
  c.floor = 0;
  EXPECT_TRUE(c.within_noise());
}

// A run of items measured in 3 rounds, round r adding r% to every sample of every item (a power
// cap closing in): the drift between rounds is 20 times the noise within one.
ItemRounds Drifting(double ms) {
  ItemRounds item;
  for (int r = 0; r < 3; ++r) item.push_back(Wiggled(r, ms * (1 + 0.01 * r)));
  return item;
}

TEST(Stats, ADriftBetweenRoundsIsWithinNoiseForNoChange) {
  const ItemRounds a = Drifting(1.0), b = Drifting(1.0), c = Drifting(2.0);
  const double floor = NoiseFloor({RoundSpread(a), RoundSpread(b), RoundSpread(c)});
  EXPECT_NEAR(floor, 0.02 / 1.01, 1e-3);
  const Change within = SpeedChange(a, b, floor, 5);
  EXPECT_NEAR(within.estimate, 0, 2e-3);
  EXPECT_TRUE(within.within_noise());
  // Across runs the drift is in the interval itself: wide, around 0.
  const Change across = TimeChange(a, b, floor, 5);
  EXPECT_LT(across.low, -0.01);
  EXPECT_GT(across.high, 0.01);
  EXPECT_TRUE(across.within_noise());
}

TEST(Stats, ARealFivePercentChangeStandsOutOfTheDrift) {
  const ItemRounds a = Drifting(1.0), faster = Drifting(0.95), slower = Drifting(1.05);
  const double floor = NoiseFloor({RoundSpread(a), RoundSpread(faster)});
  const Change speed = SpeedChange(a, faster, floor, 5);
  EXPECT_NEAR(speed.estimate, 1 / 0.95 - 1, 2e-3);  // +5.3% faster
  EXPECT_GT(speed.low, 0);
  EXPECT_FALSE(speed.within_noise());
  const Change time = TimeChange(a, slower, floor, 5);
  EXPECT_NEAR(time.estimate, 0.05, 2e-3);  // 5% longer
  EXPECT_GT(time.low, 0);
  EXPECT_FALSE(time.within_noise());
}

TEST(Stats, SamplesAsIfIndependentCallADriftSignificantRoundsDoNot) {
  // Each item met the drift at its own times (rounds shuffle the order): a by +0%, +2%, +0%, b
  // by +2%, +0%, +1%. No true change, yet a is 1% faster by its medians. Pooled into one round
  // the samples give a narrow interval that excludes 0; the rounds give one that does not.
  ItemRounds a, b;
  const double drift_a[] = {0, 0.02, 0}, drift_b[] = {0.02, 0, 0.01};
  for (int r = 0; r < 3; ++r) {
    a.push_back(Wiggled(r, 1 + drift_a[r]));
    b.push_back(Wiggled(r, 1 + drift_b[r]));
  }
  auto pooled = [](const ItemRounds& item) {
    RoundData one{0, {}};
    for (const RoundData& r : item)
      one.samples.insert(one.samples.end(), r.samples.begin(), r.samples.end());
    one.median = Median(one.samples);
    return ItemRounds{one};
  };
  const Change samples = SpeedChange(pooled(b), pooled(a), 0, 5);
  EXPECT_EQ(samples.basis, Basis::kSamples);
  EXPECT_FALSE(samples.within_noise()) << samples.low << " " << samples.high;
  const Change rounds = SpeedChange(b, a, 0, 5);
  EXPECT_EQ(rounds.basis, Basis::kRounds);
  EXPECT_NEAR(rounds.estimate, samples.estimate, 1e-12);
  EXPECT_LT(rounds.low, 0);
  EXPECT_GT(rounds.high, 0);
  EXPECT_TRUE(rounds.within_noise());
}

// Paired windows (stats.h): two rows interleaved cycle by cycle, sample c of each from cycle c.

// Round r of two rows, n cycles: vs does `work` SM cycles per sample (varying by cycle), self
// the same divided by `ratio`, each with a jitter of its own (+-0.05%); their clocks are
// `self_mhz` and `vs_mhz` times the power controller's swing over the window (+-1%). In one
// window both rows see one clock: self_mhz == vs_mhz.
PairedRound Window(int r, double self_mhz, double vs_mhz, double ratio, int n = 31) {
  PairedRound p{r};
  for (int c = 0; c < n; ++c) {
    const double work = 1.6e6 * (1 + 0.02 * std::sin(0.9 * c + r));
    const double swing = 1 + 0.01 * std::sin(1.3 * c + 2 * r);
    p.vs.push_back(work * (1 + 0.0005 * std::sin(2.7 * c)) / (vs_mhz * swing * 1e3));
    p.self.push_back(work / ratio * (1 + 0.0005 * std::cos(3.1 * c + r)) /
                     (self_mhz * swing * 1e3));
  }
  return p;
}

TEST(Stats, APairedChangeInCyclesStandsOutOfAClockDriftThatHidesItUnpaired) {
  // Self does 0.5% less work per cycle. The clock drifts by +-3% between rounds. Interleaved,
  // both rows of round r run at that round's clock, which each cycle's ratio cancels. Measured
  // apart, each item meets the drift at its own time (self at 1.00, 0.97, 1.03 of the clock, vs
  // at 0.97, 1.03, 1.00): rounds 1.005 x {1.031, 0.942, 1.030}.
  const double clock[] = {1980, 1980 * 0.97, 1980 * 1.03};
  std::vector<PairedRound> windows;
  ItemRounds self, vs;
  for (int r = 0; r < 3; ++r) {
    windows.push_back(Window(r, clock[r], clock[r], 1.005));
    const PairedRound apart = Window(r, clock[r], clock[(r + 1) % 3], 1.005);
    self.push_back(Round(r, apart.self));
    vs.push_back(Round(r, apart.vs));
  }
  const double paired_floor = PairedSpread(windows);
  EXPECT_LT(paired_floor, 0.001);
  const std::optional<Change> paired = PairedChange(windows, paired_floor, 5);
  ASSERT_TRUE(paired.has_value());
  EXPECT_TRUE(paired->paired);
  EXPECT_EQ(paired->basis, Basis::kPairedRounds);
  EXPECT_EQ(paired->rounds, 3);
  EXPECT_NEAR(paired->estimate, 0.005, 5e-4);
  EXPECT_GT(paired->low, 0.003);
  EXPECT_LT(paired->high, 0.007);
  EXPECT_FALSE(paired->within_noise());

  const double floor = NoiseFloor({RoundSpread(self), RoundSpread(vs)});
  EXPECT_GT(floor, 0.05);  // the drift: 6% between rounds
  const Change unpaired = SpeedChange(vs, self, floor, 5);
  EXPECT_FALSE(unpaired.paired);
  EXPECT_LT(unpaired.low, 0);
  EXPECT_GT(unpaired.high, 0);
  EXPECT_TRUE(unpaired.within_noise());
  EXPECT_GT(unpaired.high - unpaired.low, 20 * (paired->high - paired->low));
}

TEST(Stats, PairedRoundsGiveAStudentTInterval) {
  // One cycle a round, d = 0.01, 0.02, 0.03: mean 0.02, sd 0.01; t_0.975(2) = 4.302653, so the
  // half width is 4.302653 x 0.01 / sqrt(3) = 0.0248414 in logs: [-0.0048414, 0.0448414],
  // around 0 although every round is positive (three rounds tell little). The bootstrap of the
  // mean over the 27 draws of the rounds would say [0.0122, 0.0278]: inside [min, max].
  std::vector<PairedRound> rounds;
  for (int r = 0; r < 3; ++r) rounds.push_back({r, {1.0}, {std::exp(0.01 * (r + 1))}});
  const std::optional<Change> c = PairedChange(rounds, 0, 1);
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->basis, Basis::kPairedRounds);
  EXPECT_NEAR(c->estimate, std::expm1(0.02), 1e-12);
  EXPECT_NEAR(c->low, std::expm1(0.02 - 0.0248414), 1e-6);
  EXPECT_NEAR(c->high, std::expm1(0.02 + 0.0248414), 1e-6);
  EXPECT_TRUE(c->within_noise());
  EXPECT_NEAR(PairedSpread(rounds), 0.02, 1e-12);
}

TEST(Stats, OnePairedRoundBootstrapsTheWindowsCycles) {
  // Log ratios 0.01, 0.02, 0.03 over 3 cycles: the 27 draws' medians are 0.01 7 times (two or
  // three of the first), 0.02 13 times, 0.03 7 times; low at rank 0.65 is 0.01, high at 25.35 is
  // 0.03. The estimate: exp(median) - 1.
  const PairedRound window{0, {1.0, 1.0, 1.0}, {std::exp(0.01), std::exp(0.02), std::exp(0.03)}};
  const std::optional<Change> c = PairedChange({window}, 0, 42);
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->basis, Basis::kPairedCycles);
  EXPECT_EQ(c->rounds, 1);
  ASSERT_TRUE(c->has_interval);
  EXPECT_NEAR(c->estimate, std::expm1(0.02), 1e-12);
  EXPECT_NEAR(c->low, std::expm1(0.01), 1e-12);
  EXPECT_NEAR(c->high, std::expm1(0.03), 1e-12);
  EXPECT_TRUE(std::isnan(PairedSpread({window})));  // one round: no spread
  // One cycle: the estimate alone.
  const std::optional<Change> alone = PairedChange({{0, {1.0}, {1.1}}}, 0, 42);
  ASSERT_TRUE(alone.has_value());
  EXPECT_FALSE(alone->has_interval);
  EXPECT_NEAR(alone->estimate, 0.1, 1e-12);
  // Many cycles: sampled from the seed, reproducibly.
  const PairedRound many = Window(0, 1980, 1980, 1.01, 101);
  const std::optional<Change> a = PairedChange({many}, 0, 9), b = PairedChange({many}, 0, 9);
  EXPECT_EQ(a->low, b->low);
  EXPECT_EQ(a->high, b->high);
  EXPECT_LT(a->low, 0.01);
  EXPECT_GT(a->high, 0.01);
}

TEST(Stats, AFailedProbeDropsItsCycleWithoutShiftingTheOthers) {
  // Cycles 1 and 3 have both values; 0 and 2 a NaN on one side, 4 a zero. Paired by index: two
  // ratios of 1.1. Dropping each side's NaN first would pair 2 with 1.1, 3 with 2.2, ...
  const PairedRound window{0, {NAN, 2, 3, 4, 5}, {1.1, 2.2, NAN, 4.4, 0}};
  const std::vector<double> logs = PairedLogRatios(window);
  ASSERT_EQ(logs.size(), 2u);
  EXPECT_NEAR(logs[0], std::log(1.1), 1e-12);
  EXPECT_NEAR(logs[1], std::log(1.1), 1e-12);
  EXPECT_NEAR(PairedChange({window}, 0, 1)->estimate, 0.1, 1e-12);
  // Rows of unequal length pair what both have.
  EXPECT_EQ(PairedLogRatios({0, {1, 1, 1}, {2}}).size(), 1u);
  // No pair at all: no paired change, the caller goes unpaired.
  EXPECT_FALSE(PairedChange({{0, {NAN, NAN}, {1, 1}}}, 0, 1).has_value());
  EXPECT_FALSE(PairedChange({}, 0, 1).has_value());
}

TEST(Stats, TheClocksPartAndWhatMovedTheTime) {
  // Self's clock 2% below vs's in every window: -2%, whatever the drift between rounds.
  EXPECT_NEAR(PairedClockChange({{0, {1940.4}, {1980}}, {1, {1940.4 * 0.97}, {1980 * 0.97}}}),
              -0.02, 1e-12);
  // Each side's median over its finite values; a round without both is left out.
  EXPECT_NEAR(PairedClockChange({{0, {NAN, 990, 1000, 1010}, {1100, NAN}}, {1, {}, {1000}}}),
              1000.0 / 1100 - 1, 1e-12);
  EXPECT_TRUE(std::isnan(PairedClockChange({})));
  EXPECT_STREQ(ChangeSource(false, 0.0005, -0.02), "clock (power)");
  EXPECT_STREQ(ChangeSource(false, 0.10, 0.01), "work");  // 0.00995 < 0.25 x 0.0953
  EXPECT_STREQ(ChangeSource(false, 0.05, -0.02), "work and clock");
  EXPECT_STREQ(ChangeSource(true, 0.05, -0.02), "");
}

}  // namespace
}  // namespace ablation::client::report
