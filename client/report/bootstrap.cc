#include "client/report/bootstrap.h"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <mutex>
#include <thread>
#include <tuple>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace ablation::client::report {
namespace bootstrap {
namespace {

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

// SplitMix64's output function: every bit of x moves about half of the result's.
std::uint64_t Mix(std::uint64_t x) {
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// The sampled draws made so far, by side and seed. A report asks for one row's interval in
// several sections (its ladder's table, its shape's, how it ran): in a 9-shape cap run's report
// a row of 47,000 samples was drawn 2,000 times over seven times, and 58% of all the draws were
// repeats (the report took 10.1 s, 5.6 s with them kept). The key holds the side's two hashes
// (of its values, units and sizes), the seed and the draws' count; equal keys are equal inputs to
// a 2^-128 chance, and the draws of equal inputs are equal (the generator is seeded, the threads'
// split the serial loop's).
struct DrawKey {
  std::uint64_t seed = 0, first = 0, second = 0;
  int resamples = 0;
  bool operator<(const DrawKey& o) const {
    return std::tie(seed, first, second, resamples) <
           std::tie(o.seed, o.first, o.second, o.resamples);
  }
};
std::mutex drawn_mutex;
std::map<DrawKey, std::vector<double>> drawn;

// DrawMedian's counting pass, n draws of sorted positions made 8 at a time where the CPU has
// AVX-512 (F, DQ and VL; most x86 servers of the last years): the same draws, in the same order
// from the same generator, as n calls of rng.Below(n): lane j of a step computes SplitMix64's
// output for state + (i + j + 1) * gamma, and the multiply-shift's high word is put together from
// two 32-bit products, exact where n < 2^32. `below` gets the draws whose position lies below
// `low`, scratch[d] one for each at low + d, d < width. Hand-written because no Debian library
// draws SplitMix64 in vectors; the tests compare it with the scalar walk draw for draw.
#if defined(__x86_64__) && defined(__GNUC__)
#define ABLATION_BOOTSTRAP_AVX512 1
__attribute__((target("avx512f,avx512dq,avx512vl"))) std::size_t CountDrawsAvx512(
    std::uint64_t state, std::size_t n, const std::uint32_t* position, std::uint32_t low,
    std::uint32_t width, std::uint32_t* scratch) {
  constexpr std::uint64_t kGamma = SplitMix64::kGamma;
  __m512i s = _mm512_add_epi64(_mm512_set1_epi64(std::int64_t(state)),
                               _mm512_mullo_epi64(_mm512_setr_epi64(1, 2, 3, 4, 5, 6, 7, 8),
                                                  _mm512_set1_epi64(std::int64_t(kGamma))));
  const __m512i step = _mm512_set1_epi64(std::int64_t(8 * kGamma));
  const __m512i c1 = _mm512_set1_epi64(std::int64_t(SplitMix64::kMix1));
  const __m512i c2 = _mm512_set1_epi64(std::int64_t(SplitMix64::kMix2));
  const __m512i count = _mm512_set1_epi64(std::int64_t(n));
  const __m256i vlow = _mm256_set1_epi32(int(low)), vwidth = _mm256_set1_epi32(int(width));
  // The in-window offsets of the whole draw, packed, then counted in one loop without branches.
  // Packed in a register and stored whole (8 lanes, the next step overwriting those past the
  // packed ones; hence 8 entries of slack): a masked compress straight to memory is microcoded on
  // AMD's Zen 4, where it took 45% of a cap report's time (the report 3.3 times as long).
  thread_local std::vector<std::uint32_t> offsets;
  if (offsets.size() < n + 8) offsets.resize(n + 8);
  std::uint32_t* packed = offsets.data();
  std::size_t below = 0;
  const std::size_t whole = n - n % 8;
  for (std::size_t i = 0; i < n; i += 8) {
    __m512i z = s;
    s = _mm512_add_epi64(s, step);
    z = _mm512_mullo_epi64(_mm512_xor_si512(z, _mm512_srli_epi64(z, 30)), c1);
    z = _mm512_mullo_epi64(_mm512_xor_si512(z, _mm512_srli_epi64(z, 27)), c2);
    z = _mm512_xor_si512(z, _mm512_srli_epi64(z, 31));
    // (z * n) >> 64 with z = hi * 2^32 + lo: (hi * n + (lo * n >> 32)) >> 32, no carry lost.
    const __m512i lo = _mm512_mul_epu32(z, count);
    const __m512i hi = _mm512_mul_epu32(_mm512_srli_epi64(z, 32), count);
    const __m512i index = _mm512_srli_epi64(_mm512_add_epi64(hi, _mm512_srli_epi64(lo, 32)), 32);
    const __mmask8 lanes = i < whole ? __mmask8(0xFF) : __mmask8((1u << (n - i)) - 1);
    const __m256i p = _mm512_mask_i64gather_epi32(vlow, lanes, index, position, 4);
    const __m256i d = _mm256_sub_epi32(p, vlow);
    below += std::size_t(std::popcount(unsigned(_mm256_mask_cmplt_epu32_mask(lanes, p, vlow))));
    const __mmask8 in = _mm256_mask_cmplt_epu32_mask(lanes, d, vwidth);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(packed), _mm256_maskz_compress_epi32(in, d));
    packed += std::popcount(unsigned(in));
  }
  for (const std::uint32_t* o = offsets.data(); o < packed; ++o) ++scratch[*o];
  return below;
}
#endif

std::vector<double> AllMedians(Side& side) {
  std::vector<double> out;
  Odometer draw(side.units());
  do out.push_back(side.Median(draw.counts()));
  while (draw.Next());
  return out;
}

}  // namespace

bool VectorDraws() {
#ifdef ABLATION_BOOTSTRAP_AVX512
  static const bool has = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
                          __builtin_cpu_supports("avx512vl");
  return has;
#else
  return false;
#endif
}

void RandomCounts(SplitMix64& rng, std::vector<std::uint32_t>& counts) {
  std::fill(counts.begin(), counts.end(), 0);
  for (std::size_t i = 0; i < counts.size(); ++i) ++counts[rng.Below(counts.size())];
}

void Side::PlaceWindow(std::size_t window) {
  const std::size_t n = sorted_.size();
  // Every unit one sample (equal counts alone could pair an empty unit with one of two).
  if (memoise_ || n < 2 ||
      !std::all_of(sizes_.begin(), sizes_.end(), [](std::size_t size) { return size == 1; }))
    return;
  position_.resize(n);
  for (std::size_t p = 0; p < n; ++p) position_[sorted_[p].second] = std::uint32_t(p);
  if (window == 0) window = std::size_t(kWindowSds * std::sqrt(double(n)) / 2) + 8;
  low_ = n / 2 > window ? n / 2 - window : 0;
  width_ = std::min(n - low_, 2 * window + 1);
}

double Side::DrawMedian(SplitMix64& rng, std::vector<std::uint32_t>& scratch) {
  const std::size_t n = sizes_.size();
  if (position_.empty()) {
    RandomCounts(rng, scratch);
    return Median(scratch);
  }
  const SplitMix64 start = rng;
  std::fill_n(scratch.begin(), width_, 0);
  std::size_t below = 0;
#ifdef ABLATION_BOOTSTRAP_AVX512
  if (vector_ && VectorDraws()) {
    below = CountDrawsAvx512(rng.state(), n, position_.data(), std::uint32_t(low_),
                             std::uint32_t(width_), scratch.data());
    rng.Skip(n);
  } else
#endif
    for (std::size_t i = 0; i < n; ++i) {
      const std::size_t p = position_[rng.Below(n)];
      below += p < low_;
      if (const std::size_t d = p - low_; d < width_) ++scratch[d];  // p below low_: d wraps
    }
  double median = 0;
  if (WalkMedian(
          n, below, low_, low_ + width_, [&](std::size_t p) { return scratch[p - low_]; }, &median))
    return median;
  ++whole_walks_;
  rng = start;
  RandomCounts(rng, scratch);
  return Median(scratch);
}

std::pair<std::uint64_t, std::uint64_t> Side::Fingerprint() const {
  std::uint64_t a = 0x243F6A8885A308D3ull, b = 0x13198A2E03707344ull;  // pi's digits: any two
  auto add = [&](std::uint64_t word) {
    a = Mix(a ^ word);
    b = Mix(b + 0x9E3779B97F4A7C15ull * (word ^ 0xA4093822299F31D0ull));
  };
  for (const auto& [value, unit] : sorted_) {
    add(std::bit_cast<std::uint64_t>(value));
    add(unit);
  }
  for (std::size_t size : sizes_) add(size);
  return {a, b};
}

double Side::Median(const std::vector<std::uint32_t>& counts) {
  if (memoise_)
    if (auto it = memo_.find(counts); it != memo_.end()) return it->second;
  std::size_t n = 0;
  for (std::size_t u = 0; u < counts.size(); ++u) n += counts[u] * sizes_[u];
  double median = 0;  // stays 0 for no values
  WalkMedian(
      n, 0, 0, sorted_.size(), [&](std::size_t p) { return counts[sorted_[p].second]; }, &median);
  if (memoise_) memo_.emplace(counts, median);
  return median;
}

std::vector<double> DrawMedians(Side& side, std::uint64_t seed, int resamples) {
  if (Draws(side.units(), resamples) > 0) return AllMedians(side);
  const auto [first, second] = side.Fingerprint();
  const DrawKey key{seed, first, second, resamples};
  {
    const std::lock_guard<std::mutex> lock(drawn_mutex);
    if (auto it = drawn.find(key); it != drawn.end()) return it->second;
  }
  std::vector<double> medians(std::size_t(std::max(resamples, 0)));
  ForEachResample(seed, resamples, side.units(), 0, side.shareable(),
                  [&](SplitMix64& rng, int r, std::vector<std::uint32_t>& counts, auto&) {
                    medians[std::size_t(r)] = side.DrawMedian(rng, counts);
                  });
  const std::lock_guard<std::mutex> lock(drawn_mutex);
  drawn.emplace(key, medians);
  return medians;
}

Bounds Percentiles(std::vector<double>& ratios) {
  std::sort(ratios.begin(), ratios.end());
  return {Quantile(ratios, 0.025), Quantile(ratios, 0.975)};
}

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
                      const double a = num.DrawMedian(rng, cn);
                      ratios[std::size_t(r)] = a / den.DrawMedian(rng, cd) - 1;
                    });
  }
  return Percentiles(ratios);
}

}  // namespace bootstrap

void SetBootstrapThreads(int threads) { bootstrap::bootstrap_threads.store(threads); }

void ForgetBootstrapDraws() {
  const std::lock_guard<std::mutex> lock(bootstrap::drawn_mutex);
  bootstrap::drawn.clear();
}

}  // namespace ablation::client::report
