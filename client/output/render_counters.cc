#include "client/output/render_counters.h"

#include <algorithm>
#include <map>

#include "client/output/format.h"
#include "client/output/render.h"

namespace ablation::client {
namespace {

// The short columns, in order: the concept, its title, and how its value reads.
enum class Scale { kCount, kPercent, kGigaPerSecond, kRatio };
struct ShortColumn {
  const char* metric;
  const char* title;
  Scale scale;
};
constexpr ShortColumn kShort[] = {
    {"shared_load_instructions", "LDS inst", Scale::kCount},
    {"ldmatrix_instructions", "LDSM inst", Scale::kCount},
    {"shared_load_bank_conflicts", "bank conflicts", Scale::kCount},
    {"lsu_pipe_utilisation", "LSU %", Scale::kPercent},
    {"tensor_pipe_hmma_utilisation", "HMMA %", Scale::kPercent},
    {"tensor_pipe_hgmma_utilisation", "HGMMA %", Scale::kPercent},
    {"tensor_pipe_imma_utilisation", "IMMA %", Scale::kPercent},
    {"achieved_occupancy", "occupancy %", Scale::kPercent},
    {"issue_slot_utilisation", "issue %", Scale::kPercent},
    {"l2_throughput", "L2 GB/s", Scale::kGigaPerSecond},
    {"dram_throughput", "DRAM GB/s", Scale::kGigaPerSecond},
};
constexpr const char* kStallPrefix = "stall_";

std::string Readable(double v, Scale scale) {
  switch (scale) {
    case Scale::kCount:
      if (std::abs(v) >= 1e9) return FormatSignificant(v / 1e9, 4) + "G";
      if (std::abs(v) >= 1e6) return FormatSignificant(v / 1e6, 4) + "M";
      if (std::abs(v) >= 1e4) return FormatSignificant(v / 1e3, 4) + "k";
      return FormatSignificant(v, 4);
    case Scale::kPercent:
      return FormatFixed(v, 1);
    case Scale::kGigaPerSecond:
      return FormatSignificant(v / 1e9, 4);
    case Scale::kRatio:
      return FormatFixed(v, 2);
  }
  return FormatExact(v);
}

// How a value of this unit reads to people, when the concept has no short column.
Scale ScaleOfUnit(const std::string& unit) {
  if (unit == "%") return Scale::kPercent;
  if (unit == "byte/s") return Scale::kGigaPerSecond;
  if (unit == "cycles/inst") return Scale::kRatio;
  return Scale::kCount;
}

using Counters = std::vector<v1::Counter>;

const v1::Counter* Find(const Counters& counters, const std::string& metric) {
  for (const auto& c : counters)
    if (c.metric() == metric) return &c;
  return nullptr;
}

Cell ValueCell(const v1::Counter* c, Scale scale) {
  if (!c || !c->has_value()) return Cell("-", "");
  return Cell(Readable(c->value(), scale), FormatExact(c->value()));
}

// Appends the counter columns of `rows` (one Counters and one note per table row) to `table`.
void AppendCounterColumns(Table& table, const std::vector<Counters>& rows,
                          const std::vector<std::string>& notes, bool all) {
  auto any = [&](const std::string& metric) {
    return std::any_of(rows.begin(), rows.end(), [&](const Counters& cs) {
      const v1::Counter* c = Find(cs, metric);
      return c && c->has_value();
    });
  };
  std::vector<std::pair<std::string, Scale>> shown;
  if (all) {
    // Every metric any row has, in the order the rows list them (the counter table's).
    for (const auto& cs : rows)
      for (const auto& c : cs)
        if (std::none_of(shown.begin(), shown.end(),
                         [&](const auto& s) { return s.first == c.metric(); }))
          shown.emplace_back(c.metric(), ScaleOfUnit(c.unit()));
    for (const auto& [metric, scale] : shown)
      table.columns.push_back({metric, metric, Align::kRight});
  } else {
    for (const auto& s : kShort) {
      if (!any(s.metric)) continue;
      shown.emplace_back(s.metric, s.scale);
      table.columns.push_back({s.metric, s.title, Align::kRight});
    }
  }
  const bool stalls = !all && std::any_of(rows.begin(), rows.end(), [](const Counters& cs) {
    return !TopStalls(cs, 1).empty();
  });
  if (stalls) table.columns.push_back({"top_stalls", "top stalls (cycles/inst)"});
  const bool any_note =
      std::any_of(notes.begin(), notes.end(), [](const std::string& n) { return !n.empty(); });
  if (any_note) table.columns.push_back({"counters_note", "counters"});
  for (size_t r = 0; r < rows.size() && r < table.rows.size(); ++r) {
    for (const auto& [metric, scale] : shown)
      table.rows[r].push_back(ValueCell(Find(rows[r], metric), scale));
    if (stalls) table.rows[r].emplace_back(TopStalls(rows[r], 3));
    if (any_note) table.rows[r].emplace_back(notes[r]);
  }
}

Table WithCounters(const std::vector<v1::Measurement>& measurements, bool all) {
  // `all` is CSV's form: every column, whatever the rows hold.
  Table table = MeasurementsTable(measurements, all);
  const bool any = std::any_of(measurements.begin(), measurements.end(), [](const auto& m) {
    return !m.counters().empty() || !m.counters_note().empty();
  });
  if (!any) return table;
  std::vector<Counters> rows;
  std::vector<std::string> notes;
  for (const auto& m : measurements) {
    rows.emplace_back(m.counters().begin(), m.counters().end());
    notes.push_back(m.counters_note());
  }
  AppendCounterColumns(table, rows, notes, all);
  return table;
}

}  // namespace

std::string TopStalls(const Counters& counters, int how_many) {
  std::vector<std::pair<double, std::string>> stalls;
  for (const auto& c : counters) {
    const std::string& m = c.metric();
    if (m.rfind(kStallPrefix, 0) != 0 || !c.has_value() || c.value() <= 0) continue;
    const std::string reason = m.substr(std::string(kStallPrefix).size());
    if (reason == "selected") continue;  // the issuing warp: not a stall
    stalls.emplace_back(c.value(), reason);
  }
  std::stable_sort(stalls.begin(), stalls.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  std::string out;
  for (int i = 0; i < how_many && size_t(i) < stalls.size(); ++i)
    out += (out.empty() ? "" : ", ") + stalls[size_t(i)].second + " " +
           FormatFixed(stalls[size_t(i)].first, 2);
  return out;
}

std::string CounterTitle(const std::string& metric) {
  for (const auto& s : kShort)
    if (metric == s.metric) return s.title;
  return metric;
}

std::string CounterValue(const v1::Counter& c) {
  Scale scale = ScaleOfUnit(c.unit());
  for (const auto& s : kShort)
    if (c.metric() == s.metric) scale = s.scale;
  return c.has_value() ? Readable(c.value(), scale) : "-";
}

bool IsStallCounter(const std::string& metric) { return metric.rfind(kStallPrefix, 0) == 0; }

Table MeasurementsWithCounters(const std::vector<v1::Measurement>& measurements) {
  return WithCounters(measurements, false);
}

Table MeasurementsWithAllCounters(const std::vector<v1::Measurement>& measurements) {
  return WithCounters(measurements, true);
}

Table ProfileSummaryTable(const v1::ProfileResponse& response, bool all_counters) {
  Table table;
  table.columns = {{"variant", "variant"}, {"dtype", "dtype"}, {"shape", "shape"}};
  std::vector<Counters> rows;
  std::vector<std::string> notes;
  for (const auto& k : response.kernels()) {
    table.rows.push_back({k.variant(), k.dtype(), FormatShape(k.shape())});
    rows.emplace_back(k.counters().begin(), k.counters().end());
    notes.push_back(k.error());
  }
  AppendCounterColumns(table, rows, notes, all_counters);
  for (auto& c : table.columns)
    if (c.key == "counters_note") c = {"error", "error"};
  return table;
}

Table ProfileCountersTable(const v1::ProfileResponse& response) {
  Table table;
  table.columns = {{"variant", "variant"},
                   {"dtype", "dtype"},
                   {"shape", "shape"},
                   {"metric", "metric"},
                   {"value", "value", Align::kRight},
                   {"unit", "unit"},
                   {"ncu_name", "ncu metric"},
                   {"note", "note"}};
  for (const auto& k : response.kernels()) {
    if (!k.error().empty()) {
      table.rows.push_back({k.variant(), k.dtype(), FormatShape(k.shape()), "", Cell("-", ""), "",
                            "", "error: " + k.error()});
      continue;
    }
    for (const auto& c : k.counters()) {
      Scale scale = ScaleOfUnit(c.unit());
      for (const auto& s : kShort)
        if (c.metric() == s.metric) scale = s.scale;
      // The unit as the value reads (GB/s); CSV's exact value stays in the stored unit.
      const std::string unit = scale == Scale::kGigaPerSecond && c.has_value() ? "GB/s" : c.unit();
      table.rows.push_back({k.variant(), k.dtype(), FormatShape(k.shape()), c.metric(),
                            ValueCell(&c, scale), unit, c.ncu_name(), c.note()});
    }
  }
  return table;
}

std::string RenderProfile(const v1::ProfileResponse& response) {
  std::string out;
  out += "profiled with " + (response.tool().empty() ? std::string("ncu") : response.tool()) +
         (response.tool_version().empty() ? "" : " " + response.tool_version()) + " on " +
         (response.device().name().empty() ? std::string("GPU") : response.device().name()) +
         (response.arch().empty() ? "" : " (" + response.arch() + ")") +
         ": one launch per kernel after warm-up, clocks left alone\n";
  for (const auto& k : response.kernels()) {
    out += "\n" + k.variant() + " " + k.dtype() + " " + FormatShape(k.shape()) + "\n";
    if (!k.error().empty()) {
      out += "  error: " + k.error() + "\n";
      continue;
    }
    if (k.library()) out += "the library's first kernel of the call: " + k.symbol() + "\n";
    v1::ProfileResponse one;
    *one.add_kernels() = k;
    Table t = ProfileCountersTable(one);
    t.columns.erase(t.columns.begin(), t.columns.begin() + 3);  // the heading says which kernel
    for (auto& row : t.rows) row.erase(row.begin(), row.begin() + 3);
    out += RenderText(t);
    const std::string stalls = TopStalls({k.counters().begin(), k.counters().end()}, 3);
    if (!stalls.empty()) out += "top stalls (cycles per issued instruction): " + stalls + "\n";
  }
  if (response.kernels_size() > 1) out += "\n" + RenderText(ProfileSummaryTable(response, false));
  return out;
}

}  // namespace ablation::client
