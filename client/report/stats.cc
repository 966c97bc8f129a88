#include "client/report/stats.h"

#include <boost/math/distributions/students_t.hpp>
#include <boost/math/special_functions/beta.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "client/report/bootstrap.h"

namespace ablation::client::report {
namespace {

using bootstrap::Apart;
using bootstrap::Bounds;
using bootstrap::DrawMedians;
using bootstrap::Paired;
using bootstrap::Percentiles;
using bootstrap::Side;
using bootstrap::Units;

bool AllSampled(const ItemRounds& item) {
  return !item.empty() && std::all_of(item.begin(), item.end(),
                                      [](const RoundData& r) { return !r.samples.empty(); });
}

// The rounds `which` of an item as bootstrap units: their samples where every round of the item
// has samples (as ItemMedian pools them), else their medians, one value a round.
Units RoundUnits(const ItemRounds& item, const std::vector<std::size_t>& which) {
  const bool sampled = AllSampled(item);
  Units units;
  for (std::size_t i : which)
    units.push_back(sampled ? item[i].samples : std::vector<double>{item[i].median});
  return units;
}

std::vector<std::size_t> Every(const ItemRounds& item) {
  std::vector<std::size_t> all(item.size());
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
  return all;
}

// Every sample of the item, each a unit of its own.
Units SampleUnits(const ItemRounds& item) {
  Units units;
  for (const RoundData& r : item)
    for (double v : r.samples) units.push_back({v});
  return units;
}

Change Estimate(double num_median, double den_median, double floor) {
  Change c;
  c.floor = floor;
  if (num_median > 0 && den_median > 0) c.estimate = num_median / den_median - 1;
  return c;
}

void SetInterval(const Bounds& b, Basis basis, int rounds, Change* c) {
  c->has_interval = true;
  c->low = b.low;
  c->high = b.high;
  c->basis = basis;
  c->rounds = rounds;
}

// The fall-back for fewer than 2 rounds: the bootstrap over single samples, or nothing.
void FromSamples(const ItemRounds& num, const ItemRounds& den, std::uint64_t seed, int resamples,
                 Change* c) {
  const Units n = SampleUnits(num), d = SampleUnits(den);
  c->rounds = int(std::min(num.size(), den.size()));
  if (n.size() < 2 || d.size() < 2 || resamples < 1) return;
  Side sn(n), sd(d);
  SetInterval(Apart(sn, sd, seed, resamples), Basis::kSamples, c->rounds, c);
}

// The regularized incomplete beta I_x(a, b): Boost.Math's (libboost-math-dev), rather than a
// continued fraction of our own.
double IncompleteBeta(double a, double b, double x) {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  return boost::math::ibeta(a, b, x);
}

struct LogMoments {
  double mean = 0;
  double var = 0;  // unbiased
  std::size_t n = 0;
};

LogMoments Moments(const std::vector<double>& ms) {
  LogMoments m;
  m.n = ms.size();
  for (double v : ms) m.mean += std::log(v);
  m.mean /= double(m.n);
  for (double v : ms) m.var += (std::log(v) - m.mean) * (std::log(v) - m.mean);
  m.var /= double(m.n - 1);
  return m;
}

bool Positive(double v) { return std::isfinite(v) && v > 0; }

bool Usable(const std::vector<double>& ms) {
  return ms.size() >= 2 && std::all_of(ms.begin(), ms.end(), Positive);
}

double Mean(const std::vector<double>& values) {
  double sum = 0;
  for (double v : values) sum += v;
  return sum / double(values.size());
}

// The unbiased standard deviation (2+ values).
double StandardDeviation(const std::vector<double>& values) {
  const double mean = Mean(values);
  double sum = 0;
  for (double v : values) sum += (v - mean) * (v - mean);
  return std::sqrt(sum / double(values.size() - 1));
}

// The rounds' d (PairedRoundLog), those that have one.
std::vector<double> RoundLogs(const std::vector<PairedRound>& rounds) {
  std::vector<double> logs;
  for (const PairedRound& r : rounds)
    if (const double d = PairedRoundLog(r); std::isfinite(d)) logs.push_back(d);
  return logs;
}

// One paired window: the median log ratio bootstrapped over its cycles, each cycle a unit, since
// one round says nothing of the drift between rounds.
void FromCycles(const std::vector<double>& logs, std::uint64_t seed, int resamples, Change* c) {
  if (logs.size() < 2 || resamples < 1) {
    c->basis = Basis::kMedians;
    return;
  }
  Units units;
  for (double v : logs) units.push_back({v});
  Side side(units);
  std::vector<double> medians = DrawMedians(side, seed, resamples);
  const Bounds b = Percentiles(medians);
  SetInterval({std::expm1(b.low), std::expm1(b.high)}, Basis::kPairedCycles, 1, c);
}

// The median of a side's finite, positive values; NaN for none.
double PositiveMedian(const std::vector<double>& values) {
  std::vector<double> kept;
  for (double v : values)
    if (Positive(v)) kept.push_back(v);
  return Median(std::move(kept));
}

}  // namespace

double ItemMedian(const ItemRounds& item) {
  if (item.size() == 1) return item[0].median;  // as the row says, as `show` says
  std::vector<double> values;
  const bool sampled = AllSampled(item);
  for (const RoundData& r : item) {
    if (sampled) {
      values.insert(values.end(), r.samples.begin(), r.samples.end());
    } else {
      values.push_back(r.median);
    }
  }
  return Median(std::move(values));
}

double RoundSpread(const ItemRounds& item) {
  std::vector<double> medians;
  for (const RoundData& r : item)
    if (std::isfinite(r.median) && r.median > 0) medians.push_back(r.median);
  if (medians.size() < 2) return std::numeric_limits<double>::quiet_NaN();
  const auto [lo, hi] = std::minmax_element(medians.begin(), medians.end());
  return (*hi - *lo) / Median(medians);
}

std::optional<RoundLevels> RoundsApart(const ItemRounds& item) {
  if (item.size() < 2) return std::nullopt;
  std::vector<double> within;
  for (const RoundData& r : item) {
    if (r.samples.size() < kApartMinSamples) return std::nullopt;
    std::vector<double> sorted = r.samples;
    std::sort(sorted.begin(), sorted.end());
    const double median = Quantile(sorted, 0.5);
    if (!Positive(median)) return std::nullopt;
    within.push_back((Quantile(sorted, 0.75) - Quantile(sorted, 0.25)) / median);
  }
  const double spread = RoundSpread(item);
  const double noise = Median(within);
  if (!std::isfinite(spread) || spread < kApartMin || spread < kApartFactor * noise)
    return std::nullopt;
  return RoundLevels{spread, noise};
}

std::optional<RoundLevels> LevelsOf(const ItemRounds& times, const ItemRounds& cycles,
                                    bool* on_cycles) {
  const bool use_cycles = cycles.size() == times.size() &&
                          std::all_of(cycles.begin(), cycles.end(), [](const RoundData& r) {
                            return r.samples.size() >= kApartMinSamples;
                          });
  if (on_cycles) *on_cycles = use_cycles;
  return RoundsApart(use_cycles ? cycles : times);
}

double NoiseFloor(const std::vector<double>& spreads) {
  std::vector<double> finite;
  for (double s : spreads)
    if (std::isfinite(s)) finite.push_back(s);
  return finite.empty() ? 0 : Median(std::move(finite));
}

std::uint64_t SeedFor(std::string_view key) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : key) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

