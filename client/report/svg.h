// The pieces the report's charts are drawn with: inline SVG elements as text, linear scales with
// round ticks, axes, colour ramps. No layout engine: each chart places its own boxes.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace ablation::client::report::svg {

// A number as an SVG coordinate: one decimal, "-0" as "0".
std::string Num(double v);

// <svg class=... id=... width height viewBox role="img" aria-label=...> (escaped); close with
// "</svg>\n".
std::string Open(const std::string& cls, const std::string& id, int width, int height,
                 const std::string& label);
// `attributes` are written as given (already escaped), each with its leading space.
std::string Rect(double x, double y, double w, double h, const std::string& cls,
                 const std::string& attributes = "", const std::string& title = "");
std::string Line(double x1, double y1, double x2, double y2, const std::string& cls);
std::string Circle(double cx, double cy, double r, const std::string& cls,
                   const std::string& title = "");
// anchor: "start", "middle", "end".
std::string Text(double x, double y, const std::string& text, const std::string& anchor = "start",
                 const std::string& cls = "", const std::string& attributes = "");

// value -> pixel, linear over [lo, hi] -> [from, to].
struct Scale {
  double lo = 0, hi = 1, from = 0, to = 1;
  double operator()(double v) const { return from + (v - lo) / (hi - lo) * (to - from); }
};

// Round tick values (1, 2 or 5 times a power of ten apart) covering [lo, hi], about `count` of
// them; lo and hi are widened to the ticks at the ends.
std::vector<double> Ticks(double* lo, double* hi, int count = 5);

// A horizontal axis at `y` along `scale`: the axis line, a tick and its label per value, light
// grid lines up to `grid_top` (none when grid_top >= y), and the axis title under the labels,
// all in <g class="axis x">. `format` writes a tick label. Where the labels would run together
// (about 7.5 px a character at 12 px, 12 px apart), only every k-th tick is drawn, 0 among them.
std::string XAxis(const Scale& scale, const std::vector<double>& ticks, double y, double grid_top,
                  const std::string& title, const std::function<std::string(double)>& format);
// The vertical axis line at x from top to bottom (none when top >= bottom), with its title at
// title_y as the heading of the row labels left of it (<g class="axis y">).
std::string YAxis(double x, double top, double bottom, double title_y, const std::string& title);

// Colours "#rrggbb": a white -> blue ramp for t in [0, 1]; and the diverging red <- white -> blue
// ramp for t in [-1, 1] (red: slower, blue: faster), white at 0.
std::string Sequential(double t);
std::string Diverging(double t);
// Whether text on that colour should be white to be read.
bool Dark(const std::string& colour);

// <linearGradient id=...> of `colour` sampled from t0 to t1 (horizontal), inside <defs>.
std::string Gradient(const std::string& id, std::string (*colour)(double), double t0, double t1);

}  // namespace ablation::client::report::svg
