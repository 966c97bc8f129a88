#include "client/report/charts.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "client/output/escape.h"
#include "client/output/format.h"
#include "client/report/svg.h"

namespace ablation::client::report {
namespace {

using svg::Num;

constexpr int kLegendWidth = 180;  // a heatmap's colour bar

std::string Ellipsis(std::string text, std::size_t most) {
  if (text.size() > most) text = text.substr(0, most - 1) + "…";
  return text;
}

std::string TflopsTick(double v) { return Num(v); }

// "+0.5%", "-12%", "+0.05%": as many decimals as the value needs, at most two.
std::string PercentTick(double v) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.2f", v * 100);
  std::string text = buffer;
  while (text.back() == '0') text.pop_back();
  if (text.back() == '.') text.pop_back();
  if (text == "-0") text = "0";
  return (v > 0 ? "+" : "") + text + "%";
}

// A horizontal interval [lo, hi] at height y with caps.
std::string Whisker(const svg::Scale& x, double lo, double hi, double y, const std::string& title) {
  return "<g class=\"whisker\"><title>" + HtmlEscape(title) + "</title>\n" +
         svg::Line(x(lo), y, x(hi), y, "whisker") +
         svg::Line(x(lo), y - 4, x(lo), y + 4, "whisker") +
         svg::Line(x(hi), y - 4, x(hi), y + 4, "whisker") + "</g>\n";
}

std::vector<const v1::ReportRow*> MeasuredRows(const v1::ReportSection& s) {
  std::vector<const v1::ReportRow*> rows;
  for (const v1::ReportRow& r : s.rows())
    if (Measured(r)) rows.push_back(&r);
  return rows;
}

// The column headings of a heatmap: M=N and K per shape, in <g class="axis x">.
std::string ShapeHeader(const v1::ReportSection& s, const ShapeView& view, int left, int cell_w,
                        int top) {
  std::string out = "<g class=\"axis x\">\n";
  for (std::size_t i = 0; i < view.columns.size(); ++i) {
    const v1::Shape& shape = s.shapes(view.columns[i]);
    const double x = left + cell_w * double(i) + cell_w / 2.0;
    const std::string mn =
        std::to_string(shape.m()) + (shape.m() != shape.n() ? "x" + std::to_string(shape.n()) : "");
    out += svg::Text(x, top + 16, "M=N=" + mn, "middle", "tick-label");
    out += svg::Text(x, top + 32, "K=" + std::to_string(shape.k()), "middle", "tick-label");
  }
  out += svg::Text(left + cell_w * double(view.columns.size()) / 2, top, "shape (M = N, K)",
                   "middle", "axis-label");
  return out + "</g>\n";
}

// Wide enough for the cells, the legend beside its title (kLegendWidth and `title_w`) and the
// figure's title.
int HeatmapWidth(int left, int cell_w, std::size_t columns, int title_w) {
  const int cells = left + cell_w * int(columns) + 20;
  return std::max({cells, left + kLegendWidth + 12 + title_w + 20, 470});
}

// A colour bar under a heatmap: the gradient, its end (and middle) values, its title.
std::string Legend(const std::string& id, std::string (*colour)(double), double t0, double t1,
                   double x, double y, const std::vector<std::string>& labels,
                   const std::string& title) {
  constexpr double kWidth = kLegendWidth, kHeight = 12;
  std::string out = "<g class=\"legend\">\n" + svg::Gradient(id, colour, t0, t1);
  out += svg::Rect(x, y, kWidth, kHeight, "legend-bar", " fill=\"url(#" + id + ")\"");
  for (std::size_t i = 0; i < labels.size(); ++i) {
    const double at = x + kWidth * double(i) / double(std::max<std::size_t>(1, labels.size() - 1));
    out += svg::Text(at, y + kHeight + 14, labels[i], "middle", "tick-label");
  }
  out += svg::Text(x + kWidth + 12, y + kHeight - 1, title, "start", "axis-label");
  return out + "</g>\n";
}

}  // namespace

double PeakTflops(const std::vector<const v1::ReportRow*>& rows) {
  std::vector<double> peaks;
  for (const v1::ReportRow* r : rows)
    if (r->has_peak_tflops() && r->peak_tflops() > 0) peaks.push_back(r->peak_tflops());
  if (peaks.empty()) return 0;
  std::nth_element(peaks.begin(), peaks.begin() + std::ptrdiff_t(peaks.size() / 2), peaks.end());
  return peaks[peaks.size() / 2];
}