Change SpeedChange(const ItemRounds& previous, const ItemRounds& self, double floor,
                   std::uint64_t seed, int resamples) {
  Change c = Estimate(ItemMedian(previous), ItemMedian(self), floor);
  // The rounds both have, matched by round number (both lists ascending).
  std::vector<std::size_t> in_previous, in_self;
  for (std::size_t i = 0, j = 0; i < previous.size() && j < self.size();) {
    if (previous[i].round == self[j].round) {
      in_previous.push_back(i++);
      in_self.push_back(j++);
    } else {
      (previous[i].round < self[j].round ? i : j)++;
    }
  }
  if (in_previous.size() < 2 || resamples < 1) {
    FromSamples(previous, self, seed, resamples, &c);
    return c;
  }
  Side num(RoundUnits(previous, in_previous)), den(RoundUnits(self, in_self));
  SetInterval(Paired(num, den, seed, resamples), Basis::kRounds, int(in_previous.size()), &c);
  return c;
}

bool MedianInterval(const ItemRounds& item, std::uint64_t seed, double* low, double* high,
                    int resamples) {
  const bool rounds = item.size() >= 2;
  const Units units = rounds ? RoundUnits(item, Every(item)) : SampleUnits(item);
  if (units.size() < 2 || resamples < 1) return false;
  Side side(units);
  std::vector<double> medians = DrawMedians(side, seed, resamples);
  const Bounds b = Percentiles(medians);
  *low = b.low;
  *high = b.high;
  return true;
}

Change TimeChange(const ItemRounds& a, const ItemRounds& b, double floor, std::uint64_t seed,
                  int resamples) {
  Change c = Estimate(ItemMedian(b), ItemMedian(a), floor);
  if (a.size() < 2 || b.size() < 2 || resamples < 1) {
    FromSamples(b, a, seed, resamples, &c);
    return c;
  }
  Side num(RoundUnits(b, Every(b))), den(RoundUnits(a, Every(a)));
  SetInterval(Apart(num, den, seed, resamples), Basis::kRounds, int(std::min(a.size(), b.size())),
              &c);
  return c;
}

double StudentTCdf(double t, double df) {
  if (!(df > 0)) return std::numeric_limits<double>::quiet_NaN();
  if (std::isinf(t)) return t > 0 ? 1 : 0;
  return boost::math::cdf(boost::math::students_t(df), t);
}

