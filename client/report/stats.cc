#include "client/report/stats.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace ablation::client::report {
namespace {

// splitmix64: tiny, fast and the same on every platform (std distributions are not).
class Rng {
 public:
  explicit Rng(std::uint64_t seed) : state_(seed) {}
  std::uint64_t Next() {
    std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // Uniform in [0, n) by the multiply-shift method (bias < n / 2^64, negligible here).
  std::size_t Below(std::size_t n) {
    return static_cast<std::size_t>((static_cast<unsigned __int128>(Next()) * n) >> 64);
  }

 private:
  std::uint64_t state_;
};

// The median of one bootstrap resample of `sorted`. Since `sorted` is ascending, the k-th
// smallest drawn value is sorted[k-th smallest drawn index]: count the drawn indices and walk.
double ResampleMedian(const std::vector<double>& sorted, Rng& rng,
                      std::vector<std::uint32_t>& counts) {
  const std::size_t n = sorted.size();
  std::fill(counts.begin(), counts.end(), 0);
  for (std::size_t i = 0; i < n; ++i) ++counts[rng.Below(n)];
  const std::size_t lo_rank = (n - 1) / 2, hi_rank = n / 2;  // equal for odd n
  double lo = 0, hi = 0;
  std::size_t seen = 0;
  bool have_lo = false;
  for (std::size_t i = 0; i < n; ++i) {
    seen += counts[i];
    if (!have_lo && seen > lo_rank) {
      lo = sorted[i];
      have_lo = true;
    }
    if (seen > hi_rank) {
      hi = sorted[i];
      break;
    }
  }
  return (lo + hi) / 2;
}

double Percentile(std::vector<double>& values, double q) {
  // Linear interpolation between closest ranks.
  std::sort(values.begin(), values.end());
  const double pos = q * double(values.size() - 1);
  const std::size_t i = static_cast<std::size_t>(std::floor(pos));
  const double frac = pos - double(i);
  if (i + 1 >= values.size()) return values.back();
  return values[i] * (1 - frac) + values[i + 1] * frac;
}

// Continued fraction of the incomplete beta function (modified Lentz).
double BetaContinuedFraction(double a, double b, double x) {
  constexpr double kTiny = 1e-300, kEps = 1e-15;
  const double qab = a + b, qap = a + 1, qam = a - 1;
  double c = 1, d = 1 - qab * x / qap;
  if (std::fabs(d) < kTiny) d = kTiny;
  d = 1 / d;
  double h = d;
  for (int m = 1; m <= 1000; ++m) {
    const int m2 = 2 * m;
    double aa = m * (b - m) * x / ((qam + m2) * (a + m2));
    d = 1 + aa * d;
    if (std::fabs(d) < kTiny) d = kTiny;
    c = 1 + aa / c;
    if (std::fabs(c) < kTiny) c = kTiny;
    d = 1 / d;
    h *= d * c;
    aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
    d = 1 + aa * d;
    if (std::fabs(d) < kTiny) d = kTiny;
    c = 1 + aa / c;
    if (std::fabs(c) < kTiny) c = kTiny;
    d = 1 / d;
    const double del = d * c;
    h *= del;
    if (std::fabs(del - 1) < kEps) break;
  }
  return h;
}

// Regularized incomplete beta I_x(a, b).
double IncompleteBeta(double a, double b, double x) {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const double log_front =
      std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) + a * std::log(x) + b * std::log1p(-x);
  const double front = std::exp(log_front);
  if (x < (a + 1) / (a + b + 2)) return front * BetaContinuedFraction(a, b, x) / a;
  return 1 - front * BetaContinuedFraction(b, a, 1 - x) / b;
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

bool Usable(const std::vector<double>& ms) {
  return ms.size() >= 2 &&
         std::all_of(ms.begin(), ms.end(), [](double v) { return std::isfinite(v) && v > 0; });
}

}  // namespace

double Median(std::vector<double> values) {
  if (values.empty()) return std::numeric_limits<double>::quiet_NaN();
  const std::size_t n = values.size();
  std::nth_element(values.begin(), values.begin() + n / 2, values.end());
  const double hi = values[n / 2];
  if (n % 2 == 1) return hi;
  const double lo = *std::max_element(values.begin(), values.begin() + n / 2);
  return (lo + hi) / 2;
}

std::uint64_t SeedFor(std::string_view key) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : key) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

Change SpeedChangeFromMedians(double a_median_ms, double b_median_ms) {
  Change c;
  if (a_median_ms > 0 && b_median_ms > 0) c.estimate = a_median_ms / b_median_ms - 1;
  return c;
}

Change SpeedChange(const std::vector<double>& a_ms, const std::vector<double>& b_ms,
                   std::uint64_t seed, int resamples) {
  if (!Usable(a_ms) || !Usable(b_ms) || resamples < 100) {
    return SpeedChangeFromMedians(a_ms.empty() ? 0 : Median(a_ms), b_ms.empty() ? 0 : Median(b_ms));
  }
  Change c = SpeedChangeFromMedians(Median(a_ms), Median(b_ms));
  std::vector<double> a = a_ms, b = b_ms;
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  std::vector<std::uint32_t> counts_a(a.size()), counts_b(b.size());
  Rng rng(seed);
  std::vector<double> ratios;
  ratios.reserve(resamples);
  for (int r = 0; r < resamples; ++r) {
    const double ma = ResampleMedian(a, rng, counts_a);
    const double mb = ResampleMedian(b, rng, counts_b);
    ratios.push_back(ma / mb - 1);
  }
  c.low = Percentile(ratios, 0.025);
  c.high = Percentile(ratios, 0.975);
  c.has_interval = true;
  return c;
}

double StudentTCdf(double t, double df) {
  if (!(df > 0)) return std::numeric_limits<double>::quiet_NaN();
  if (std::isinf(t)) return t > 0 ? 1 : 0;
  const double x = df / (df + t * t);
  const double tail = 0.5 * IncompleteBeta(df / 2, 0.5, x);  // P(T > |t|)
  return t >= 0 ? 1 - tail : tail;
}

double StudentTQuantile(double p, double df) {
  // Bisection: the CDF is monotone; 200 halvings are far more than double precision needs.
  double lo = -1e3, hi = 1e3;
  for (int i = 0; i < 200; ++i) {
    const double mid = (lo + hi) / 2;
    (StudentTCdf(mid, df) < p ? lo : hi) = mid;
  }
  return (lo + hi) / 2;
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
