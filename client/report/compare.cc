#include "client/report/compare.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include "client/output/enum_words.h"
#include "client/output/format.h"
#include "client/report/conditions.h"
#include "client/report/run_index.h"
#include "client/report/stats.h"
#include "client/report/text.h"

namespace ablation::client::report {
namespace {

namespace v1 = ::ablation::v1;

using Key = std::tuple<std::string, std::string, std::int64_t, std::int64_t, std::int64_t>;

// The measured items of a run by key, so that rows come sorted by variant, dtype and shape.
std::map<Key, const Item*> MeasuredItems(const RunIndex& index) {
  std::map<Key, const Item*> out;
  for (const Item& item : index.items()) {
    if (!item.measured()) continue;
    const v1::Measurement& m = item.first();
    out[{m.variant(), m.dtype(), m.shape().m(), m.shape().n(), m.shape().k()}] = &item;
  }
  return out;
}

std::vector<double> Pooled(const ItemRounds& rounds) {
  std::vector<double> out;
  for (const RoundData& r : rounds) out.insert(out.end(), r.samples.begin(), r.samples.end());
  return out;
}

// What the clocks did between the runs, in words ("the clock down 9%"); "" when nothing moved.
std::string ClockStory(const v1::ComparisonRow& row) {
  const v1::RunConditions &a = row.conditions_a(), &b = row.conditions_b();
  if (row.has_clock_change() && row.clock_change() <= -kClockDrop)
    return "the clock down " + Percent(-row.clock_change(), 0);
  auto rose = [](bool present, double from, double to, const std::string& what) {
    return present && to - from >= kThrottleRise
               ? what + " samples up from " + Percent(from, 0) + " to " + Percent(to, 0)
               : std::string();
  };
  std::string story = rose(a.has_throttled_share() && b.has_throttled_share(), a.throttled_share(),
                           b.throttled_share(), "throttled");
  if (story.empty())
    story = rose(a.has_low_clock_share() && b.has_low_clock_share(), a.low_clock_share(),
                 b.low_clock_share(), "low-clock");
  return story;
}

void JudgeTimes(double threshold, bool strict, v1::ComparisonRow* row) {
  const v1::Change& t = row->time_change();
  const bool tiny = t.has_interval() && std::abs(t.estimate()) < kSmallestChange;
  row->set_significant(t.has_interval() && !t.within_noise() && !tiny);
  if (!row->significant()) {
    row->set_verdict(t.within_noise() ? "same (within noise)"
                     : tiny           ? "same (under 0.1%)"
                                      : "no samples");
    return;
  }
  if (t.estimate() < 0) {
    row->set_verdict("faster");
    return;
  }
  const std::string story = ClockStory(*row);
  const bool cycles = row->has_cycles_change();
  // Explained: the clocks fell and, counted in SM cycles, the kernel did not get slower (its cycles
  // are the same within noise, or fewer: the time went to the clock, not to the kernel).
  const v1::Change& c = row->cycles_change();
  row->set_explained(!story.empty() && cycles && (c.within_noise() || c.estimate() <= 0));
  row->set_regression(t.estimate() > threshold && (strict || !row->explained()));
  const std::string cycles_said =
      cycles ? "cycles " + SignedPercent(row->cycles_change().estimate()) + "%"
             : "no cycles to tell";
  const std::string why = story.empty() ? "" : " (" + story + ", " + cycles_said + ")";
  if (row->regression()) {
    row->set_verdict(row->explained() ? "REGRESSION (--strict; " + story + ", " + cycles_said + ")"
                                      : "REGRESSION" + why);
  } else {
    row->set_verdict(row->explained() ? "slower with " + story + ": throttling, not the kernel"
                                      : "slower" + why);
  }
}

// The verdict (JudgeTimes), and where either run's rounds of the item sit on levels, that a
// change may be a draw between them.
void Judge(double threshold, bool strict, v1::ComparisonRow* row) {
  JudgeTimes(threshold, strict, row);
  if (row->significant() && !row->rounds_apart().empty())
    row->set_verdict(row->verdict() + "; rounds apart in " + row->rounds_apart() +
                     ": a draw between levels?");
}

v1::ComparisonRow Row(const Item& a, const Item& b, const RunIndex& ia, const RunIndex& ib) {
  v1::ComparisonRow row;
  const v1::Measurement& m = a.first();
  row.set_variant(m.variant());
  row.set_dtype(m.dtype());
  *row.mutable_shape() = m.shape();
  // Each variant alone at the cap where both runs have its solo spans in every round: a figure
  // that does not depend on what else the run held. Else its windows'.
  const bool solo = AllSolo(a) && AllSolo(b);
  row.set_figures(solo ? "solo" : "window");
  const ItemRounds ta = solo ? SoloTimes(a) : Times(a), tb = solo ? SoloTimes(b) : Times(b);
  row.set_median_a_ms(solo ? ItemMedian(ta) : a.median_ms);
  row.set_median_b_ms(solo ? ItemMedian(tb) : b.median_ms);
  const std::vector<double> sa = Pooled(ta), sb = Pooled(tb);
  row.set_samples_a(int(sa.size()));
  row.set_samples_b(int(sb.size()));
  const std::string key = "compare|" + ItemName(m);
  const double floor =
      solo ? std::max(ia.solo_floor(), ib.solo_floor()) : std::max(ia.floor(), ib.floor());
  *row.mutable_time_change() = ChangeMessage(TimeChange(ta, tb, floor, SeedFor(key)));
  const ItemRounds ca = Cycles(a), cb = Cycles(b);
  if (!ca.empty() && !cb.empty())
    *row.mutable_cycles_change() = ChangeMessage(TimeChange(
        ca, cb, std::max(ia.cycles_floor(), ib.cycles_floor()), SeedFor(key + "|cycles")));
  // Levels are a property of the windows: their times, whatever the change was taken from.
  const bool apart_a = LevelsOf(solo ? Times(a) : ta, ca).has_value(),
             apart_b = LevelsOf(solo ? Times(b) : tb, cb).has_value();
  row.set_rounds_apart(apart_a && apart_b ? "both runs"
                       : apart_a          ? "run A"
                       : apart_b          ? "run B"
                                          : "");
  *row.mutable_conditions_a() = Conditions(a);
  *row.mutable_conditions_b() = Conditions(b);
  const v1::RunConditions &xa = row.conditions_a(), &xb = row.conditions_b();
  const ItemRounds clocks_a = SoloClocks(a), clocks_b = SoloClocks(b);
  if (solo && !clocks_a.empty() && !clocks_b.empty()) {
    row.set_clock_change(ItemMedian(clocks_b) / ItemMedian(clocks_a) - 1);
  } else if (xa.has_sm_mhz() && xb.has_sm_mhz()) {
    row.set_clock_change(xb.sm_mhz() / xa.sm_mhz() - 1);
  } else if (xa.has_sm_clock_mhz_mean() && xb.has_sm_clock_mhz_mean()) {
    row.set_clock_change(xb.sm_clock_mhz_mean() / xa.sm_clock_mhz_mean() - 1);
  }
  if (const WelchResult w = WelchLogT(sa, sb); w.valid) {
    v1::WelchTest* test = row.mutable_test();
    test->set_time_change(w.time_change);
    test->mutable_ci()->set_low(w.low);
    test->mutable_ci()->set_high(w.high);
    test->set_t(w.t);
    test->set_df(w.df);
    test->set_p(w.p);
  }
  return row;
}

}  // namespace

std::vector<std::string> SetupDifferences(const v1::Run& a, const v1::Run& b) {
  const v1::DeviceIdentity &da = a.device(), &db = b.device();
  const std::string ra = "run " + std::to_string(a.id()), rb = "run " + std::to_string(b.id());
  std::vector<std::string> out;
  auto differ = [&](const std::string& what, const std::string& x, const std::string& y) {
    if (x != y)
      out.push_back("different " + what + ": " + ra + " " + (x.empty() ? "(unknown)" : x) + ", " +
                    rb + " " + (y.empty() ? "(unknown)" : y));
  };
  // A UUID names one GPU; old rows may lack it, and then the name is all there is.
  const bool uuids = !da.uuid().empty() && !db.uuid().empty();
  if ((uuids && da.uuid() != db.uuid()) || da.name() != db.name())
    differ("devices", da.name() + (uuids ? " " + da.uuid() : ""),
           db.name() + (uuids ? " " + db.uuid() : ""));
  differ("drivers", da.driver_version(), db.driver_version());
  differ("cuBLAS versions", da.cublas_version(), db.cublas_version());
  return out;
}

namespace {

std::string RegimeName(v1::Regime regime) {
  const std::string word = EnumWord(regime);
  return word.empty() ? "none" : word;
}

}  // namespace

std::string RegimeDifference(const v1::Run& a, const v1::Run& b) {
  if (a.regime() == b.regime()) return "";
  return "different regimes: run " + std::to_string(a.id()) + " " + RegimeName(a.regime()) +
         ", run " + std::to_string(b.id()) + " " + RegimeName(b.regime());
}

std::vector<std::string> Refusals(const v1::Run& a, const v1::Run& b, bool allow_device,
                                  bool allow_regime) {
  const std::string runs = "runs " + std::to_string(a.id()) + " and " + std::to_string(b.id());
  std::vector<std::string> out;
  if (const auto differences = SetupDifferences(a, b); !differences.empty() && !allow_device) {
    out = differences;
    out.push_back(runs +
                  " ran on different setups, so their times do not compare; "
                  "--allow-different-device compares them anyway");
  }
  if (const std::string regimes = RegimeDifference(a, b); !regimes.empty() && !allow_regime) {
    out.push_back(regimes);
    out.push_back(runs + " were measured in different power regimes (" + RegimeName(a.regime()) +
                  ", " + RegimeName(b.regime()) +
                  "), so their times do not compare; --allow-different-regime compares them "
                  "anyway");
  }
  return out;
}

std::string Incomplete(const v1::Run& run) {
  const std::string name = "run " + std::to_string(run.id());
  const std::string error = run.error().empty() ? "" : ": " + run.error();
  switch (run.state()) {
    case v1::RUN_STATE_PARTIAL:
      return name + " is partial: " + std::to_string(run.failed()) + " of " +
             std::to_string(run.ok() + run.failed()) + " measurements failed" + error;
    case v1::RUN_STATE_FAILED:
      return name + " failed" + (error.empty() ? "" : error);
    case v1::RUN_STATE_CANCELLED:
      return name + " was cancelled" + error;
    case v1::RUN_STATE_QUEUED:
    case v1::RUN_STATE_RUNNING:
      return name + " is still " + EnumWord(run.state());
    default:
      return "";
  }
}

namespace {

// "version 2, build 3 (source 1a2b3c4d5e6f, cubin 9f8e7d6c5b4a)": a user build by its kernel's
// version, its id and digests, as the run's answer names it ("build 3" alone where it does not).
std::string BuildName(const v1::GetRunResponse& run, int64_t id) {
  for (const v1::UserBuildIdentity& b : run.user_builds())
    if (b.id() == id)
      return (b.version() > 0 ? "version " + std::to_string(b.version()) + ", " : std::string()) +
             "build " + std::to_string(id) + " (source " + b.source_sha256().substr(0, 12) +
             ", cubin " + b.cubin_sha256().substr(0, 12) + ")";
  return "build " + std::to_string(id);
}

// Where a user variant ran different builds in the two runs: "build 3 (...) -> build 7 (...)".
std::string BuildChange(const v1::GetRunResponse& a, const v1::Measurement& ma,
                        const v1::GetRunResponse& b, const v1::Measurement& mb) {
  if (ma.user_build_id() == mb.user_build_id() || ma.user_build_id() <= 0 ||
      mb.user_build_id() <= 0)
    return "";
  return BuildName(a, ma.user_build_id()) + " -> " + BuildName(b, mb.user_build_id());
}

}  // namespace

v1::Comparison Compare(const v1::GetRunResponse& a, const v1::GetRunResponse& b, double threshold,
                       bool strict) {
  v1::Comparison c;
  c.set_schema_version(kComparisonSchemaVersion);
  c.set_run_a(a.run().id());
  c.set_run_b(b.run().id());
  c.set_threshold(threshold);
  c.set_strict(strict);
  c.set_test(
      "median(b) / median(a) - 1 over all rounds, of each variant alone at the cap (its solo "
      "spans) where both runs have them, else of its windows; 95% percentile bootstrap over each "
      "run's rounds (one round: over its samples, drift not included); within noise: the "
      "interval contains 0 or the change is below the larger run's floor; a slowdown with the "
      "clocks down and the SM cycles within noise or fewer is put down to the clocks");
  for (const std::string& w : SetupDifferences(a.run(), b.run())) c.add_warnings(w);
  if (std::string w = RegimeDifference(a.run(), b.run()); !w.empty()) c.add_warnings(w);
  // Hot against cold L2, or resident against fresh inputs: a small shape's time moves with them.
  // (A run whose rows name no L2 mode says nothing either way.)
  if (const std::string ia = InputsText(a, StoredRequest(a.run())),
      ib = InputsText(b, StoredRequest(b.run()));
      !ia.empty() && !ib.empty() && ia != ib)
    c.add_warnings("different inputs: run " + std::to_string(a.run().id()) + " " + ia + ", run " +
                   std::to_string(b.run().id()) + " " + ib +
                   "; the changes include what that difference does");
  c.set_regime_a(a.run().regime());
  c.set_regime_b(b.run().regime());
  for (const v1::Run* run : {&a.run(), &b.run()})
    if (std::string why = Incomplete(*run); !why.empty()) c.add_incomplete(why);
  *c.mutable_device_a() = a.run().device();
  *c.mutable_device_b() = b.run().device();
  c.set_state_a(a.run().state());
  c.set_state_b(b.run().state());
  const RunIndex ia(a, {}), ib(b, {});
  c.set_floor_a(ia.floor());
  c.set_floor_b(ib.floor());
  c.set_cycles_floor_a(ia.cycles_floor());
  c.set_cycles_floor_b(ib.cycles_floor());
  const auto in_a = MeasuredItems(ia), in_b = MeasuredItems(ib);
  for (const auto& [key, item_a] : in_a) {
    auto it = in_b.find(key);
    if (it == in_b.end()) {
      c.add_only_in_a(ItemName(item_a->first()));
      continue;
    }
    v1::ComparisonRow* row = c.add_rows();
    *row = Row(*item_a, *it->second, ia, ib);
    Judge(threshold, strict, row);
    // The code of a user variant may have changed between the runs: said with the row.
    row->set_build_change(BuildChange(a, item_a->first(), b, it->second->first()));
    if (!row->build_change().empty())
      c.add_warnings(ItemName(item_a->first()) + " ran other code in run " +
                     std::to_string(b.run().id()) + ": " + row->build_change() +
                     "; its change is the code's as much as anything else's");
    c.set_regressions(c.regressions() + row->regression());
    c.set_explained(c.explained() +
                    (row->explained() && row->time_change().estimate() > threshold));
  }
  for (const auto& [key, item_b] : in_b)
    if (!in_a.count(key)) c.add_only_in_b(ItemName(item_b->first()));
  return c;
}

namespace {

// A condition of both runs, a RunConditions field by name: in a table one column "A -> B", in
// CSV one column each.
struct Quantity {
  const char* field;
  const char* title;
  bool share;  // shown as a percentage; else a number without decimals
  std::optional<double> Of(const v1::RunConditions& c) const {
    const auto* f = v1::RunConditions::descriptor()->FindFieldByName(field);
    const auto* r = c.GetReflection();
    return r->HasField(c, f) ? std::optional(r->GetDouble(c, f)) : std::nullopt;
  }
  std::string Text(std::optional<double> v) const {
    return !v ? "-" : share ? Percent(*v, 0) : Fixed(*v, 0);
  }
};

constexpr Quantity kQuantities[] = {
    {"sm_mhz", "SM MHz (probes)", false},
    {"sm_clock_mhz_mean", "NVML SM MHz mean", false},
    {"sm_clock_mhz_min", "NVML SM MHz min", false},
    {"throttled_share", "throttled", true},
    {"low_clock_share", "low clock", true},
    {"power_w_mean", "power W", false},
    {"temperature_c_mean", "temp C", false},
};

Cell Exact(std::optional<double> v) { return v ? Cell(FormatExact(*v)) : Cell(""); }

Cell ChangeCells(const v1::Change& c, bool present) {
  return present ? Cell(ChangeText(c) + (c.within_noise() ? " ≈" : ""), FormatExact(c.estimate()))
                 : Cell("-", "");
}

}  // namespace

Table CompareTable(const v1::Comparison& c, bool csv) {
  Table t;
  const std::string ra = "run " + std::to_string(c.run_a()),
                    rb = "run " + std::to_string(c.run_b());
  t.columns = {{"variant", "variant"},
               {"dtype", "dtype"},
               {"shape", "shape"},
               {"figures", "figures"},
               {"median_a_ms", ra + " ms", Align::kRight},
               {"median_b_ms", rb + " ms", Align::kRight},
               {"time_change", "time change [95% CI]", Align::kRight},
               {"cycles_change", "cycles change [95% CI]", Align::kRight}};
  if (csv) {
    for (const char* k : {"ci_low", "ci_high", "within_noise", "basis", "floor", "cycles_ci_low",
                          "cycles_ci_high", "cycles_within_noise", "clock_change"})
      t.columns.push_back({k, k, Align::kRight});
  }
  std::vector<const Quantity*> shown;
  for (const Quantity& q : kQuantities) {
    const bool any = std::any_of(c.rows().begin(), c.rows().end(), [&](const auto& r) {
      return q.Of(r.conditions_a()) || q.Of(r.conditions_b());
    });
    if (!csv && !any) continue;
    shown.push_back(&q);
    if (csv) {
      t.columns.push_back({std::string(q.field) + "_a", "", Align::kRight});
      t.columns.push_back({std::string(q.field) + "_b", "", Align::kRight});
    } else {
      t.columns.push_back({q.field, std::string(q.title) + " (A -> B)", Align::kRight});
    }
  }
  // Each run's regime, a column for people only where a run has one (old runs read as before).
  const bool regimes =
      c.regime_a() != v1::REGIME_UNSPECIFIED || c.regime_b() != v1::REGIME_UNSPECIFIED;
  if (csv) {
    t.columns.push_back({"regime_a", "", Align::kLeft});
    t.columns.push_back({"regime_b", "", Align::kLeft});
  } else if (regimes) {
    t.columns.push_back({"regime", "regime (A -> B)"});
  }
  t.columns.push_back({"verdict", "verdict"});
  for (const v1::ComparisonRow& r : c.rows()) {
    const double a = r.median_a_ms(), b = r.median_b_ms();
    const v1::Change &tc = r.time_change(), &cc = r.cycles_change();
    std::vector<Cell> row = {
        r.variant(),
        r.dtype(),
        FormatShape(r.shape()),
        Cell(r.figures() == "solo" ? "alone at cap" : r.figures(), r.figures()),
        Cell(FormatSignificant(a, 4), FormatExact(a)),
        Cell(FormatSignificant(b, 4), FormatExact(b)),
        ChangeCells(tc, r.has_time_change()),
        ChangeCells(cc, r.has_cycles_change())};
    if (csv) {
      const bool ci = tc.has_interval(), cci = cc.has_interval();
      row.insert(row.end(),
                 {ci ? Cell(FormatExact(tc.interval().low())) : Cell(""),
                  ci ? Cell(FormatExact(tc.interval().high())) : Cell(""),
                  tc.within_noise() ? "true" : "false", EnumWord(tc.basis()),
                  FormatExact(tc.floor()), cci ? Cell(FormatExact(cc.interval().low())) : Cell(""),
                  cci ? Cell(FormatExact(cc.interval().high())) : Cell(""),
                  r.has_cycles_change() ? (cc.within_noise() ? "true" : "false") : "",
                  Exact(r.has_clock_change() ? std::optional(r.clock_change()) : std::nullopt)});
    }
    for (const Quantity* q : shown) {
      const std::optional<double> x = q->Of(r.conditions_a()), y = q->Of(r.conditions_b());
      if (csv) {
        row.push_back(Exact(x));
        row.push_back(Exact(y));
      } else {
        row.push_back(q->Text(x) + " -> " + q->Text(y));
      }
    }
    if (csv) {
      row.push_back(EnumWord(c.regime_a()));
      row.push_back(EnumWord(c.regime_b()));
    } else if (regimes) {
      row.push_back(RegimeName(c.regime_a()) + " -> " + RegimeName(c.regime_b()));
    }
    row.push_back(r.verdict());
    t.rows.push_back(std::move(row));
  }
  return t;
}

std::string ParseThreshold(const std::string& text, double* fraction) {
  std::string number = text;
  if (!number.empty() && number.back() == '%') number.pop_back();
  char* end = nullptr;
  const double value = number.empty() ? NAN : std::strtod(number.c_str(), &end);
  if (number.empty() || end != number.c_str() + number.size() || !std::isfinite(value) ||
      value < 0 || value >= 100) {
    return "'" + text + "': expected a percentage such as 3% (0 to 100)";
  }
  *fraction = value / 100;
  return {};
}

}  // namespace ablation::client::report