double StudentTQuantile(double p, double df) {
  if (!(df > 0) || !(p > 0 && p < 1)) return std::numeric_limits<double>::quiet_NaN();
  return boost::math::quantile(boost::math::students_t(df), p);
}

std::vector<double> PairedLogRatios(const PairedRound& round) {
  std::vector<double> logs;
  const std::size_t n = std::min(round.self.size(), round.vs.size());
  for (std::size_t c = 0; c < n; ++c)
    if (Positive(round.self[c]) && Positive(round.vs[c]))
      logs.push_back(std::log(round.vs[c] / round.self[c]));
  return logs;
}

double PairedRoundLog(const PairedRound& round) { return Median(PairedLogRatios(round)); }

double PairedSpread(const std::vector<PairedRound>& rounds) {
  const std::vector<double> logs = RoundLogs(rounds);
  if (logs.size() < 2) return std::numeric_limits<double>::quiet_NaN();
  const auto [lo, hi] = std::minmax_element(logs.begin(), logs.end());
  return *hi - *lo;
}

std::optional<Change> PairedChange(const std::vector<PairedRound>& rounds, double floor,
                                   std::uint64_t seed, int resamples) {
  const std::vector<double> logs = RoundLogs(rounds);
  if (logs.empty()) return std::nullopt;
  Change c;
  c.paired = true;
  c.floor = floor;
  c.rounds = int(logs.size());
  const double mean = Mean(logs);
  c.estimate = std::expm1(mean);
  if (logs.size() == 1) {
    for (const PairedRound& r : rounds)
      if (std::isfinite(PairedRoundLog(r))) FromCycles(PairedLogRatios(r), seed, resamples, &c);
    return c;
  }
  // Student's t over the rounds, not the bootstrap: with 3 rounds every bootstrap draw lies
  // within [min, max] of the rounds, an interval that claims more than 3 rounds can tell. And
  // the run's paired floor beside it, in quadrature: rounds a few seconds apart share what a
  // run's buffers and the GPU's state give every pair (measured on the H200: three runs' paired
  // changes of one rung differ by up to twice a run's own t half-width), so a repeat of the run
  // is expected within the floor, not within the rounds' agreement alone.
  const double n = double(logs.size());
  const double t_half = StudentTQuantile(0.975, n - 1) * StandardDeviation(logs) / std::sqrt(n);
  const double half = std::sqrt(t_half * t_half + floor * floor);
  SetInterval({std::expm1(mean - half), std::expm1(mean + half)}, Basis::kPairedRounds, c.rounds,
              &c);
  return c;
}

double PairedClockChange(const std::vector<PairedRound>& clocks) {
  std::vector<double> logs;
  for (const PairedRound& r : clocks) {
    const double self = PositiveMedian(r.self), vs = PositiveMedian(r.vs);
    if (Positive(self) && Positive(vs)) logs.push_back(std::log(self / vs));
  }
  return logs.empty() ? std::numeric_limits<double>::quiet_NaN() : std::expm1(Mean(logs));
}

const char* ChangeSource(bool within_noise, double cycles_change, double clock_change) {
  if (within_noise) return "";
  const double work = std::fabs(std::log1p(cycles_change)),
               clock = std::fabs(std::log1p(clock_change));
  if (clock > work) return "clock (power)";
  if (clock < 0.25 * work) return "work";
  return "work and clock";
}

WelchResult WelchLogT(const std::vector<double>& a_ms, const std::vector<double>& b_ms) {
  WelchResult w;
  if (!Usable(a_ms) || !Usable(b_ms)) return w;
  const LogMoments a = Moments(a_ms), b = Moments(b_ms);
  const double diff = b.mean - a.mean;
  const double va = a.var / double(a.n), vb = b.var / double(b.n);
  const double se = std::sqrt(va + vb);
  w.valid = true;
  w.time_change = std::expm1(diff);
  if (se == 0) {
    // Constant samples on both sides: any difference is exact.
    w.df = double(a.n + b.n - 2);
    w.p = diff == 0 ? 1 : 0;
    w.t = diff == 0 ? 0 : std::copysign(std::numeric_limits<double>::infinity(), diff);
    w.low = w.high = w.time_change;
    return w;
  }
  w.t = diff / se;
  const double denominator = va * va / double(a.n - 1) + vb * vb / double(b.n - 1);
  w.df = denominator > 0 ? (va + vb) * (va + vb) / denominator : double(a.n + b.n - 2);
  // Two-sided tail straight from the incomplete beta, which keeps tiny p-values exact.
  w.p = std::min(1.0, IncompleteBeta(w.df / 2, 0.5, w.df / (w.df + w.t * w.t)));
  const double q = StudentTQuantile(0.975, w.df);
  w.low = std::expm1(diff - q * se);
  w.high = std::expm1(diff + q * se);
  return w;
}

}  // namespace ablation::client::report
