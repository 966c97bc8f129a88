// `report --format html`: one file that opens anywhere, offline. Inline CSS and SVG only: no
// scripts, fonts or images from the network.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "client/enum_words.h"
#include "client/escape.h"
#include "client/format.h"
#include "client/report/report.h"
#include "client/report/text.h"

namespace ablation::client::report {
namespace {

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

std::string Int(int v) { return std::to_string(v); }

// An SVG rect; `width` as written ("130", "94.0"); with a title, its tooltip.
std::string Rect(const std::string& cls, int x, int y, const std::string& width, int height,
                 const std::string& extra = "", const std::string& title = "") {
  std::string svg = "<rect" + (cls.empty() ? "" : " class=\"" + cls + "\"") + " x=\"" + Int(x) +
                    "\" y=\"" + Int(y) + "\" width=\"" + width + "\" height=\"" + Int(height) +
                    "\"" + extra;
  return svg + (title.empty() ? "/>\n" : "><title>" + E(title) + "</title></rect>\n");
}

// An SVG text at x (as written) and y.
std::string Text(const std::string& x, int y, const std::string& text,
                 const std::string& attributes = "", const std::string& cls = "") {
  return "<text" + (cls.empty() ? "" : " class=\"" + cls + "\"") + " x=\"" + x + "\" y=\"" +
         Int(y) + "\"" + attributes + ">" + E(text) + "</text>\n";
}

// Horizontal bars, one per row, TFLOPS to scale; missing rows drawn as an empty dashed frame.
std::string BarChart(const v1::ReportSection& s) {
  double max_tflops = 0;
  for (const v1::ReportRow& r : s.rows())
    if (Measured(r)) max_tflops = std::max(max_tflops, r.tflops());
  if (max_tflops <= 0) max_tflops = 1;
  const int label_w = 330, bar_w = 520, row_h = 24, top = 8;
  const int height = top * 2 + row_h * s.rows_size();
  std::string svg = "<svg class=\"chart\" id=\"chart-" + E(s.id()) +
                    "\" xmlns=\"http://www.w3.org/2000/svg\" width=\"" +
                    std::to_string(label_w + bar_w + 90) + "\" height=\"" + std::to_string(height) +
                    "\" role=\"img\" aria-label=\"" + E(s.title()) + ", TFLOPS\">\n";
  for (int i = 0; i < s.rows_size(); ++i) {
    const v1::ReportRow& r = s.rows(i);
    const int y = top + row_h * i;
    std::string label = r.rung() + "  " + r.variant();
    if (label.size() > 52) label = label.substr(0, 51) + "…";
    svg += Text(Int(label_w - 8), y + 16, label, " text-anchor=\"end\"");
    if (!Measured(r)) {
      svg += Rect("bar missing", label_w, y + 3, Int(bar_w / 4), row_h - 6);
      svg += Text(Int(label_w + bar_w / 4 + 6), y + 16, StatusWord(r), "", "missing");
      continue;
    }
    const double w = std::max(1.0, bar_w * r.tflops() / max_tflops);
    svg += Rect(r.baseline() ? "bar cublas" : "bar", label_w, y + 3, Fixed(w, 1), row_h - 6, "",
                r.variant() + ": " + Fixed(r.tflops(), 1) + " TFLOPS");
    std::string value = Fixed(r.tflops(), 1);
    if (r.has_change()) value += "  (" + SignedPercent(r.change().estimate()) + "%)";
    svg += Text(Fixed(label_w + w + 6, 1), y + 16, value);
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

// TFLOPS by rung and shape, coloured by the share of cuBLAS.
std::string Heatmap(const v1::ReportSection& s) {
  const int columns = s.shapes_size();
  const int rungs = columns == 0 ? 0 : s.rows_size() / columns;
  const int label_w = 250, cell_w = 96, cell_h = 28, header_h = 44;
  const int width = label_w + cell_w * columns + 10;
  const int height = header_h + cell_h * rungs + 30;
  std::string svg = "<svg class=\"heatmap\" id=\"heatmap-" + E(s.id()) +
                    "\" xmlns=\"http://www.w3.org/2000/svg\" width=\"" + std::to_string(width) +
                    "\" height=\"" + std::to_string(height) +
                    "\" role=\"img\" aria-label=\"TFLOPS by variant and shape\">\n";
  for (int c = 0; c < columns; ++c) {
    const v1::Shape& shape = s.shapes(c);
    const int x = label_w + cell_w * c + cell_w / 2;
    const std::string mn =
        std::to_string(shape.m()) + (shape.m() != shape.n() ? "x" + std::to_string(shape.n()) : "");
    svg += Text(Int(x), 16, "M=N=" + mn, " text-anchor=\"middle\"");
    svg += Text(Int(x), 34, "K=" + std::to_string(shape.k()), " text-anchor=\"middle\"");
  }
  for (int r = 0; r < rungs; ++r) {
    const int y = header_h + cell_h * r;
    const v1::ReportRow& first = s.rows(r * columns);
    svg += Text(Int(label_w - 8), y + 18, first.rung() + "  " + first.variant(),
                " text-anchor=\"end\"");
    for (int c = 0; c < columns; ++c) {
      const v1::ReportRow& row = s.rows(r * columns + c);
      const int x = label_w + cell_w * c;
      const std::string middle = " text-anchor=\"middle\"";
      if (!Measured(row)) {
        svg += Rect("cell-missing", x + 1, y + 1, Int(cell_w - 2), cell_h - 2);
        svg += Text(Int(x + cell_w / 2), y + 18, StatusWord(row), middle, "missing");
        continue;
      }
      const double share = row.has_cublas_share() ? row.cublas_share() : 0;
      svg +=
          Rect("", x + 1, y + 1, Int(cell_w - 2), cell_h - 2, " fill=\"" + HeatColor(share) + "\"",
               row.variant() + " " + FormatShape(row.shape()) + ": " + Fixed(row.tflops(), 1) +
                   " TFLOPS" +
                   (row.has_cublas_share() ? ", " + Fixed(share * 100, 1) + "% of cuBLAS" : ""));
      svg += Text(Int(x + cell_w / 2), y + 18, Fixed(row.tflops(), 1),
                  middle + (share > 0.6 ? " style=\"fill:#fff\"" : ""));
    }
  }
  svg += Text(Int(label_w), height - 8,
              "TFLOPS; colour: share of cuBLAS at that shape (white 0%, blue 100%)");
  return svg + "</svg>\n";
}

std::string Cells(const std::vector<std::string>& cells, const std::vector<std::string>& classes) {
  std::string html;
  for (std::size_t i = 0; i < cells.size(); ++i) {
    const std::string& cls = i < classes.size() ? classes[i] : "";
    html += "<td" + (cls.empty() ? "" : " class=\"" + cls + "\"") + ">" + cells[i] + "</td>";
  }
  return html;
}

std::string Headers(const std::vector<std::string>& titles) {
  std::string html = "<tr>";
  for (const std::string& t : titles) html += "<th>" + E(t) + "</th>";
  return html + "</tr>\n";
}

// The rows as an HTML table: rungs (what, vs, change) or, for "all", items (rounds, status); the
// cycles change and low-clock columns where the run has clock data.
std::string RowTable(const v1::ReportSection& s) {
  const bool all = s.layout() == v1::SECTION_LAYOUT_ALL;
  const bool cycles = !all && AnyCycles(s), low = AnyLowClock(s);
  std::vector<std::string> titles =
      all ? std::vector<std::string>{"#",      "variant",         "dtype", "shape",
                                     "TFLOPS", "share of cuBLAS", "rounds"}
          : std::vector<std::string>{"rung",
                                     "what",
                                     "variant",
                                     "dtype",
                                     "shape",
                                     "TFLOPS",
                                     "share of cuBLAS",
                                     "vs",
                                     "change [95% CI]",
                                     "noise"};
  if (cycles) titles.push_back("cycles change [95% CI]");
  if (low) titles.push_back("low clock");
  if (all) titles.push_back("status");
  std::string html = "<table>\n" + Headers(titles);
  for (const v1::ReportRow& r : s.rows()) {
    const std::string cls = r.status() == v1::ROW_STATUS_MISSING ? "missing"
                            : Measured(r)                        ? ""
                                                                 : "failed";
    html += "<tr" + (cls.empty() ? std::string() : " class=\"" + cls + "\"") + ">";
    const std::string variant = "<code>" + E(r.variant()) + "</code>";
    std::vector<std::string> cells, classes;
    if (all) {
      cells = {E(r.rung()),
               variant,
               E(r.dtype()),
               FormatShape(r.shape()),
               E(TflopsText(r)),
               E(ShareText(r)),
               std::to_string(r.rounds())};
      classes = {"num", "", "", "", "num", "num", "num"};
    } else {
      const bool noise = r.has_change() && r.change().within_noise();
      cells = {E(r.rung()),
               E(r.what()),
               variant,
               E(r.dtype()),
               FormatShape(r.shape()),
               E(TflopsText(r)),
               E(ShareText(r)),
               E(VsText(r)),
               E(ChangeCell(r)),
               noise ? "&#8776;" : ""};
      classes = {"", "", "", "", "", "num", "num", "", "num", "noise"};
    }
    if (cycles) cells.push_back(E(CyclesCell(r))), classes.push_back("num");
    if (low) cells.push_back(E(LowClockCell(r))), classes.push_back("num");
    if (all) cells.push_back(E(StatusAndError(r)));
    html += Cells(cells, classes) + "</tr>\n";
  }
  html += "</table>\n";
  if (AnyOneRound(s)) html += "<p class=\"scope\">" + E(OneRoundLegend()) + "</p>\n";
  return html;
}

std::string Summary(const v1::ReportRun& run) {
  const v1::DeviceIdentity& d = run.device();
  return E(EnumWord(run.state())) + (d.name().empty() ? "" : " on " + E(d.name())) +
         (d.compute_capability().empty() ? "" : ", sm " + E(d.compute_capability())) +
         (run.clock_policy().empty() ? "" : "; clocks " + E(run.clock_policy()));
}

}  // namespace

std::string RenderReportHtml(const v1::Report& report) {
  const std::string id = std::to_string(report.run().id());
  std::string html =
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      "<title>Ablation report: run " +
      id + "</title>\n<style>" + kStyle + "</style>\n</head>\n<body>\n";
  html += "<h1>Ablation report: run " + id + "</h1>\n<p class=\"summary\">" +
          Summary(report.run()) + "</p>\n";
  html += "<p>" + E(MethodText(report)) + "</p>\n";
  int number = 0;
  for (const v1::ReportSection& s : report.sections()) {
    html += "<section id=\"" + E(s.id()) + "\">\n<h2>" + std::to_string(++number) + ". " +
            E(s.title()) + "</h2>\n<p class=\"scope\">" + E(s.scope()) + "</p>\n";
    if (Unmeasured(s)) {
      html += "<p class=\"missing\">Not measured in this run: all " +
              std::to_string(s.rows_size()) + " rows missing.</p>\n</section>\n";
      continue;
    }
    if (s.layout() == v1::SECTION_LAYOUT_SHAPES) html += Heatmap(s);
    if (s.layout() == v1::SECTION_LAYOUT_LADDER) html += BarChart(s);
    html += RowTable(s);
    if (!s.notes().empty()) {
      html += "<ul class=\"notes\">\n";
      for (const std::string& note : s.notes()) html += "<li>" + E(note) + "</li>\n";
      html += "</ul>\n";
    }
    html += "</section>\n";
  }
  return html + "</body>\n</html>\n";
}

}  // namespace ablation::client::report
