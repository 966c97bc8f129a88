#include "client/report/stats.h"

#include <boost/math/distributions/students_t.hpp>
#include <boost/math/special_functions/beta.hpp>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <map>
#include <thread>
#include <utility>

namespace ablation::client::report {
namespace {

using Units = std::vector<std::vector<double>>;

// One side of a bootstrap: the values of its units (rounds, or single samples) sorted, each with
// its unit. A draw's multiset is these values, each as often as its unit was drawn, so its
// median is one walk that counts, with no copy and no sort per draw.
class Side {
 public:
  explicit Side(const Units& units) : sizes_(units.size()), memoise_(units.size() <= 16) {
    for (std::uint32_t u = 0; u < units.size(); ++u) {
      sizes_[u] = units[u].size();
      for (double v : units[u]) sorted_.emplace_back(v, u);
    }
    std::sort(sorted_.begin(), sorted_.end());
  }
  std::size_t units() const { return sizes_.size(); }
  // Whether Median may be called from several threads at once (no memo to fill).
  bool shareable() const { return !memoise_; }

  // counts[u]: how often unit u was drawn. With few units many draws repeat a multiset (27
  // ordered draws of 3 rounds are 10 multisets), hence the memo.
  double Median(const std::vector<std::uint32_t>& counts) {
    if (memoise_)
      if (auto it = memo_.find(counts); it != memo_.end()) return it->second;
    std::size_t n = 0;
    for (std::size_t u = 0; u < counts.size(); ++u) n += counts[u] * sizes_[u];
    const std::size_t lo_rank = (n - 1) / 2, hi_rank = n / 2;  // equal for odd n
    double lo = 0, hi = 0;
    std::size_t seen = 0;
    bool have_lo = false;
    for (const auto& [value, unit] : sorted_) {
      seen += counts[unit];
      if (!have_lo && seen > lo_rank) {
        lo = value;
        have_lo = true;
      }
      if (seen > hi_rank) {
        hi = value;
        break;
      }
    }
    const double median = (lo + hi) / 2;
    if (memoise_) memo_.emplace(counts, median);
    return median;
  }

 private:
  std::vector<std::pair<double, std::uint32_t>> sorted_;
  std::vector<std::size_t> sizes_;
  bool memoise_;
  std::map<std::vector<std::uint32_t>, double> memo_;
};

// n^n, the ordered draws of n units from n, when at most `limit`; else 0 (too many: sample).
std::uint64_t Draws(std::size_t n, std::uint64_t limit) {
  std::uint64_t total = 1;
  for (std::size_t i = 0; i < n; ++i) {
    total *= n;
    if (total > limit) return 0;
  }
  return total;
}

// Every ordered draw of n indices below n in turn, as counts per index: an odometer.
class Odometer {
 public:
  explicit Odometer(std::size_t n) : digits_(n, 0), counts_(n, 0) { counts_[0] = n; }
  const std::vector<std::uint32_t>& counts() const { return counts_; }
  bool Next() {  // false after the last draw
    const std::size_t n = digits_.size();
    for (std::size_t i = 0; i < n; ++i) {
      --counts_[digits_[i]];
      if (++digits_[i] < n) {
        ++counts_[digits_[i]];
        return true;
      }
      digits_[i] = 0;
      ++counts_[0];
    }
    return false;
  }

