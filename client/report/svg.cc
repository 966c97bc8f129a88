#include "client/report/svg.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>

#include "client/output/escape.h"

namespace ablation::client::report::svg {
namespace {

struct Rgb {
  double r, g, b;
};

// Piecewise linear through evenly spaced stops, t in [0, 1].
template <std::size_t N>
std::string Ramp(const std::array<Rgb, N>& stops, double t) {
  t = std::clamp(std::isfinite(t) ? t : 0.0, 0.0, 1.0);
  const double at = t * double(N - 1);
  const std::size_t i = std::min(N - 2, std::size_t(at));
  const double f = at - double(i);
  auto mix = [&](double a, double b) { return int(std::lround(a + (b - a) * f)); };
  char buffer[8];
  std::snprintf(buffer, sizeof buffer, "#%02x%02x%02x", mix(stops[i].r, stops[i + 1].r),
                mix(stops[i].g, stops[i + 1].g), mix(stops[i].b, stops[i + 1].b));
  return buffer;
}

// ColorBrewer's Blues (sequential) and RdBu (diverging), which read in grey and to most colour
// blind readers.
constexpr std::array<Rgb, 3> kBlues = {{{247, 251, 255}, {107, 174, 214}, {8, 48, 107}}};
constexpr std::array<Rgb, 5> kRdBu = {
    {{178, 24, 43}, {239, 138, 98}, {247, 247, 247}, {103, 169, 207}, {33, 102, 172}}};

std::string Attr(const std::string& name, const std::string& value) {
  return value.empty() ? "" : " " + name + "=\"" + HtmlEscape(value) + "\"";
}

}  // namespace

std::string Num(double v) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.1f", v);
  std::string s = buffer;
  if (s == "-0.0") s = "0.0";
  if (s.size() > 2 && s.compare(s.size() - 2, 2, ".0") == 0) s.resize(s.size() - 2);
  return s;
}

std::string Open(const std::string& cls, const std::string& id, int width, int height,
                 const std::string& label) {
  return "<svg" + Attr("class", cls) + Attr("id", id) +
         " xmlns=\"http://www.w3.org/2000/svg\" width=\"" + std::to_string(width) + "\" height=\"" +
         std::to_string(height) + "\" viewBox=\"0 0 " + std::to_string(width) + " " +
         std::to_string(height) + "\" role=\"img\"" + Attr("aria-label", label) + ">\n";
}

std::string Rect(double x, double y, double w, double h, const std::string& cls,
                 const std::string& attributes, const std::string& title) {
  std::string out = "<rect" + Attr("class", cls) + " x=\"" + Num(x) + "\" y=\"" + Num(y) +
                    "\" width=\"" + Num(std::max(0.0, w)) + "\" height=\"" + Num(std::max(0.0, h)) +
                    "\"" + attributes;
  return out + (title.empty() ? "/>\n" : "><title>" + HtmlEscape(title) + "</title></rect>\n");
}

std::string Line(double x1, double y1, double x2, double y2, const std::string& cls) {
  return "<line" + Attr("class", cls) + " x1=\"" + Num(x1) + "\" y1=\"" + Num(y1) + "\" x2=\"" +
         Num(x2) + "\" y2=\"" + Num(y2) + "\"/>\n";
}

std::string Circle(double cx, double cy, double r, const std::string& cls,
                   const std::string& title) {
  std::string out = "<circle" + Attr("class", cls) + " cx=\"" + Num(cx) + "\" cy=\"" + Num(cy) +
                    "\" r=\"" + Num(r) + "\"";
  return out + (title.empty() ? "/>\n" : "><title>" + HtmlEscape(title) + "</title></circle>\n");
}

std::string Text(double x, double y, const std::string& text, const std::string& anchor,
                 const std::string& cls, const std::string& attributes) {
  return "<text" + Attr("class", cls) + " x=\"" + Num(x) + "\" y=\"" + Num(y) + "\"" +
         (anchor == "start" ? "" : " text-anchor=\"" + anchor + "\"") + attributes + ">" +
         HtmlEscape(text) + "</text>\n";
}

