#include "client/report/run_index.h"

#include <algorithm>
#include <cmath>
#include <set>

namespace ablation::client::report {
namespace {

// The family ListVariants gives cuBLAS entries (kernels/registry.h).
constexpr const char* kCublasFamily = "cublas";
// The family of the shared memory -> register micro-benchmarks (kernels/smem2reg).
constexpr const char* kMicroFamily = "smem2reg";

bool Has(const std::vector<std::pair<std::string, std::string>>& keys, const v1::Measurement& m) {
  return std::find(keys.begin(), keys.end(), std::pair(m.variant(), m.dtype())) != keys.end();
}

// The finite, positive values: a probe that could not tell leaves NaN in sample_cycles.
std::vector<double> Usable(const google::protobuf::RepeatedField<double>& values) {
  std::vector<double> out;
  for (double v : values)
    if (std::isfinite(v) && v > 0) out.push_back(v);
  return out;
}

}  // namespace

v1::Shape MakeShape(std::int64_t m, std::int64_t n, std::int64_t k) {
  v1::Shape s;
  s.set_m(m);
  s.set_n(n);
  s.set_k(k);
  return s;
}

bool SameShape(const v1::Shape& a, const v1::Shape& b) {
  return a.m() == b.m() && a.n() == b.n() && a.k() == b.k();
}

std::string ItemName(const v1::Measurement& m) {
  return m.variant() + " " + m.dtype() + " " + std::to_string(m.shape().m()) + "x" +
         std::to_string(m.shape().n()) + "x" + std::to_string(m.shape().k());
}

v1::Change ChangeMessage(const Change& c) {
  v1::Change out;
  out.set_estimate(c.estimate);
  if (c.has_interval) {
    out.mutable_interval()->set_low(c.low);
    out.mutable_interval()->set_high(c.high);
  }
  out.set_within_noise(c.within_noise());
  out.set_floor(c.floor);
  out.set_rounds(c.rounds);
  switch (c.basis) {
    case Basis::kRounds:
      out.set_basis(v1::CHANGE_BASIS_ROUNDS);
      break;
    case Basis::kSamples:
      out.set_basis(v1::CHANGE_BASIS_SAMPLES);
      out.set_note(kOneRoundNote);
      break;
    case Basis::kMedians:
      out.set_basis(v1::CHANGE_BASIS_MEDIANS);
      out.set_note(kNoSamplesNote);
      break;
    case Basis::kPairedRounds:
      out.set_basis(v1::CHANGE_BASIS_PAIRED_ROUNDS);
      break;
    case Basis::kPairedCycles:
      out.set_basis(v1::CHANGE_BASIS_PAIRED_CYCLES);
      out.set_note(kPairedOneRoundNote);
      break;
  }
  out.set_paired(c.paired);
  return out;
}

namespace {

// An item's successful rounds of one quantity: the row's per-sample values, and the median it
// stored (the worker's, of those samples), else the samples' (NaN: none); rounds with neither are
// left out.
template <class Samples, class Stored>
ItemRounds RoundsOf(const Item& item, Samples samples, Stored stored) {
  ItemRounds out;
  for (const v1::Measurement* m : item.ok) {
    RoundData r{m->round(), Usable(samples(*m)), stored(*m)};
    if (!(r.median > 0) && !r.samples.empty()) r.median = Median(r.samples);
    if (r.median > 0) out.push_back(std::move(r));
  }
  return out;
}

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

}  // namespace

ItemRounds Times(const Item& item) {
  return RoundsOf(
      item, [](const v1::Measurement& m) -> const auto& { return m.sample_ms(); },
      [](const v1::Measurement& m) { return m.stats().median_ms(); });
}

ItemRounds Cycles(const Item& item) {
  return RoundsOf(
      item, [](const v1::Measurement& m) -> const auto& { return m.sample_cycles(); },
      [](const v1::Measurement& m) {
        return m.stats().has_median_cycles() ? m.stats().median_cycles() : kNaN;
      });
}

ItemRounds Clocks(const Item& item) {
  return RoundsOf(
      item, [](const v1::Measurement& m) -> const auto& { return m.sample_sm_mhz(); },
      [](const v1::Measurement& m) {
        return m.stats().has_median_sm_mhz() ? m.stats().median_sm_mhz() : kNaN;
      });
}

ItemRounds SoloTimes(const Item& item) {
  ItemRounds out;
  for (const v1::Measurement* m : item.ok) {
    if (!m->solo().solo_measured()) continue;
    // A window of one variant is its solo span: its samples are the window's.
    const auto& samples = !m->solo_sample_ms().empty() ? m->solo_sample_ms()
                          : m->window_members() == 1   ? m->sample_ms()
                                                       : m->solo_sample_ms();
    RoundData r{m->round(), Usable(samples), m->solo().solo_median_ms()};
    if (!(r.median > 0) && !r.samples.empty()) r.median = Median(r.samples);
    if (r.median > 0) out.push_back(std::move(r));
  }
  return out;
}

ItemRounds SoloClocks(const Item& item) {
  ItemRounds out;
  for (const v1::Measurement* m : item.ok)
    if (m->solo().solo_measured() && m->solo().has_solo_sm_mhz())
      out.push_back({m->round(), {}, m->solo().solo_sm_mhz()});
  return out;
}

bool AllSolo(const Item& item) {
  return item.measured() && std::all_of(item.ok.begin(), item.ok.end(),
                                        [](const auto* m) { return m->solo().solo_measured(); });
}

double SoloTflops(const Item& item, double median_ms) {
  for (const v1::Measurement* m : item.ok)
    if (m->solo().solo_measured() && m->solo().solo_median_ms() > 0 && median_ms > 0)
      return m->solo().solo_tflops() * m->solo().solo_median_ms() / median_ms;
  return 0;
}

namespace {

std::vector<double> Raw(const google::protobuf::RepeatedField<double>& values) {
  return {values.begin(), values.end()};
}

// Per shared window, `values` of self's row and of vs's, unfiltered: PairedLogRatios pairs them
// by cycle.
template <class Values>
std::vector<PairedRound> SharedWindows(const Item& self, const Item& vs, Values values) {
  std::vector<PairedRound> out;
  for (const v1::Measurement* s : self.ok) {
    if (s->window() == 0) continue;
    for (const v1::Measurement* v : vs.ok) {
      if (v->window() != s->window()) continue;
      out.push_back({s->round(), values(*s), values(*v)});
      break;
    }
  }
  return out;
}

}  // namespace

std::vector<PairedRound> PairedTimes(const Item& self, const Item& vs) {
  return SharedWindows(self, vs, [](const v1::Measurement& m) { return Raw(m.sample_ms()); });
}

std::vector<PairedRound> PairedCycles(const Item& self, const Item& vs) {
  return SharedWindows(self, vs, [](const v1::Measurement& m) { return Raw(m.sample_cycles()); });
}

std::vector<PairedRound> PairedClocks(const Item& self, const Item& vs) {
  return SharedWindows(self, vs, [](const v1::Measurement& m) {
    return m.stats().has_median_sm_mhz() ? std::vector<double>{m.stats().median_sm_mhz()}
                                         : Raw(m.sample_sm_mhz());
  });
}

double LowClockShare(const Item& item) {
  double low = 0, samples = 0;
  for (const v1::Measurement* m : item.ok) {
    if (!m->stats().has_low_clock_samples()) continue;
    low += m->stats().low_clock_samples();
    samples += m->stats().samples();
  }
  return samples > 0 ? low / samples : -1;
}

RunIndex::RunIndex(const v1::GetRunResponse& run, const std::vector<v1::Variant>& variants)
    : rounds_(run.run().rounds()) {
  for (const v1::Measurement& m : run.measurements()) {
    const Key key{m.variant(), m.dtype(), m.shape().m(), m.shape().n(), m.shape().k()};
    auto [it, inserted] = by_key_.emplace(key, items_.size());
    if (inserted) items_.emplace_back();
    Item& item = items_[it->second];
    item.rows.push_back(&m);
    if (m.status() == v1::MEASUREMENT_STATUS_OK) item.ok.push_back(&m);
    rows_.push_back(&m);
    rounds_ = std::max(rounds_, m.round() + 1);
  }
  std::vector<double> spreads, cycle_spreads, solo_spreads;
  for (Item& item : items_) {
    std::stable_sort(item.ok.begin(), item.ok.end(),
                     [](const auto* a, const auto* b) { return a->round() < b->round(); });
    const ItemRounds times = Times(item);
    item.median_ms = ItemMedian(times);
    // TFLOPS scale as 1 / time: a row's TFLOPS at its median, moved to the item's median.
    for (const v1::Measurement* m : item.ok)
      if (m->stats().median_ms() > 0 && item.median_ms > 0) {
        item.tflops = m->tflops() * m->stats().median_ms() / item.median_ms;
        break;
      }
    spreads.push_back(RoundSpread(times));
    cycle_spreads.push_back(RoundSpread(Cycles(item)));
    solo_spreads.push_back(RoundSpread(SoloTimes(item)));
  }
  floor_ = NoiseFloor(spreads);
  cycles_floor_ = NoiseFloor(cycle_spreads);
  solo_floor_ = NoiseFloor(solo_spreads);
  SetPairedFloors();
  for (const v1::Variant& v : variants) {
    variants_.emplace(v.name(), &v);
    if (v.family() == kCublasFamily) cublas_.push_back(&v);
  }
}

void RunIndex::SetPairedFloors() {
  // Every two items with a successful row in one window: the items of a window group pairwise.
  std::map<std::int64_t, std::vector<std::size_t>> windows;
  for (std::size_t i = 0; i < items_.size(); ++i)
    for (const v1::Measurement* m : items_[i].ok)
      if (m->window() != 0) windows[m->window()].push_back(i);
  std::set<std::pair<std::size_t, std::size_t>> pairs;
  for (const auto& [window, members] : windows)
    for (std::size_t a = 0; a < members.size(); ++a)
      for (std::size_t b = a + 1; b < members.size(); ++b)
        if (members[a] != members[b])
          pairs.emplace(std::min(members[a], members[b]), std::max(members[a], members[b]));
  paired_ = !pairs.empty();
  std::vector<double> spreads, cycle_spreads;
  for (const auto& [a, b] : pairs) {
    spreads.push_back(PairedSpread(PairedTimes(items_[a], items_[b])));
    cycle_spreads.push_back(PairedSpread(PairedCycles(items_[a], items_[b])));
  }
  paired_floor_ = NoiseFloor(spreads);
  paired_cycles_floor_ = NoiseFloor(cycle_spreads);
}

const Item* RunIndex::Find(const std::string& variant, const std::string& dtype,
                           const v1::Shape& s) const {
  auto it = by_key_.find(Key{variant, dtype, s.m(), s.n(), s.k()});
  return it == by_key_.end() ? nullptr : &items_[it->second];
}

const Item* RunIndex::Fastest(const std::vector<std::string>& variants, const std::string& dtype,
                              const v1::Shape& shape) const {
  const Item* best = nullptr;
  for (const Item& item : items_) {
    const v1::Measurement& m = item.first();
    if (!item.measured() || m.dtype() != dtype || !SameShape(m.shape(), shape)) continue;
    if (std::find(variants.begin(), variants.end(), m.variant()) == variants.end()) continue;
    if (!best || item.tflops > best->tflops) best = &item;
  }
  return best;
}

int RunIndex::Count(const std::vector<std::pair<std::string, std::string>>& keys) const {
  return int(std::count_if(rows_.begin(), rows_.end(),
                           [&](const v1::Measurement* m) { return Has(keys, *m); }));
}

std::vector<v1::Shape> RunIndex::ShapesOf(
    const std::vector<std::pair<std::string, std::string>>& keys) const {
  std::vector<v1::Shape> shapes;
  for (const v1::Measurement* m : rows_) {
    if (!Has(keys, *m)) continue;
    if (std::none_of(shapes.begin(), shapes.end(),
                     [&](const v1::Shape& s) { return SameShape(s, m->shape()); }))
      shapes.push_back(m->shape());
  }
  return shapes;
}

v1::Shape RunIndex::ReferenceShape() const {
  const v1::Shape preferred = MakeShape(4096, 4096, 4096);
  std::map<std::tuple<std::int64_t, std::int64_t, std::int64_t>, int> counts;
  for (const v1::Measurement* m : rows_) {
    if (SameShape(m->shape(), preferred)) return preferred;
    ++counts[{m->shape().m(), m->shape().n(), m->shape().k()}];
  }
  if (counts.empty()) return preferred;
  auto best = std::max_element(counts.begin(), counts.end(),
                               [](const auto& a, const auto& b) { return a.second < b.second; });
  return MakeShape(std::get<0>(best->first), std::get<1>(best->first), std::get<2>(best->first));
}

std::string RunIndex::Tile(const std::string& variant) const {
  auto it = variants_.find(variant);
  if (it == variants_.end()) return "";
  const v1::Variant& v = *it->second;
  if (v.tile_m() <= 0 || v.tile_n() <= 0 || v.tile_k() <= 0) return "";
  return std::to_string(v.tile_m()) + "x" + std::to_string(v.tile_n()) + "x" +
         std::to_string(v.tile_k());
}

const Item* RunIndex::MicroBenchmark(const std::string& variant, const std::string& dtype,
                                     const v1::Shape& shape) const {
  auto self = variants_.find(variant);
  if (self == variants_.end() || self->second->family() == kMicroFamily) return nullptr;
  const auto& params = self->second->params();
  for (const Item& item : items_) {
    const v1::Measurement& m = item.first();
    if (!item.measured() || m.dtype() != dtype || !SameShape(m.shape(), shape)) continue;
    auto micro = variants_.find(m.variant());
    if (micro == variants_.end() || micro->second->family() != kMicroFamily ||
        micro->second->params().empty())
      continue;
    const bool same = std::all_of(micro->second->params().begin(), micro->second->params().end(),
                                  [&](const auto& kv) {
                                    auto it = params.find(kv.first);
                                    return it != params.end() && it->second == kv.second;
                                  });
    if (same) return &item;
  }
  return nullptr;
}

std::string RunIndex::Cublas(const std::string& dtype, bool best) const {
  // Which of the dtype's two baselines an entry is: its "pick" parameter (kernels/cublas).
  for (const v1::Variant* v : cublas_) {
    auto pick = v->params().find("pick");
    const bool is_best = pick != v->params().end() && pick->second == "best";
    if (is_best == best &&
        std::find(v->dtypes().begin(), v->dtypes().end(), dtype) != v->dtypes().end())
      return v->name();
  }
  return "";
}

}  // namespace ablation::client::report