 private:
  std::vector<std::size_t> digits_;
  std::vector<std::uint32_t> counts_;
};

std::atomic<int> bootstrap_threads{0};

// Sampled bootstraps with fewer draws than this (units x resamples) stay on the calling thread.
constexpr std::uint64_t kThreadedDraws = std::uint64_t(1) << 21;

// Calls body(rng, r, first, second) for each resample r below `resamples`, rng as the serial
// loop's generator is at resample r (SplitMix64(seed) after r * (n1 + n2) draws), first and
// second counts of n1 and n2 units of the calling thread's own. Large draws (and sides that can
// be shared) are split among threads in blocks of r: a body writing its result at index r gives
// the serial loop's results whatever the threads (a report of a cap run with 1 s windows draws
// tens of thousands of single samples 2000 times for every change it prints).
template <typename Body>
void ForEachResample(std::uint64_t seed, int resamples, std::size_t n1, std::size_t n2,
                     bool shareable, Body body) {
  const std::uint64_t per = n1 + n2;
  int threads = bootstrap_threads.load();
  if (threads <= 0) threads = int(std::min(16u, std::max(1u, std::thread::hardware_concurrency())));
  if (!shareable || per * std::uint64_t(resamples) < kThreadedDraws) threads = 1;
  threads = std::min(threads, resamples);
  auto block = [&](int from, int to) {
    SplitMix64 rng(seed);
    rng.Skip(std::uint64_t(from) * per);
    std::vector<std::uint32_t> first(n1), second(n2);
    for (int r = from; r < to; ++r) body(rng, r, first, second);
  };
  if (threads <= 1) return block(0, resamples);
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t)
    pool.emplace_back(block, int(int64_t(resamples) * t / threads),
                      int(int64_t(resamples) * (t + 1) / threads));
  block(0, resamples / threads);
  for (std::thread& th : pool) th.join();
}

void RandomCounts(SplitMix64& rng, std::vector<std::uint32_t>& counts) {
  std::fill(counts.begin(), counts.end(), 0);
  for (std::size_t i = 0; i < counts.size(); ++i) ++counts[rng.Below(counts.size())];
}

std::vector<double> AllMedians(Side& side) {
  std::vector<double> out;
  Odometer draw(side.units());
  do out.push_back(side.Median(draw.counts()));
  while (draw.Next());
  return out;
}

// The medians of the draws of one side's units: every draw once where they number at most
// `resamples`, else `resamples` draws from SplitMix64(seed).
std::vector<double> DrawMedians(Side& side, std::uint64_t seed, int resamples) {
  if (Draws(side.units(), resamples) > 0) return AllMedians(side);
  std::vector<double> medians(std::size_t(std::max(resamples, 0)));
  ForEachResample(seed, resamples, side.units(), 0, side.shareable(),
                  [&](SplitMix64& rng, int r, std::vector<std::uint32_t>& counts, auto&) {
                    RandomCounts(rng, counts);
                    medians[std::size_t(r)] = side.Median(counts);
                  });
  return medians;
}

struct Bounds {
  double low = 0, high = 0;
};

Bounds Percentiles(std::vector<double>& ratios) {
  std::sort(ratios.begin(), ratios.end());
  return {Quantile(ratios, 0.025), Quantile(ratios, 0.975)};
}

// median(num) / median(den) - 1 over draws that give both sides the same indices.
Bounds Paired(Side& num, Side& den, std::uint64_t seed, int resamples) {
  std::vector<double> ratios;
  auto ratio = [&](const std::vector<std::uint32_t>& c) {
    return num.Median(c) / den.Median(c) - 1;
  };
  if (Draws(num.units(), resamples) > 0) {
    Odometer draw(num.units());
    do ratios.push_back(ratio(draw.counts()));
    while (draw.Next());
  } else {
    ratios.resize(std::size_t(std::max(resamples, 0)));
    ForEachResample(seed, resamples, num.units(), 0, num.shareable() && den.shareable(),
                    [&](SplitMix64& rng, int r, std::vector<std::uint32_t>& counts, auto&) {
                      RandomCounts(rng, counts);
                      ratios[std::size_t(r)] = ratio(counts);
                    });
  }
  return Percentiles(ratios);
}

// median(num) / median(den) - 1 over draws of each side on its own.
Bounds Apart(Side& num, Side& den, std::uint64_t seed, int resamples) {
  std::vector<double> ratios;
  const std::uint64_t dn = Draws(num.units(), resamples), dd = Draws(den.units(), resamples);
  if (dn > 0 && dd > 0 && dn * dd <= std::uint64_t(resamples)) {
    const std::vector<double> mn = AllMedians(num), md = AllMedians(den);
    for (double a : mn)
      for (double b : md) ratios.push_back(a / b - 1);
  } else {
    ratios.resize(std::size_t(std::max(resamples, 0)));
    ForEachResample(seed, resamples, num.units(), den.units(), num.shareable() && den.shareable(),
                    [&](SplitMix64& rng, int r, std::vector<std::uint32_t>& cn,
                        std::vector<std::uint32_t>& cd) {
                      RandomCounts(rng, cn);
                      RandomCounts(rng, cd);
                      ratios[std::size_t(r)] = num.Median(cn) / den.Median(cd) - 1;
                    });
  }
  return Percentiles(ratios);
}

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

void SetBootstrapThreads(int threads) { bootstrap_threads.store(threads); }

}  // namespace ablation::client::report