std::vector<double> Ticks(double* lo, double* hi, int count) {
  if (!(*hi > *lo)) *hi = *lo + 1;
  const double raw = (*hi - *lo) / std::max(1, count);
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  const double norm = raw / magnitude;
  const double step = (norm < 1.5 ? 1 : norm < 3 ? 2 : norm < 7 ? 5 : 10) * magnitude;
  *lo = std::floor(*lo / step + 1e-9) * step;
  *hi = std::ceil(*hi / step - 1e-9) * step;
  std::vector<double> ticks;
  for (double v = *lo; v <= *hi + step * 1e-6; v += step)
    ticks.push_back(std::fabs(v) < step * 1e-9 ? 0.0 : v);
  return ticks;
}

std::string XAxis(const Scale& scale, const std::vector<double>& ticks, double y, double grid_top,
                  const std::string& title, const std::function<std::string(double)>& format) {
  // Every k-th tick only, where the labels would otherwise run together: a label is about
  // 0.6 em a character at the tick labels' 12 px, with a gap of 12 px.
  std::size_t widest = 0;
  for (double t : ticks) widest = std::max(widest, format(t).size());
  const double need = double(widest) * 7.5 + 12;
  const double spacing = ticks.size() > 1 ? std::fabs(scale(ticks[1]) - scale(ticks[0])) : need;
  const std::size_t stride = std::max<std::size_t>(1, std::size_t(std::ceil(need / spacing)));
  // The stride counts from 0 where 0 is a tick, so that 0 keeps its label.
  std::size_t origin = 0;
  for (std::size_t i = 0; i < ticks.size(); ++i)
    if (ticks[i] == 0) origin = i % stride;
  std::string out = "<g class=\"axis x\">\n";
  out += Line(scale.from, y, scale.to, y, "axis-line");
  for (std::size_t i = 0; i < ticks.size(); ++i) {
    const double t = ticks[i];
    if (i % stride != origin) continue;
    if (grid_top < y) out += Line(scale(t), grid_top, scale(t), y, "grid");
    out += Line(scale(t), y, scale(t), y + 5, "tick");
    out += Text(scale(t), y + 19, format(t), "middle", "tick-label");
  }
  out += Text((scale.from + scale.to) / 2, y + 40, title, "middle", "axis-label");
  return out + "</g>\n";
}

std::string YAxis(double x, double top, double bottom, double title_y, const std::string& title) {
  std::string out = "<g class=\"axis y\">\n";
  if (top < bottom) out += Line(x, top, x, bottom, "axis-line");
  out += Text(x - 8, title_y, title, "end", "axis-label");
  return out + "</g>\n";
}

std::string Sequential(double t) { return Ramp(kBlues, t); }

std::string Diverging(double t) { return Ramp(kRdBu, (std::clamp(t, -1.0, 1.0) + 1) / 2); }

bool Dark(const std::string& colour) {
  unsigned r = 0, g = 0, b = 0;
  if (std::sscanf(colour.c_str(), "#%02x%02x%02x", &r, &g, &b) != 3) return false;
  return 0.299 * r + 0.587 * g + 0.114 * b < 140;
}

std::string Gradient(const std::string& id, std::string (*colour)(double), double t0, double t1) {
  std::string out =
      "<defs><linearGradient id=\"" + HtmlEscape(id) + "\" x1=\"0\" x2=\"1\" y1=\"0\" y2=\"0\">";
  constexpr int kStops = 9;
  for (int i = 0; i < kStops; ++i) {
    const double f = double(i) / (kStops - 1);
    out += "<stop offset=\"" + Num(f * 100) + "%\" stop-color=\"" + colour(t0 + (t1 - t0) * f) +
           "\"/>";
  }
  return out + "</linearGradient></defs>\n";
}

}  // namespace ablation::client::report::svg
