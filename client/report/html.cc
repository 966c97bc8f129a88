// `report --format html`: one file that opens anywhere, offline. Inline CSS and SVG only: no
// scripts, fonts or images from the network.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "client/report/report.h"

namespace ablation::client::report {
namespace {

std::string Num(double v, int decimals) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", decimals, v);
  return buffer;
}

std::string E(const std::string& text) { return HtmlEscape(text); }

constexpr const char* kStyle = R"css(
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 2em auto;
       max-width: 1200px; padding: 0 1em; color: #1d2330; }
h1 { font-size: 1.6em; margin-bottom: .2em; }
h2 { font-size: 1.25em; margin-top: 2em; border-bottom: 1px solid #d8dce4; padding-bottom: .2em; }
.scope, .summary { color: #566; }
table { border-collapse: collapse; margin: .8em 0; font-variant-numeric: tabular-nums; }
th, td { border: 1px solid #d8dce4; padding: .25em .6em; text-align: left; }
th { background: #f1f3f7; }
td.num { text-align: right; }
tr.missing td { color: #99a; font-style: italic; }
tr.failed td { color: #b02a2a; }
td.noise { text-align: center; color: #8a6d00; }
code { font: 12px ui-monospace, "SFMono-Regular", Menlo, monospace; }
.notes { background: #f7f8fb; border-left: 3px solid #9aa7c7; padding: .4em 1em; }
.notes li { margin: .2em 0; }
svg { display: block; margin: .6em 0 1em; }
svg text { font: 12px system-ui, sans-serif; fill: #1d2330; }
svg .bar { fill: #4c72b0; }
svg .bar.cublas { fill: #8c8c8c; }
svg .bar.missing { fill: none; stroke: #aab; stroke-dasharray: 4 3; }
svg text.missing { fill: #99a; font-style: italic; }
svg .cell-missing { fill: #eceef2; }
)css";

bool IsReference(const ReportRow& r) { return r.label.rfind("cuBLAS", 0) == 0; }

// Horizontal bars, one per row, TFLOPS to scale; missing rows drawn as an empty dashed frame.
std::string BarChart(const ReportTable& t) {
  double max_tflops = 0;
  for (const ReportRow& r : t.rows)
    if (r.measured()) max_tflops = std::max(max_tflops, r.tflops);
  if (max_tflops <= 0) max_tflops = 1;
  const int label_w = 330, bar_w = 520, row_h = 24, top = 8;
  const int height = top * 2 + row_h * int(t.rows.size());
  std::string svg = "<svg class=\"chart\" id=\"chart-" + t.id +
                    "\" xmlns=\"http://www.w3.org/2000/svg\" width=\"" +
                    std::to_string(label_w + bar_w + 90) + "\" height=\"" + std::to_string(height) +
                    "\" role=\"img\" aria-label=\"" + E(t.title) + ", TFLOPS\">\n";
  for (std::size_t i = 0; i < t.rows.size(); ++i) {
    const ReportRow& r = t.rows[i];
    const int y = top + row_h * int(i);
    std::string label = r.label + "  " + r.variant;
    if (label.size() > 52) label = label.substr(0, 51) + "…";
    svg += "<text x=\"" + std::to_string(label_w - 8) + "\" y=\"" + std::to_string(y + 16) +
           "\" text-anchor=\"end\">" + E(label) + "</text>\n";
    if (!r.measured()) {
      svg += "<rect class=\"bar missing\" x=\"" + std::to_string(label_w) + "\" y=\"" +
             std::to_string(y + 3) + "\" width=\"" + std::to_string(bar_w / 4) + "\" height=\"" +
             std::to_string(row_h - 6) + "\"/>\n";
      svg += "<text class=\"missing\" x=\"" + std::to_string(label_w + bar_w / 4 + 6) + "\" y=\"" +
             std::to_string(y + 16) + "\">" + E(r.status) + "</text>\n";
      continue;
    }
    const double w = std::max(1.0, bar_w * r.tflops / max_tflops);
    svg += "<rect class=\"bar" + std::string(IsReference(r) ? " cublas" : "") + "\" x=\"" +
           std::to_string(label_w) + "\" y=\"" + std::to_string(y + 3) + "\" width=\"" + Num(w, 1) +
           "\" height=\"" + std::to_string(row_h - 6) + "\"><title>" +
           E(r.variant + ": " + Num(r.tflops, 1) + " TFLOPS") + "</title></rect>\n";
    std::string value = Num(r.tflops, 1);
    if (r.change)
      value += "  (" + FormatChange(*r.change).substr(0, FormatChange(*r.change).find(' ')) + ")";
    svg += "<text x=\"" + Num(label_w + w + 6, 1) + "\" y=\"" + std::to_string(y + 16) + "\">" +
           E(value) + "</text>\n";
  }
  return svg + "</svg>\n";
}

// Share of cuBLAS from 0 (white) to 1 (deep blue).
std::string HeatColor(double share) {
  share = std::clamp(share, 0.0, 1.0);
  const int r = int(std::lround(247 - share * (247 - 33)));
  const int g = int(std::lround(251 - share * (251 - 102)));
  const int b = int(std::lround(255 - share * (255 - 172)));
  char buffer[16];
  std::snprintf(buffer, sizeof buffer, "#%02x%02x%02x", r, g, b);
  return buffer;
}

std::string Heatmap(const ReportTable& t) {
  const std::size_t columns = t.column_shapes.size();
  const int label_w = 250, cell_w = 96, cell_h = 28, header_h = 44;
  const int width = label_w + cell_w * int(columns) + 10;
  const int height = header_h + cell_h * int(t.row_keys.size()) + 30;
  std::string svg =
      "<svg class=\"heatmap\" id=\"heatmap-shapes\" xmlns=\"http://www.w3.org/2000/svg\" width=\"" +
      std::to_string(width) + "\" height=\"" + std::to_string(height) +
      "\" role=\"img\" aria-label=\"TFLOPS by variant and shape\">\n";
  for (std::size_t c = 0; c < columns; ++c) {
    const auto& s = t.column_shapes[c];
    const int x = label_w + cell_w * int(c) + cell_w / 2;
    svg += "<text x=\"" + std::to_string(x) +
           "\" y=\"16\" text-anchor=\"middle\">M=N=" + std::to_string(s.m()) +
           (s.m() != s.n() ? "x" + std::to_string(s.n()) : "") + "</text>\n<text x=\"" +
           std::to_string(x) + "\" y=\"34\" text-anchor=\"middle\">K=" + std::to_string(s.k()) +
           "</text>\n";
  }
  for (std::size_t r = 0; r < t.row_keys.size(); ++r) {
    const int y = header_h + cell_h * int(r);
    svg += "<text x=\"" + std::to_string(label_w - 8) + "\" y=\"" + std::to_string(y + 18) +
           "\" text-anchor=\"end\">" + E(t.row_labels[r] + "  " + t.row_keys[r]) + "</text>\n";
    for (std::size_t c = 0; c < columns; ++c) {
      const ReportRow& row = t.rows[r * columns + c];
      const int x = label_w + cell_w * int(c);
      if (!row.measured()) {
        svg += "<rect class=\"cell-missing\" x=\"" + std::to_string(x + 1) + "\" y=\"" +
               std::to_string(y + 1) + "\" width=\"" + std::to_string(cell_w - 2) + "\" height=\"" +
               std::to_string(cell_h - 2) + "\"/>\n<text class=\"missing\" x=\"" +
               std::to_string(x + cell_w / 2) + "\" y=\"" + std::to_string(y + 18) +
               "\" text-anchor=\"middle\">" + E(row.status) + "</text>\n";
        continue;
      }
      const double share = row.cublas_share.value_or(0);
      svg += "<rect x=\"" + std::to_string(x + 1) + "\" y=\"" + std::to_string(y + 1) +
             "\" width=\"" + std::to_string(cell_w - 2) + "\" height=\"" +
             std::to_string(cell_h - 2) + "\" fill=\"" + HeatColor(share) + "\"><title>" +
             E(row.variant + " " + ShapeText(row.shape) + ": " + Num(row.tflops, 1) + " TFLOPS" +
               (row.cublas_share ? ", " + Num(share * 100, 1) + "% of cuBLAS" : "")) +
             "</title></rect>\n";
      svg += "<text x=\"" + std::to_string(x + cell_w / 2) + "\" y=\"" + std::to_string(y + 18) +
             "\" text-anchor=\"middle\"" + (share > 0.6 ? " style=\"fill:#fff\"" : "") + ">" +
             Num(row.tflops, 1) + "</text>\n";
    }
  }
  svg += "<text x=\"" + std::to_string(label_w) + "\" y=\"" + std::to_string(height - 8) +
         "\">TFLOPS; colour: share of cuBLAS at that shape (white 0%, blue 100%)</text>\n";
  return svg + "</svg>\n";
}

std::string RowTable(const ReportTable& t, bool all) {
  std::string html = "<table>\n<tr>";
  if (all) {
    html +=
        "<th>#</th><th>variant</th><th>dtype</th><th>shape</th><th>TFLOPS</th><th>share of "
        "cuBLAS</th><th>status</th></tr>\n";
  } else {
    html +=
        "<th>rung</th><th>what</th><th>variant</th><th>dtype</th><th>shape</th><th>TFLOPS</th>"
        "<th>share of cuBLAS</th><th>vs</th><th>change [95% CI]</th><th>noise</th></tr>\n";
  }
  for (const ReportRow& r : t.rows) {
    const std::string cls = r.status == "missing" ? "missing" : r.measured() ? "" : "failed";
    html += "<tr" + (cls.empty() ? std::string() : " class=\"" + cls + "\"") + ">";
    const std::string tflops = r.status == "missing" ? "missing"
                               : r.measured()        ? Num(r.tflops, 1)
                                                     : E(r.status);
    const std::string share = !r.measured()    ? "-"
                              : r.cublas_share ? Num(*r.cublas_share * 100, 1) + "%"
                                               : "no " + E(r.cublas_variant);
    if (all) {
      html += "<td class=\"num\">" + E(r.label) + "</td><td><code>" + E(r.variant) +
              "</code></td><td>" + E(r.dtype) + "</td><td>" + ShapeText(r.shape) +
              "</td><td class=\"num\">" + tflops + "</td><td class=\"num\">" + share + "</td><td>" +
              E(r.status + (r.error.empty() ? "" : ": " + r.error)) + "</td></tr>\n";
      continue;
    }
    html += "<td>" + E(r.label) + "</td><td>" + E(r.what) + "</td><td><code>" + E(r.variant) +
            "</code></td><td>" + E(r.dtype) + "</td><td>" + ShapeText(r.shape) +
            "</td><td class=\"num\">" + tflops + "</td><td class=\"num\">" + share + "</td><td>" +
            (r.vs.empty() ? "-" : E(r.vs)) + "</td><td class=\"num\">" +
            (r.change ? E(FormatChange(*r.change)) : "-") + "</td><td class=\"noise\">" +
            (r.change && r.change->within_noise() ? "&#8776;" : "") + "</td></tr>\n";
  }
  return html + "</table>\n";
}

}  // namespace

std::string RenderReportHtml(const Report& report) {
  const auto& run = report.run;
  std::string html =
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      "<title>Ablation report: run " +
      std::to_string(run.id()) + "</title>\n<style>" + kStyle + "</style>\n</head>\n<body>\n";
  html +=
      "<h1>Ablation report: run " + std::to_string(run.id()) + "</h1>\n<p class=\"summary\">" +
      E(run.state()) + (run.device().name().empty() ? "" : " on " + E(run.device().name())) +
      (run.device().compute_capability().empty() ? ""
                                                 : ", sm " + E(run.device().compute_capability())) +
      (run.clock_policy().empty() ? "" : "; clocks " + E(run.clock_policy())) + "</p>\n";
  html +=
      "<p>Change: speed against the previous rung, median(previous) / median(this) &minus; 1, "
      "with a 95% bootstrap interval from the raw samples (" +
      std::to_string(kBootstrapResamples) +
      " resamples, fixed seed); &#8776; marks an interval that contains 0 (within noise). "
      "Share: TFLOPS over the cuBLAS of the same dtype and shape in this run.</p>\n";
  int number = 0;
  for (const ReportTable& t : report.tables) {
    html += "<section id=\"" + t.id + "\">\n<h2>" + std::to_string(++number) + ". " + E(t.title) +
            "</h2>\n<p class=\"scope\">" + E(t.scope) + "</p>\n";
    if (t.measured() == 0 && t.id != "all") {
      html += "<p class=\"missing\">Not measured in this run: all " +
              std::to_string(t.rows.size()) + " rows missing.</p>\n</section>\n";
      continue;
    }
    if (t.id == "shapes") {
      html += Heatmap(t);
      html += RowTable(t, false);
    } else if (t.id == "all") {
      html += RowTable(t, true);
    } else {
      html += BarChart(t);
      html += RowTable(t, false);
    }
    if (!t.notes.empty()) {
      html += "<ul class=\"notes\">\n";
      for (const std::string& note : t.notes) html += "<li>" + E(note) + "</li>\n";
      html += "</ul>\n";
    }
    html += "</section>\n";
  }
  return html + "</body>\n</html>\n";
}

}  // namespace ablation::client::report
