#include "client/report/sections.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <set>
#include <tuple>

#include "client/output/format.h"
#include "client/report/conditions.h"
#include "client/report/stats.h"

namespace ablation::client::report {
namespace {

using Keys = std::vector<std::pair<std::string, std::string>>;
using Counters = std::vector<std::string>;  // the concepts a section shows

// A rung as shown: per_tile rungs once per tile, each with the variants it stands for there.
struct Instance {
  const v1::PresetRung* rung = nullptr;
  std::string tile;                     // per_tile: the tile ("" when none was measured)
  std::vector<std::string> candidates;  // the canonical names it stands for
  int pass = -1;                        // per_tile: the tile's pass; -1 otherwise
  const Item* found = nullptr;
};

// What per_tile rungs repeat over: a variant's tile, or for a user variant (which has none) its
// knob set ("stages=3 swizzle=1"), so that a version ladder repeats per knob set.
std::string GroupOf(const RunIndex& index, const std::string& variant) {
  std::string tile = index.Tile(variant);
  if (!tile.empty() || variant.rfind("user.", 0) != 0) return tile;
  // user.<kernel>[@<version>].<knob>=<v>...: neither the kernel nor the tag has a '.'
  const std::size_t dot = variant.find('.', 5);
  if (dot == std::string::npos) return "";
  std::string knobs = variant.substr(dot + 1);
  std::replace(knobs.begin(), knobs.end(), '.', ' ');
  return knobs;
}

// The rungs of a block with each span of consecutive per_tile rungs repeated for every tile (or
// user knob set, GroupOf) that the run measured at `shape` among the span's variants.
std::vector<Instance> Expand(const v1::PresetBlock& block, const RunIndex& index,
                             const v1::Shape& shape) {
  std::vector<Instance> out;
  int passes = 0;
  const auto& rungs = block.rungs();
  for (int i = 0; i < rungs.size();) {
    if (!rungs[i].per_tile()) {
      out.push_back({&rungs[i], "", {rungs[i].resolved().begin(), rungs[i].resolved().end()}});
      ++i;
      continue;
    }
    int end = i;
    std::set<std::string> tiles;  // sorted as text: 128x128x32 before 64x64x16
    for (; end < rungs.size() && rungs[end].per_tile(); ++end)
      for (const std::string& v : rungs[end].resolved())
        if (index.Find(v, rungs[end].dtype(), shape)) tiles.insert(GroupOf(index, v));
    tiles.erase("");
    if (tiles.empty()) tiles.insert("");  // nothing measured: the rungs as they are
    for (const std::string& tile : tiles) {
      for (int r = i; r < end; ++r) {
        Instance instance{&rungs[r], tile, {}, passes};
        for (const std::string& v : rungs[r].resolved())
          if (tile.empty() || GroupOf(index, v) == tile) instance.candidates.push_back(v);
        out.push_back(std::move(instance));
      }
      ++passes;
    }
    i = end;
  }
  return out;
}

v1::RowStatus RowStatusOf(v1::MeasurementStatus status) {
  switch (status) {
    case v1::MEASUREMENT_STATUS_OK:
      return v1::ROW_STATUS_OK;
    case v1::MEASUREMENT_STATUS_SKIPPED:
      return v1::ROW_STATUS_SKIPPED;
    default:
      return v1::ROW_STATUS_FAILED;
  }
}

// TFLOPS at the bounds of the median time's interval (a shorter time is more TFLOPS).
void SetTflopsInterval(const Item& item, v1::ReportRow* row) {
  double low_ms = 0, high_ms = 0;
  if (!MedianInterval(Times(item), SeedFor(ItemName(item.first()) + "|tflops"), &low_ms, &high_ms))
    return;
  if (!(low_ms > 0 && high_ms > 0)) return;
  row->mutable_tflops_interval()->set_low(item.tflops * item.median_ms / high_ms);
  row->mutable_tflops_interval()->set_high(item.tflops * item.median_ms / low_ms);
}

// The median over the item's successful rounds of a row's optional value; NaN where none has it.
template <class Has, class Get>
double RoundsMedian(const Item& item, Has has, Get get) {
  std::vector<double> values;
  for (const v1::Measurement* m : item.ok)
    if (has(*m)) values.push_back(get(*m));
  return Median(std::move(values));
}

// The regime of the item's rows and its clock-normalised throughput.
void SetRegime(const Item& item, v1::ReportRow* row) {
  row->set_regime(item.ok.front()->regime());
  const double per_ghz = RoundsMedian(
      item, [](const auto& m) { return m.has_tflops_per_ghz(); },
      [](const auto& m) { return m.tflops_per_ghz(); });
  if (std::isfinite(per_ghz)) row->set_tflops_per_ghz(per_ghz);
  const double peak = RoundsMedian(
      item, [](const auto& m) { return m.has_peak_share(); },
      [](const auto& m) { return m.peak_share(); });
  if (std::isfinite(peak)) row->set_peak_share(peak);
  const double ceiling = RoundsMedian(
      item, [](const auto& m) { return m.has_peak_tflops(); },
      [](const auto& m) { return m.peak_tflops(); });
  if (std::isfinite(ceiling)) row->set_peak_tflops(ceiling);
}

// The item's solo spans over its rounds (SoloSummary): the variant alone at the cap.
void SetSolo(const Item& item, v1::ReportRow* row) {
  const ItemRounds solo = SoloTimes(item);
  if (solo.empty()) return;
  v1::SoloSummary* s = row->mutable_solo();
  s->set_rounds(int(solo.size()));
  const double median = ItemMedian(solo);
  s->set_median_ms(median);
  s->set_tflops(SoloTflops(item, median));
  double low_ms = 0, high_ms = 0;
  if (MedianInterval(solo, SeedFor(ItemName(item.first()) + "|solo"), &low_ms, &high_ms) &&
      low_ms > 0 && high_ms > 0) {
    s->mutable_tflops_interval()->set_low(s->tflops() * median / high_ms);
    s->mutable_tflops_interval()->set_high(s->tflops() * median / low_ms);
  }
  auto solo_median = [&](auto has, auto get) {
    return RoundsMedian(
        item, [&](const v1::Measurement& m) { return m.solo().solo_measured() && has(m.solo()); },
        [&](const v1::Measurement& m) { return get(m.solo()); });
  };
  const double mhz = solo_median([](const auto& x) { return x.has_solo_sm_mhz(); },
                                 [](const auto& x) { return x.solo_sm_mhz(); });
  if (std::isfinite(mhz)) s->set_sm_mhz(mhz);
  const double peak = solo_median([](const auto& x) { return x.has_solo_peak_share(); },
                                  [](const auto& x) { return x.solo_peak_share(); });
  if (std::isfinite(peak)) s->set_peak_share(peak);
  const double joules = solo_median([](const auto& x) { return x.has_solo_joules_per_tflop(); },
                                    [](const auto& x) { return x.solo_joules_per_tflop(); });
  if (std::isfinite(joules)) s->set_joules_per_tflop(joules);
  const double power = solo_median([](const auto& x) { return x.has_solo_power_w(); },
                                   [](const auto& x) { return x.solo_power_w(); });
  if (std::isfinite(power)) s->set_power_w(power);
  s->set_conditioned(std::all_of(item.ok.begin(), item.ok.end(), [](const auto* m) {
    return !m->solo().solo_measured() || m->solo().solo_conditioned();
  }));
}

// The item's TFLOPS as the shares read them: solo (alone at the cap) or its window's.
double ShareTflops(const Item& item, bool solo) {
  return solo ? SoloTflops(item, ItemMedian(SoloTimes(item))) : item.tflops;
}

// The shares of the dtype's two cuBLAS baselines, from solo figures where this item and every
// measured baseline have them in every round, else from the windows'.
void SetShares(const RunIndex& index, const Item& item, v1::ReportRow* row) {
  const v1::Measurement& m = item.first();
  row->set_cublas_best_variant(index.Cublas(m.dtype(), true));
  const Item* heuristic = index.Find(row->cublas_variant(), m.dtype(), m.shape());
  const Item* best = index.Find(row->cublas_best_variant(), m.dtype(), m.shape());
  if (heuristic && !heuristic->measured()) heuristic = nullptr;
  if (best && !best->measured()) best = nullptr;
  if (!heuristic && !best) return;
  const bool solo =
      AllSolo(item) && (!heuristic || AllSolo(*heuristic)) && (!best || AllSolo(*best));
  row->set_share_basis(solo ? "solo" : "window");
  const double self = ShareTflops(item, solo);
  if (heuristic && ShareTflops(*heuristic, solo) > 0)
    row->set_cublas_share(self / ShareTflops(*heuristic, solo));
  if (best && ShareTflops(*best, solo) > 0)
    row->set_cublas_best_share(self / ShareTflops(*best, solo));
}

// Its rounds apart (stats.h, Levels) from its rounds' `times` and `cycles` (Times, Cycles), with
// each round's TFLOPS at its median time.
void SetRoundsApart(const Item& item, const ItemRounds& times, const ItemRounds& cycles,
                    v1::ReportRow* row) {
  bool on_cycles = false;
  const std::optional<RoundLevels> apart = LevelsOf(times, cycles, &on_cycles);
  if (!apart) return;
  v1::RoundsApart* out = row->mutable_rounds_apart();
  out->set_spread(apart->spread);
  out->set_within(apart->within);
  out->set_basis(on_cycles ? "cycles" : "time");
  for (const RoundData& r : times)
    out->add_round_tflops(r.median > 0 ? item.tflops * item.median_ms / r.median : 0);
}

// A row of an item (null: missing): its numbers over its successful rounds, its clocks, counters
// and its share of the dtype's cuBLAS. An item no round measured shows its first row's status and
// error.
void Fill(const RunIndex& index, const Item* item, const Counters& counters, v1::ReportRow* row) {
  row->set_cublas_variant(index.Cublas(row->dtype()));
  if (item != nullptr) row->set_variant(item->first().variant());
  const std::string best = index.Cublas(row->dtype(), true);
  row->set_baseline((!row->cublas_variant().empty() && row->variant() == row->cublas_variant()) ||
                    (!best.empty() && row->variant() == best));
  if (item == nullptr) {
    row->set_status(v1::ROW_STATUS_MISSING);
    return;
  }
  row->set_failed_rounds(int(item->rows.size() - item->ok.size()));
  if (!item->measured()) {
    row->set_status(RowStatusOf(item->first().status()));
    row->set_error(item->first().error());
    return;
  }
  row->set_status(v1::ROW_STATUS_OK);
  row->set_rounds(int(item->ok.size()));
  row->set_tflops(item->tflops);
  SetTflopsInterval(*item, row);
  row->set_median_ms(item->median_ms);
  int samples = 0;
  for (const v1::Measurement* m : item->ok) samples += m->stats().samples();
  row->set_samples(samples);
  const ItemRounds times = Times(*item), cycles = Cycles(*item);
  if (!cycles.empty()) row->set_median_cycles(ItemMedian(cycles));
  if (const double share = LowClockShare(*item); share >= 0) row->set_low_clock_share(share);
  if (const double spread = RoundSpread(times); std::isfinite(spread))
    row->set_round_spread(spread);
  SetRoundsApart(*item, times, cycles, row);
  SetRegime(*item, row);
  FillConditions(*item, counters, row);
  SetSolo(*item, row);
  row->set_shared_window(item->ok.front()->window_members() > 1);
  if (item->ok.front()->has_library()) *row->mutable_library() = item->ok.front()->library();
  SetShares(index, *item, row);
}

v1::ReportRow RungRow(const RunIndex& index, Instance& instance, const v1::Shape& shape,
                      const Counters& counters) {
  const v1::PresetRung& rung = *instance.rung;
  v1::ReportRow row;
  row.set_rung(rung.id());
  // A per-tile row says which dtype and tile it is.
  row.set_what(!rung.per_tile() ? rung.label()
                                : rung.dtype() +
                                      (instance.tile.empty() ? ""
                                       : instance.tile.find('=') != std::string::npos
                                           ? ", " + instance.tile  // a user kernel's knob set
                                           : ", tile " + instance.tile) +
                                      ": " + rung.label());
  row.set_variant(instance.candidates.size() == 1 ? instance.candidates[0] : rung.variant());
  row.set_dtype(rung.dtype());
  *row.mutable_shape() = shape;
  for (const std::string& a : rung.against()) row.add_against(a);
  instance.found = instance.candidates.size() == 1
                       ? index.Find(instance.candidates[0], rung.dtype(), shape)
                       : index.Fastest(instance.candidates, rung.dtype(), shape);
  Fill(index, instance.found, counters, &row);
  return row;
}

// The cycles change over the rounds, unpaired, where both items have cycles.
void SetUnpairedCycles(const RunIndex& index, const Item& self, const Item& vs,
                       const std::string& key, v1::ReportRow* row) {
  const ItemRounds a = Cycles(vs), b = Cycles(self);
  if (!a.empty() && !b.empty())
    *row->mutable_cycles_change() =
        ChangeMessage(SpeedChange(a, b, index.cycles_floor(), SeedFor(key + "|cycles")));
}

// A change from the windows both items were interleaved in (stats.h): the time change at their
// shared clock, the cycles change (paired where the windows have cycles, else over the rounds),
// what the clocks did, and which of the two moved the time.
void SetPairedChange(const RunIndex& index, const Item& self, const Item& vs, const Change& time,
                     const std::string& key, v1::ReportRow* row) {
  *row->mutable_change() = ChangeMessage(time);
  const std::optional<Change> cycles =
      PairedChange(PairedCycles(self, vs), index.paired_cycles_floor(), SeedFor(key + "|cycles"));
  if (cycles) {
    *row->mutable_cycles_change() = ChangeMessage(*cycles);
  } else {
    SetUnpairedCycles(index, self, vs, key, row);
  }
  const double clock = PairedClockChange(PairedClocks(self, vs));
  if (!std::isfinite(clock)) return;
  row->set_clock_change(clock);
  // Both parts from the same windows, or no verdict on which moved the time.
  if (cycles) row->set_change_source(ChangeSource(time.within_noise(), cycles->estimate, clock));
}

// "power (clock)", "work" or "work and power": which moved the at-cap change (ChangeSource's
// verdict in the words of a solo figure, whose clock its own power sets).
std::string AtCapSource(bool within_noise, double cycles_change, double clock_change) {
  const std::string source = ChangeSource(within_noise, cycles_change, clock_change);
  if (source == "clock (power)") return "power (clock)";
  if (source == "work and clock") return "work and power";
  return source;
}

// The at-cap change: the speed change of the solo spans (each alone at the cap) over the rounds
// both have, beside the paired one; its clock part from the rounds' solo clocks, and which of the
// work (the paired cycles change) and the power decided it.
void SetAtCapChange(const RunIndex& index, const Item& self, const Item& vs, const std::string& key,
                    v1::ReportRow* row) {
  const ItemRounds a = SoloTimes(vs), b = SoloTimes(self);
  if (a.empty() || b.empty()) return;
  const Change change = SpeedChange(a, b, index.solo_floor(), SeedFor(key + "|solo"));
  *row->mutable_at_cap_change() = ChangeMessage(change);
  const ItemRounds ca = SoloClocks(vs), cb = SoloClocks(self);
  double sum = 0;
  int n = 0;
  for (const RoundData& x : cb)
    for (const RoundData& y : ca)
      if (x.round == y.round && x.median > 0 && y.median > 0) {
        sum += std::log(x.median / y.median);
        ++n;
      }
  if (n == 0) return;
  const double clock = std::exp(sum / n) - 1;
  row->set_at_cap_clock_change(clock);
  if (row->has_cycles_change())
    row->set_at_cap_source(
        AtCapSource(change.within_noise(), row->cycles_change().estimate(), clock));
}

// The speed change of `row` against `vs_row` (stats.h): paired where the two items shared a
// window in some round, else over the rounds; in time and, where both have them, in SM cycles;
// and at the cap, from the solo spans.
void SetChange(const std::string& section, const RunIndex& index, const Item& self, const Item& vs,
               const v1::ReportRow& vs_row, v1::ReportRow* row) {
  row->set_vs(vs_row.rung());
  row->set_vs_variant(vs_row.variant());
  const std::string key = section + "|" + row->variant() + "|" + vs_row.variant() + "|" +
                          row->dtype() + "|" + FormatShape(row->shape());
  if (const std::optional<Change> paired =
          PairedChange(PairedTimes(self, vs), index.paired_floor(), SeedFor(key))) {
    SetPairedChange(index, self, vs, *paired, key, row);
  } else {
    *row->mutable_change() =
        ChangeMessage(SpeedChange(Times(vs), Times(self), index.floor(), SeedFor(key)));
    SetUnpairedCycles(index, self, vs, key, row);
  }
  SetAtCapChange(index, self, vs, key, row);
}

// A block's rows at one shape, each measured one compared with the fastest measured of the rungs
// it is against (of its own tile, or not per tile).
std::vector<v1::ReportRow> BlockRows(const std::string& section, const v1::PresetBlock& block,
                                     const RunIndex& index, const v1::Shape& shape,
                                     const Counters& counters) {
  std::vector<Instance> instances = Expand(block, index, shape);
  std::vector<v1::ReportRow> rows;
  for (Instance& instance : instances) rows.push_back(RungRow(index, instance, shape, counters));
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (rows[i].status() != v1::ROW_STATUS_OK) continue;
    int best = -1;
    for (const std::string& id : instances[i].rung->against()) {
      for (std::size_t j = 0; j < rows.size(); ++j) {
        const bool reachable = instances[j].pass == -1 || instances[j].pass == instances[i].pass;
        if (j == i || !reachable || rows[j].rung() != id || rows[j].status() != v1::ROW_STATUS_OK)
          continue;
        if (best < 0 || rows[j].tflops() > rows[best].tflops()) best = int(j);
      }
    }
    if (best >= 0)
      SetChange(section, index, *instances[i].found, *instances[best].found, rows[best], &rows[i]);
  }
  return rows;
}

Keys KeysOf(const v1::PresetBlock& block) {
  Keys keys;
  for (const v1::PresetRung& rung : block.rungs())
    for (const std::string& v : rung.resolved()) keys.emplace_back(v, rung.dtype());
  return keys;
}

// Every block in turn, or the one of which the run measured the most (the first on a tie).
std::vector<const v1::PresetBlock*> Blocks(const v1::PresetReport& report, const RunIndex& index) {
  std::vector<const v1::PresetBlock*> blocks;
  for (const v1::PresetBlock& b : report.blocks()) blocks.push_back(&b);
  if (report.per_dtype() || blocks.empty()) return blocks;
  const v1::PresetBlock* best = blocks[0];
  int most = index.Count(KeysOf(*best));
  for (const v1::PresetBlock* b : blocks) {
    const int n = index.Count(KeysOf(*b));
    if (n > most) best = b, most = n;
  }
  return {best};
}

std::string Substitute(std::string text, const std::string& placeholder, const std::string& value) {
  for (std::size_t at = text.find(placeholder); at != std::string::npos;
       at = text.find(placeholder, at + value.size()))
    text.replace(at, placeholder.size(), value);
  return text;
}

bool ShapeLess(const v1::Shape& a, const v1::Shape& b) {
  return std::tuple(a.m(), a.n(), a.k()) < std::tuple(b.m(), b.n(), b.k());
}

// Per shape: the preset's shapes and the run's other shapes of these rungs, rung-major rows.
void ShapeRows(const std::string& section, const v1::PresetReport& report,
               const v1::PresetBlock& block, const RunIndex& index, const Counters& counters,
               v1::ReportSection* s) {
  std::vector<v1::Shape> shapes(report.shapes().begin(), report.shapes().end());
  for (const v1::Shape& shape : index.ShapesOf(KeysOf(block)))
    if (std::none_of(shapes.begin(), shapes.end(),
                     [&](const v1::Shape& x) { return SameShape(x, shape); }))
      shapes.push_back(shape);
  std::sort(shapes.begin(), shapes.end(), ShapeLess);
  std::vector<std::vector<v1::ReportRow>> by_shape;
  for (const v1::Shape& shape : shapes)
    by_shape.push_back(BlockRows(section, block, index, shape, counters));
  for (const v1::Shape& shape : shapes) *s->add_shapes() = shape;
  const std::size_t rungs = by_shape.empty() ? 0 : by_shape[0].size();
  for (std::size_t r = 0; r < rungs; ++r)
    for (const auto& column : by_shape) *s->add_rows() = column[r];
}

void Count(v1::ReportSection* s) {
  for (const v1::ReportRow& row : s->rows()) {
    s->set_measured(s->measured() + (row.status() == v1::ROW_STATUS_OK));
    s->set_missing(s->missing() + (row.status() == v1::ROW_STATUS_MISSING));
  }
}

}  // namespace

