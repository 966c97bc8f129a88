// The roofline of a section's kernels of their own contract (charts.h: RooflineChart).
#include <algorithm>
#include <cmath>

#include "client/report/charts.h"
#include "client/report/svg.h"

namespace ablation::client::report {
namespace {

namespace svg = ::ablation::client::report::svg;

// Decades: 10^k as "1e-2", "0.1", "1", "10", "1e3".
std::string Decade(double k) {
  const int e = int(std::lround(k));
  if (e >= 0 && e <= 2) return std::to_string(int(std::lround(std::pow(10.0, e))));
  if (e == -1) return "0.1";
  return "1e" + std::to_string(e);
}

struct Point {
  const v1::ReportRow* row;
  double intensity, tops, peak, bandwidth;  // ops/byte, tera-ops/s, tera-ops/s, TB/s
};

}  // namespace

std::string RooflineChart(const v1::ReportSection& s) {
  std::vector<Point> points;
  for (const v1::ReportRow& r : s.rows()) {
    const v1::Roofline& x = r.roofline();
    if (r.status() != v1::ROW_STATUS_OK || !x.has_roofline_intensity() ||
        !(x.roofline_intensity() > 0) || !x.has_roofline_compute_share() ||
        !(x.roofline_compute_share() > 0) || !(x.roofline_bandwidth() > 0) || !(r.tflops() > 0))
      continue;
    points.push_back({&r, x.roofline_intensity(), r.tflops(),
                      r.tflops() / x.roofline_compute_share(), x.roofline_bandwidth() / 1e12});
  }
  if (points.empty()) return "";
  // The roofs of the first point (one device and clock roof per section; the peak is the median
  // of the rows' clock-adjusted peaks).
  std::vector<double> peaks;
  for (const Point& p : points) peaks.push_back(p.peak);
  std::nth_element(peaks.begin(), peaks.begin() + peaks.size() / 2, peaks.end());
  const double peak = peaks[peaks.size() / 2], bandwidth = points.front().bandwidth;
  const double ridge = peak / bandwidth;
  double x_lo = std::log10(ridge), x_hi = std::log10(ridge), y_lo = std::log10(peak);
  for (const Point& p : points) {
    x_lo = std::min(x_lo, std::log10(p.intensity));
    x_hi = std::max(x_hi, std::log10(p.intensity));
    y_lo = std::min(y_lo, std::log10(p.tops));
  }
  x_lo = std::floor(x_lo - 0.5), x_hi = std::ceil(x_hi + 0.5);
  y_lo = std::floor(std::min(y_lo, std::log10(bandwidth) + x_lo) - 0.2);
  const double y_hi = std::ceil(std::log10(peak) + 0.3);
  const int left = 90, plot_w = 520, top = 44, plot_h = 300, right = 420;
  const svg::Scale x{x_lo, x_hi, double(left), double(left + plot_w)};
  const svg::Scale y{y_lo, y_hi, double(top + plot_h), double(top)};
  std::string out = svg::Open("chart", "roofline-" + s.id(), left + plot_w + right,
                              top + plot_h + 60, s.title() + ", roofline");
  out += svg::Text(left, 18,
                   "Roofline: tera-operations per second against operations per byte (log-log)",
                   "start", "chart-title");
  std::vector<double> ticks;
  for (double k = x_lo; k <= x_hi + 1e-9; k += 1) ticks.push_back(k);
  out += svg::XAxis(x, ticks, top + plot_h, top, "operations per byte (work model)", Decade);
  out += "<g class=\"axis y\">\n" + svg::Line(left, top, left, top + plot_h, "axis-line");
  for (double k = y_lo; k <= y_hi + 1e-9; k += 1)
    out += svg::Line(left - 4, y(k), left, y(k), "tick") +
           svg::Text(left - 8, y(k) + 4, Decade(k), "end", "tick-label");
  out += svg::Text(left - 8, top - 8, "Tops/s", "end", "axis-title") + "</g>\n";
  // The two roofs: memory (bandwidth x intensity) up to the ridge, then the compute peak.
  const double ridge_x = std::log10(ridge);
  out +=
      "<g class=\"roof\"><title>measured bandwidth " + Fixed(bandwidth * 1e3, 0) +
      " GB/s; compute peak at the measured clock " + Fixed(peak, 1) + " Tops/s</title>\n" +
      svg::Line(x(x_lo), y(std::log10(bandwidth) + x_lo), x(ridge_x), y(std::log10(peak)), "peak") +
      svg::Line(x(ridge_x), y(std::log10(peak)), x(x_hi), y(std::log10(peak)), "peak") + "</g>\n";
  out += svg::Text(x(x_hi) - 4, y(std::log10(peak)) - 6, "compute " + Fixed(peak, 1), "end",
                   "peak-label");
  out += svg::Text(x(x_lo) + 4, y(std::log10(bandwidth) + x_lo) - 6,
                   "memory " + Fixed(bandwidth * 1e3, 0) + " GB/s", "start", "peak-label");
  for (size_t i = 0; i < points.size(); ++i) {
    const Point& p = points[i];
    const double cx = x(std::log10(p.intensity)), cy = y(std::log10(p.tops));
    out += svg::Circle(cx, cy, 5, "point",
                       p.row->variant() + ": " + Fixed(p.tops, 2) + " Tops/s at " +
                           Fixed(p.intensity, 2) + " ops/byte");
    out += svg::Text(left + plot_w + 12, top + 14 + 16 * double(i),
                     p.row->rung() + "  " + p.row->variant() + ": " + Fixed(p.tops, 2) + " Tops/s",
                     "start", "legend-text");
  }
  out += "</svg>\n";
  return out;
}

}  // namespace ablation::client::report