std::string BarChart(const v1::ReportSection& s) {
  const std::vector<const v1::ReportRow*> rows = MeasuredRows(s);
  if (rows.empty()) return "";
  const int left = 300, plot = 470, right = 70, top = 44, row_h = 26, axis_h = 56, legend_h = 30;
  const int n = int(rows.size());
  const int width = left + plot + right, height = top + n * row_h + axis_h + legend_h;
  // The ceiling: the dtype's dense peak at the clock the rows ran at (their median).
  const double peak = PeakTflops(rows);
  double lo = 0, hi = peak;
  bool reference = false;
  for (const v1::ReportRow* r : rows) {
    hi = std::max({hi, r->tflops(), r->has_tflops_interval() ? r->tflops_interval().high() : 0.0});
    reference = reference || r->baseline();
  }
  const std::vector<double> ticks = svg::Ticks(&lo, &hi, 5);
  const svg::Scale x{lo, hi, double(left), double(left + plot)};
  const double bottom = top + n * row_h;
  std::string out = svg::Open("chart", "chart-" + s.id(), width, height, s.title() + ", TFLOPS");
  out += svg::Text(left, 18, "TFLOPS (median over the rounds); whiskers: 95% interval", "start",
                   "chart-title");
  out += svg::XAxis(x, ticks, bottom, top, "TFLOPS", TflopsTick);
  out += svg::YAxis(left, top, bottom, top - 8, "rung");
  for (int i = 0; i < n; ++i) {
    const v1::ReportRow& r = *rows[std::size_t(i)];
    const double y = top + row_h * i, mid = y + row_h / 2.0;
    out += svg::Text(left - 8, mid + 4, Ellipsis(r.rung() + "  " + r.variant(), 40), "end",
                     "row-label");
    out +=
        svg::Rect(left, y + 4, x(r.tflops()) - left, row_h - 8, r.baseline() ? "bar cublas" : "bar",
                  "", r.variant() + ": " + Fixed(r.tflops(), 1) + " TFLOPS");
    double end = x(r.tflops());
    if (r.has_tflops_interval()) {
      const v1::Interval& ci = r.tflops_interval();
      out +=
          Whisker(x, ci.low(), ci.high(), mid,
                  "95% interval " + Fixed(ci.low(), 1) + " to " + Fixed(ci.high(), 1) + " TFLOPS");
      end = std::max(end, x(ci.high()));
    }
    out += svg::Text(end + 6, mid + 4, Fixed(r.tflops(), 1), "start", "value");
  }
  if (peak > 0) {
    out += "<g class=\"peak\"><title>dense peak at the rows' measured clock: " + Fixed(peak, 1) +
           " TFLOPS</title>\n" + svg::Line(x(peak), top - 4, x(peak), bottom, "peak") + "</g>\n";
    out += svg::Text(x(peak) - 4, top - 8, "peak " + Fixed(peak, 0), "end", "peak-label");
  }
  // The legend: what the colours and the dashed line are.
  const double ly = bottom + axis_h + 6;
  double lx = left;
  auto swatch = [&](const std::string& cls, const std::string& text) {
    out +=
        svg::Rect(lx, ly, 18, 12, cls) + svg::Text(lx + 24, ly + 11, text, "start", "legend-text");
    lx += 24 + double(text.size()) * 7.5 + 24;
  };
  out += "<g class=\"legend\">\n";
  swatch("swatch bar", "rung");
  if (reference) swatch("swatch bar cublas", "cuBLAS (reference)");
  if (peak > 0) {
    out += svg::Line(lx, ly + 6, lx + 18, ly + 6, "peak") +
           svg::Text(lx + 24, ly + 11, "dense peak at the measured clock", "start", "legend-text");
  }
  out += "</g>\n";
  return out + "</svg>\n";
}