v1::ReportSection PresetSection(const v1::Preset& preset, const RunIndex& index,
                                const v1::Shape& reference) {
  const v1::PresetReport& report = preset.report();
  v1::ReportSection s;
  s.set_id(preset.name());
  s.set_title(report.title());
  s.set_layout(report.per_shape() ? v1::SECTION_LAYOUT_SHAPES : v1::SECTION_LAYOUT_LADDER);
  for (const std::string& note : report.notes()) s.add_notes(note);
  *s.mutable_counters() = report.counters();
  const Counters counters(report.counters().begin(), report.counters().end());
  const std::vector<const v1::PresetBlock*> blocks = Blocks(report, index);
  std::vector<std::string> dtypes;
  for (const v1::PresetBlock* b : blocks) dtypes.push_back(b->dtype());
  s.set_scope(Substitute(Substitute(report.scope(), "{dtype}", Join(dtypes, " / ")), "{shape}",
                         FormatShape(reference)));
  for (const v1::PresetBlock* block : blocks) {
    if (report.per_shape()) {
      ShapeRows(s.id(), report, *block, index, counters, &s);
      continue;
    }
    for (v1::ReportRow& row : BlockRows(s.id(), *block, index, reference, counters))
      *s.add_rows() = std::move(row);
  }
  CompareLoads(index, &s);
  Count(&s);
  return s;
}

v1::ReportSection AllSection(const RunIndex& index) {
  v1::ReportSection s;
  s.set_id("all");
  s.set_title("All measurements of the run");
  s.set_scope(
      "each item with its rounds together, in the order of its first measurement; share against "
      "the cuBLAS of the same dtype and shape");
  s.set_layout(v1::SECTION_LAYOUT_ALL);
  int number = 0;
  for (const Item& item : index.items()) {
    v1::ReportRow* row = s.add_rows();
    row->set_rung(std::to_string(++number));
    row->set_dtype(item.first().dtype());
    *row->mutable_shape() = item.first().shape();
    Fill(index, &item, {}, row);
  }
  Count(&s);
  return s;
}

}  // namespace ablation::client::report
