// The grids of a section beside its main table: how each row ran (conditions, occupancy,
// counters, micro-benchmark), and each rung's geometric mean share of the cuBLAS baselines.
#include <algorithm>
#include <cmath>
#include <functional>

#include "client/output/format.h"
#include "client/output/render_counters.h"
#include "client/report/text.h"

namespace ablation::client::report {
namespace {

using Rows = std::vector<const v1::ReportRow*>;

// One column: its title, whether it is a number, and its cell of a row ("" where the row has
// none; a column in which every row has "" is left out).
struct Column {
  std::string title;
  bool numeric = true;
  std::function<std::string(const v1::ReportRow&)> cell;
};

const v1::Counter* CounterOf(const v1::ReportRow& row, const std::string& metric) {
  for (const v1::Counter& c : row.counters())
    if (c.metric() == metric) return &c;
  return nullptr;
}

std::string Mhz(double v) { return Fixed(v, 0); }

std::vector<Column> ConditionColumns() {
  return {
      // What a per-bucket rung ran at the row's shape (its table's pick or its default).
      {"ran", false, [](const v1::ReportRow& r) { return r.dispatched_to(); }},
      {"SM MHz mean / min", true,
       [](const v1::ReportRow& r) -> std::string {
         const v1::RunConditions& c = r.conditions();
         if (!c.has_sm_clock_mhz_mean()) return "";
         return Mhz(c.sm_clock_mhz_mean()) + " / " +
                (c.has_sm_clock_mhz_min() ? Mhz(c.sm_clock_mhz_min()) : "-");
       }},
      {"effective MHz", true,
       [](const v1::ReportRow& r) {
         return r.conditions().has_sm_mhz() ? Mhz(r.conditions().sm_mhz()) : "";
       }},
      {"power W", true,
       [](const v1::ReportRow& r) {
         return r.conditions().has_power_w_mean() ? Fixed(r.conditions().power_w_mean(), 0) : "";
       }},
      {"temp °C", true,
       [](const v1::ReportRow& r) {
         return r.conditions().has_temperature_c_mean()
                    ? Fixed(r.conditions().temperature_c_mean(), 0)
                    : "";
       }},
      {"throttled", false,
       [](const v1::ReportRow& r) -> std::string {
         const v1::RunConditions& c = r.conditions();
         if (!c.has_throttled_share()) return "";
         std::string reasons;
         for (const auto& x : c.throttle_reasons()) reasons += (reasons.empty() ? "" : ", ") + x;
         return Percent(c.throttled_share(), 0) + (reasons.empty() ? "" : " (" + reasons + ")");
       }},
      // A kernel of its own contract on its roofline: its GB/s by its work model, its shares of
      // the device's measured bandwidth and of the compute roof its work model names.
      {"GB/s", true,
       [](const v1::ReportRow& r) {
         return r.roofline().has_roofline_bytes_per_second()
                    ? Fixed(r.roofline().roofline_bytes_per_second() / 1e9, 1)
                    : "";
       }},
      {"% of measured bandwidth", true,
       [](const v1::ReportRow& r) {
         return r.roofline().has_roofline_memory_share()
                    ? Percent(r.roofline().roofline_memory_share(), 1)
                    : "";
       }},
      {"% of compute roof", false,
       [](const v1::ReportRow& r) -> std::string {
         const v1::Roofline& x = r.roofline();
         if (!x.has_roofline_compute_share()) return "";
         return Percent(x.roofline_compute_share(), 1) + " (" + x.roofline_compute_roof() + ")";
       }},
      {"bound", false, [](const v1::ReportRow& r) { return r.roofline().roofline_bound(); }},
      {"theoretical occupancy", false,
       [](const v1::ReportRow& r) -> std::string {
         if (!r.has_theoretical_occupancy()) return "";
         return Percent(r.theoretical_occupancy(), 0) +
                (r.occupancy_limiter().empty() ? "" : " (" + r.occupancy_limiter() + ")");
       }},
  };
}

// The section's counters in its order, the stall reasons together as one column where the first
// of them stands.
std::vector<Column> CounterColumns(const v1::ReportSection& s) {
  std::vector<Column> out;
  bool stalls = false;
  for (const std::string& metric : s.counters()) {
    if (IsStallCounter(metric)) {
      if (stalls) continue;
      stalls = true;
      out.push_back({"top stalls (cycles/inst)", false, [](const v1::ReportRow& r) {
                       return TopStalls({r.counters().begin(), r.counters().end()}, 3);
                     }});
      continue;
    }
    // A counter that reads 0 in every row (IMMA on bf16 kernels) says nothing: left out.
    const bool any = std::any_of(s.rows().begin(), s.rows().end(), [&](const v1::ReportRow& r) {
      const v1::Counter* c = CounterOf(r, metric);
      return c && c->has_value() && c->value() != 0;
    });
    if (!any) continue;
    // The counter table's occupancy is the achieved one, beside the theoretical column.
    const std::string title =
        metric == "achieved_occupancy" ? "achieved occupancy %" : CounterTitle(metric);
    out.push_back({title, true, [metric](const v1::ReportRow& r) -> std::string {
                     const v1::Counter* c = CounterOf(r, metric);
                     return c && c->has_value() ? CounterValue(*c) : "";
                   }});
  }
  std::string vs;
  for (const v1::ReportRow& r : s.rows())
    if (vs.empty()) vs = r.shared_load_ratio_vs();
  out.push_back({"LDS+LDSM inst vs " + vs, true, [](const v1::ReportRow& r) {
                   return r.has_shared_load_ratio() ? Fixed(r.shared_load_ratio(), 2) + "x" : "";
                 }});
  out.push_back({"smem->reg micro-benchmark", false,
                 [](const v1::ReportRow& r) { return r.micro().variant(); }});
  out.push_back({"micro TB/s", true, [](const v1::ReportRow& r) {
                   return r.micro().has_bytes_per_second()
                              ? Fixed(r.micro().bytes_per_second() / 1e12, 2)
                              : "";
                 }});
  out.push_back({"micro G loads/s", true, [](const v1::ReportRow& r) {
                   return r.micro().has_fragment_loads_per_second()
                              ? Fixed(r.micro().fragment_loads_per_second() / 1e9, 1)
                              : "";
                 }});
  if (!s.counters().empty())
    out.push_back({"counters", false, [](const v1::ReportRow& r) { return r.counters_note(); }});
  return out;
}

// The measured rows, as the section draws them (a per-shape section: its drawn cells).
Rows DrawnRows(const v1::ReportSection& s) {
  Rows rows;
  if (s.layout() != v1::SECTION_LAYOUT_SHAPES) {
    for (const v1::ReportRow& r : s.rows())
      if (Measured(r)) rows.push_back(&r);
    return rows;
  }
  const ShapeView view = MeasuredCells(s);
  for (int r : view.rungs)
    for (int c : view.columns)
      if (const v1::ReportRow& row = s.rows(r * s.shapes_size() + c); Measured(row))
        rows.push_back(&row);
  return rows;
}

}  // namespace

Grid ConditionsGrid(const v1::ReportSection& s) {
  const Rows rows = DrawnRows(s);
  std::vector<Column> columns = ConditionColumns();
  for (Column& c : CounterColumns(s)) columns.push_back(std::move(c));
  columns.erase(std::remove_if(columns.begin(), columns.end(),
                               [&](const Column& c) {
                                 return std::all_of(rows.begin(), rows.end(), [&](const auto* r) {
                                   return c.cell(*r).empty();
                                 });
                               }),
                columns.end());
  Grid grid;
  if (columns.empty() || rows.empty()) return grid;
  const bool all = s.layout() == v1::SECTION_LAYOUT_ALL;
  const bool shapes = s.layout() != v1::SECTION_LAYOUT_LADDER;
  grid.titles = {all ? "#" : "rung", "variant"};
  grid.numeric = {all, false};
  if (shapes) grid.titles.push_back("shape"), grid.numeric.push_back(false);
  for (const Column& c : columns) grid.titles.push_back(c.title), grid.numeric.push_back(c.numeric);
  for (const v1::ReportRow* r : rows) {
    std::vector<std::string> cells = {r->rung(), r->variant()};
    if (shapes) cells.push_back(FormatShape(r->shape()));
    for (const Column& c : columns) {
      const std::string text = c.cell(*r);
      cells.push_back(text.empty() ? "-" : text);
    }
    grid.rows.push_back(std::move(cells));
  }
  return grid;
}

std::string CountersLegend(const v1::ReportSection& s) {
  std::string legend;
  bool stalls = false;
  for (const std::string& metric : s.counters()) {
    std::string ncu;
    for (const v1::ReportRow& r : s.rows())
      if (const v1::Counter* c = CounterOf(r, metric);
          c && c->has_value() && c->value() != 0 && ncu.empty())
        ncu = c->ncu_name();
    if (ncu.empty()) continue;
    if (IsStallCounter(metric)) {
      if (stalls) continue;
      stalls = true;
      legend += std::string(legend.empty() ? "" : "; ") + "top stalls: " + ncu +
                " and the other reasons' like it, warps stalled per issued instruction";
      continue;
    }
    legend += (legend.empty() ? "" : "; ") +
              (metric == "achieved_occupancy" ? "achieved occupancy %" : CounterTitle(metric)) +
              ": " + ncu;
  }
  return legend;
}

Grid ShareSummaryGrid(const v1::ReportSection& s) {
  Grid grid;
  const int columns = s.shapes_size();
  if (s.layout() != v1::SECTION_LAYOUT_SHAPES || columns < 2) return grid;
  const ShapeView view = MeasuredCells(s);
  auto at = [&](int r, int c) -> const v1::ReportRow& { return s.rows(r * columns + c); };
  struct Group {
    std::string name;
    std::function<bool(const v1::Shape&)> takes;
  };
  const std::vector<Group> groups = {{"every shape", [](const v1::Shape&) { return true; }},
                                     {"M <= 128", [](const v1::Shape& x) { return x.m() <= 128; }},
                                     {"N <= 128", [](const v1::Shape& x) { return x.n() <= 128; }}};
  // A group is shown where it holds shapes and differs from every shape.
  std::vector<const Group*> shown;
  for (const Group& g : groups) {
    int n = 0;
    for (int c : view.columns) n += g.takes(s.shapes(c));
    if (n > 0 && (g.name == "every shape" || n < int(view.columns.size()))) shown.push_back(&g);
  }
  // The shares the rows carry (SetShares: of the heuristic's cuBLAS and of the best candidate, on
  // one basis, solo or the window's), 0 where a row has none; the best's only where a row has it.
  using Share = double (*)(const v1::ReportRow&);
  std::vector<std::pair<std::string, Share>> shares = {
      {"of cuBLAS",
       [](const v1::ReportRow& x) { return x.has_cublas_share() ? x.cublas_share() : 0.0; }}};
  if (std::any_of(s.rows().begin(), s.rows().end(),
                  [](const v1::ReportRow& x) { return x.has_cublas_best_share(); }))
    shares.push_back({"of the best", [](const v1::ReportRow& x) {
                        return x.has_cublas_best_share() ? x.cublas_best_share() : 0.0;
                      }});
  grid.titles = {"rung", "variant"};
  grid.numeric = {false, false};
  for (const Group* g : shown)
    for (const auto& share : shares) {
      grid.titles.push_back(g->name + ": " + share.first);
      grid.numeric.push_back(true);
    }
  // The geometric mean of a share over a group's measured rows of rung r, and their count.
  auto mean = [&](int r, const Group& g, Share share) {
    double logs = 0;
    int n = 0;
    for (int c : view.columns) {
      const v1::ReportRow& row = at(r, c);
      if (!g.takes(s.shapes(c)) || !Measured(row) || share(row) <= 0) continue;
      logs += std::log(share(row));
      ++n;
    }
    return std::pair(
        n == 0 ? std::string("-") : Percent(std::exp(logs / n), 1) + " (" + std::to_string(n) + ")",
        n);
  };
  for (int r : view.rungs) {
    const v1::ReportRow& first = at(r, 0);
    if (first.baseline()) continue;
    std::vector<std::string> cells = {first.rung(), first.variant()};
    bool any = false;
    for (const Group* g : shown)
      for (const auto& share : shares) {
        auto [cell, n] = mean(r, *g, share.second);
        cells.push_back(cell);
        any = any || n > 0;
      }
    if (any) grid.rows.push_back(std::move(cells));
  }
  if (grid.rows.empty()) grid = Grid{};
  return grid;
}

}  // namespace ablation::client::report