std::string ChangeChart(const v1::ReportSection& s, double floor) {
  std::vector<const v1::ReportRow*> rows;
  for (const v1::ReportRow* r : MeasuredRows(s))
    if (r->has_change()) rows.push_back(r);
  if (rows.empty()) return "";
  const int left = 300, plot = 420, right = 200, top = 44, row_h = 26, axis_h = 56;
  const int n = int(rows.size());
  double lo = -floor, hi = floor;
  for (const v1::ReportRow* r : rows) {
    const v1::Change& c = r->change();
    lo = std::min({lo, 0.0, c.estimate(), c.has_interval() ? c.interval().low() : 0.0});
    hi = std::max({hi, 0.0, c.estimate(), c.has_interval() ? c.interval().high() : 0.0});
  }
  const double pad = std::max(0.005, (hi - lo) * 0.05);
  lo -= pad, hi += pad;
  const std::vector<double> ticks = svg::Ticks(&lo, &hi, 5);
  const svg::Scale x{lo, hi, double(left), double(left + plot)};
  const double bottom = top + n * row_h;
  std::string out = svg::Open("chart forest", "change-" + s.id(), left + plot + right,
                              top + n * row_h + axis_h, s.title() + ", speed changes");
  out += svg::Text(8, 18,
                   "Speed change against the rung compared with; 95% interval; hollow: within "
                   "noise" +
                       std::string(floor > 0 ? "; band: the run's noise floor" : ""),
                   "start", "chart-title");
  if (floor > 0)
    out += svg::Rect(x(-floor), top, x(floor) - x(-floor), n * row_h, "floor", "",
                     "noise floor ±" + Percent(floor, 2));
  out += svg::XAxis(x, ticks, bottom, top, "speed change: median(compared) / median(this) - 1",
                    PercentTick);
  out += svg::YAxis(left, top, bottom, top - 8, "comparison");
  out += svg::Line(x(0), top, x(0), bottom, "zero");
  for (int i = 0; i < n; ++i) {
    const v1::ReportRow& r = *rows[std::size_t(i)];
    const v1::Change& c = r.change();
    const double mid = top + row_h * i + row_h / 2.0;
    out += svg::Text(left - 8, mid + 4, Ellipsis(ComparisonLabel(r), 40), "end", "row-label");
    if (c.has_interval())
      out += Whisker(x, c.interval().low(), c.interval().high(), mid,
                     ComparisonLabel(r) + ": 95% interval");
    out += svg::Circle(x(c.estimate()), mid, 4.5, c.within_noise() ? "estimate noise" : "estimate",
                       ComparisonLabel(r) + ": " + ChangeText(c));
    out += svg::Text(left + plot + 10, mid + 4, ChangeText(c) + (c.within_noise() ? " ≈" : ""),
                     "start", "value");
  }
  return out + "</svg>\n";
}

std::string TflopsHeatmap(const v1::ReportSection& s, const ShapeView& view) {
  const int columns = s.shapes_size();
  const int left = 250, cell_w = 92, cell_h = 28, top = 40, header_h = 40, legend_h = 56;
  const int width = HeatmapWidth(left, cell_w, view.columns.size(), 50);
  const int grid_top = top + header_h;
  const int height = grid_top + cell_h * int(view.rungs.size()) + legend_h;
  double max = 0;
  for (int r : view.rungs)
    for (int c : view.columns)
      if (const v1::ReportRow& row = s.rows(r * columns + c); Measured(row))
        max = std::max(max, row.tflops());
  if (max <= 0) max = 1;
  std::string out = svg::Open("heatmap", "heatmap-" + s.id(), width, height,
                              s.title() + ": TFLOPS by rung and shape");
  out += svg::Text(8, 16, "TFLOPS by rung and shape", "start", "chart-title");
  out += ShapeHeader(s, view, left, cell_w, top);
  out += svg::YAxis(left, 0, 0, grid_top - 8, "rung");
  for (std::size_t i = 0; i < view.rungs.size(); ++i) {
    const v1::ReportRow& first = s.rows(view.rungs[i] * columns);
    out += svg::Text(left - 8, grid_top + cell_h * double(i) + 18,
                     Ellipsis(first.rung() + "  " + first.variant(), 36), "end", "row-label");
  }
  for (std::size_t i = 0; i < view.rungs.size(); ++i) {
    for (std::size_t j = 0; j < view.columns.size(); ++j) {
      const v1::ReportRow& row = s.rows(view.rungs[i] * columns + view.columns[j]);
      const double x = left + cell_w * double(j), y = grid_top + cell_h * double(i);
      if (!Measured(row)) {
        out += svg::Rect(x + 1, y + 1, cell_w - 2, cell_h - 2, "cell-missing", "",
                         row.variant() + " " + FormatShape(row.shape()) + ": " + StatusWord(row));
        out += svg::Text(x + cell_w / 2.0, y + 18, StatusWord(row), "middle", "missing");
        continue;
      }
      const std::string colour = svg::Sequential(row.tflops() / max);
      out += svg::Rect(x + 1, y + 1, cell_w - 2, cell_h - 2, "cell", " fill=\"" + colour + "\"",
                       row.variant() + " " + FormatShape(row.shape()) + ": " +
                           Fixed(row.tflops(), 1) + " TFLOPS");
      out += svg::Text(x + cell_w / 2.0, y + 18, Fixed(row.tflops(), 1), "middle",
                       svg::Dark(colour) ? "value on-dark" : "value");
    }
  }
  out += Legend("ramp-tflops-" + s.id(), svg::Sequential, 0, 1, left, height - 40,
                {"0", Fixed(max / 2, 0), Fixed(max, 0)}, "TFLOPS");
  return out + "</svg>\n";
}

std::string ChangeHeatmap(const v1::ReportSection& s, const ShapeView& view) {
  const int columns = s.shapes_size();
  std::vector<int> rungs;
  double extent = 0;
  for (int r : view.rungs) {
    bool any = false;
    for (int c : view.columns) {
      const v1::ReportRow& row = s.rows(r * columns + c);
      if (!row.has_change()) continue;
      any = true;
      extent = std::max(extent, std::fabs(row.change().estimate()));
    }
    if (any) rungs.push_back(r);
  }
  if (rungs.empty()) return "";
  double lo = 0, hi = std::max(extent, 0.01);
  svg::Ticks(&lo, &hi, 4);  // a round bound for the scale
  extent = hi;
  const int left = 200, cell_w = 92, cell_h = 28, top = 40, header_h = 40, legend_h = 56;
  const int width = HeatmapWidth(left, cell_w, view.columns.size(), 170);
  const int grid_top = top + header_h;
  const int height = grid_top + cell_h * int(rungs.size()) + legend_h;
  std::string out = svg::Open("heatmap change", "heatmap-change-" + s.id(), width, height,
                              s.title() + ": change against the rung compared with, by shape");
  out += svg::Text(8, 16, "Speed change against the rung compared with (≈: within noise)", "start",
                   "chart-title");
  out += ShapeHeader(s, view, left, cell_w, top);
  out += svg::YAxis(left, 0, 0, grid_top - 8, "comparison");
  for (std::size_t i = 0; i < rungs.size(); ++i) {
    std::string label = s.rows(rungs[i] * columns).rung();
    for (int c : view.columns)
      if (const v1::ReportRow& row = s.rows(rungs[i] * columns + c); row.has_change()) {
        label = ComparisonLabel(row);
        break;
      }
    out += svg::Text(left - 8, grid_top + cell_h * double(i) + 18, label, "end", "row-label");
  }
  for (std::size_t i = 0; i < rungs.size(); ++i) {
    for (std::size_t j = 0; j < view.columns.size(); ++j) {
      const v1::ReportRow& row = s.rows(rungs[i] * columns + view.columns[j]);
      const double x = left + cell_w * double(j), y = grid_top + cell_h * double(i);
      if (!row.has_change()) {
        out += svg::Rect(x + 1, y + 1, cell_w - 2, cell_h - 2, "cell-missing", "",
                         row.variant() + " " + FormatShape(row.shape()) + ": no comparison");
        out += svg::Text(x + cell_w / 2.0, y + 18, "-", "middle", "missing");
        continue;
      }
      const v1::Change& c = row.change();
      const std::string colour = svg::Diverging(c.estimate() / extent);
      out += svg::Rect(
          x + 1, y + 1, cell_w - 2, cell_h - 2, "cell", " fill=\"" + colour + "\"",
          ComparisonLabel(row) + " at " + FormatShape(row.shape()) + ": " + ChangeText(c));
      out += svg::Text(x + cell_w / 2.0, y + 18,
                       SignedPercent(c.estimate()) + "%" + (c.within_noise() ? " ≈" : ""), "middle",
                       svg::Dark(colour) ? "value on-dark" : "value");
    }
  }
  out += Legend("ramp-change-" + s.id(), svg::Diverging, -1, 1, left, height - 40,
                {PercentTick(-extent), "0", PercentTick(extent)}, "slower ← change → faster");
  return out + "</svg>\n";
}

std::string HistoryChart(const v1::Series& series, const std::string& id) {
  const int n = series.points_size();
  if (n == 0) return "";
  const int left = 90, plot = 760, right = 30, top = 84, height = 260, axis_h = 56;
  double lo = series.points(0).median_ms(), hi = lo;
  for (const v1::HistoryPoint& p : series.points()) {
    lo = std::min(lo, p.median_ms());
    hi = std::max(hi, p.median_ms());
  }
  const double pad = std::max(hi * 0.01, (hi - lo) * 0.1);
  lo = std::max(0.0, lo - pad), hi += pad;
  const std::vector<double> y_ticks = svg::Ticks(&lo, &hi, 5);
  const svg::Scale y{lo, hi, double(top + height), double(top)};
  // Runs 1..n, a point each, half a step of margin at both ends.
  double x_lo = 0.5, x_hi = n + 0.5;
  std::vector<double> x_ticks;
  const int step = std::max(1, int(std::ceil(n / 12.0)));
  for (int i = 1; i <= n; i += step) x_ticks.push_back(i);
  const svg::Scale x{x_lo, x_hi, double(left), double(left + plot)};
  const double bottom = top + height;
  std::string out = svg::Open("chart history", id, left + plot + right, top + height + axis_h,
                              series.variant() + " history, change points marked");
  // The title on two lines, so that a long variant name is not cut at the drawing's edge.
  out += svg::Text(
      8, 18,
      series.variant() + " " + series.dtype() + " " + std::to_string(series.shape().m()) + "x" +
          std::to_string(series.shape().n()) + "x" + std::to_string(series.shape().k()),
      "start", "chart-title");
  out += svg::Text(8, 38, "median time per run; lines: segment means; dashed: change points",
                   "start", "legend-text");
  // The y axis: grid lines and labels in ms.
  out += "<g class=\"axis y\">\n";
  for (double v : y_ticks) {
    out += svg::Line(left, y(v), left + plot, y(v), "grid");
    out += svg::Text(left - 6, y(v) + 4, FormatSignificant(v, 4), "end", "tick-label");
  }
  out += svg::Line(left, top, left, bottom, "axis-line");
  out += svg::Text(8, top - 10, "median ms", "start", "axis-label");
  out += "</g>\n";
  // Runs evenly spaced, oldest first, each labelled with its run id (the id `show` and
  // `report` take), not its place in the series.
  out += svg::XAxis(x, x_ticks, bottom, bottom, "run id, oldest first", [&series](double v) {
    const int i = int(v) - 1;
    return i >= 0 && i < series.points_size() ? std::to_string(series.points(i).run_id())
                                              : std::string();
  });
  // Segments: from each change point (and the start) to the next, at the mean of its medians.
  std::vector<int> starts = {0};
  for (const v1::ChangePoint& c : series.change_points())
    if (c.index() > 0 && c.index() < n) starts.push_back(c.index());
  std::sort(starts.begin(), starts.end());
  starts.erase(std::unique(starts.begin(), starts.end()), starts.end());
  for (std::size_t i = 0; i < starts.size(); ++i) {
    const int from = starts[i], to = i + 1 < starts.size() ? starts[i + 1] : n;
    double sum = 0;
    for (int j = from; j < to; ++j) sum += series.points(j).median_ms();
    const double mean = sum / (to - from);
    out += "<g class=\"segment\"><title>" +
           HtmlEscape("runs " + std::to_string(from + 1) + " to " + std::to_string(to) + ": mean " +
                      FormatSignificant(mean, 4) + " ms") +
           "</title>" + svg::Line(x(from + 0.6), y(mean), x(to + 0.4), y(mean), "segment") +
           "</g>\n";
  }
  // Change points: a dashed line before the first point of the new segment, its change on top.
  for (const v1::ChangePoint& c : series.change_points()) {
    if (c.index() <= 0 || c.index() >= n) continue;
    const double cx = x(c.index() + 0.5);
    const bool slower = c.relative_change() > 0;
    const std::string label = std::string(slower ? "▲ slower " : "▼ faster ") +
                              PercentTick(c.relative_change()) + " (p " +
                              FormatSignificant(c.p_value(), 2) + ")";
    out += "<g class=\"change-point\" data-index=\"" + std::to_string(c.index()) + "\"><title>" +
           HtmlEscape("change point at run " + std::to_string(c.index() + 1) + " (run id " +
                      std::to_string(series.points(c.index()).run_id()) + "): " + label) +
           "</title>" + svg::Line(cx, top - 4, cx, bottom, "change-point") +
           svg::Text(cx, top - 8, label,
                     cx > left + plot * 0.75   ? "end"
                     : cx < left + plot * 0.25 ? "start"
                                               : "middle",
                     slower ? "change-label slower" : "change-label faster") +
           "</g>\n";
  }
  for (int i = 0; i < n; ++i) {
    const v1::HistoryPoint& p = series.points(i);
    out += svg::Circle(x(i + 1), y(p.median_ms()), 3.5, p.change_point() ? "point first" : "point",
                       "run " + std::to_string(p.run_id()) + ", " + FormatTimeMs(p.time_ms()) +
                           ": " + FormatSignificant(p.median_ms(), 4) + " ms, " +
                           FormatFixed(p.tflops(), 1) + " TFLOPS, noise " + Percent(p.noise(), 2));
  }
  return out + "</svg>\n";
}

}  // namespace ablation::client::report
