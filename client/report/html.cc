// `report --format html`: one file that opens anywhere, offline. Inline CSS and SVG only: no
// scripts, fonts or images from the network.
#include <algorithm>

#include "client/output/enum_words.h"
#include "client/output/escape.h"
#include "client/output/format.h"
#include "client/report/charts.h"
#include "client/report/report.h"
#include "client/report/text.h"

namespace ablation::client::report {
namespace {

// A variant's name as RoundsApartLines puts it into a line that is escaped whole.
std::string HtmlPlain(const std::string& text) { return text; }

std::string E(const std::string& text) { return HtmlEscape(text); }

constexpr const char* kStyle = R"css(
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 2em auto;
       max-width: 1360px; padding: 0 1em; color: #1d2330; }
h1 { font-size: 1.6em; margin-bottom: .2em; }
h2 { font-size: 1.25em; margin-top: 2em; border-bottom: 1px solid #d8dce4; padding-bottom: .2em; }
.scope, .summary { color: #566; }
/* Every column stays on the page, on screen, in print and in a PDF: a table takes the width
   there is and its cells wrap (at spaces, variant names after their underscores, a word too long
   for its cell anywhere), rather than scrolling. */
table { border-collapse: collapse; margin: .8em 0; font-variant-numeric: tabular-nums;
        table-layout: auto; max-width: 100%; font-size: 13px; }
table.rows, table.conditions { width: 100%; }
th, td { border: 1px solid #d8dce4; padding: .25em .45em; text-align: left; vertical-align: top;
         overflow-wrap: break-word; }
th { background: #f1f3f7; font-weight: 600; }
td.num { text-align: right; }
tr.missing td { color: #99a; font-style: italic; }
tr.failed td { color: #b02a2a; }
td.noise { text-align: center; color: #8a6d00; }
code { font: 12px ui-monospace, "SFMono-Regular", Menlo, monospace; }
.notes { background: #f7f8fb; border-left: 3px solid #9aa7c7; padding: .4em 1em; }
.notes li { margin: .2em 0; }
caption { text-align: left; font-weight: 600; padding: .3em 0; }
table.header { font-size: 14px; }
table.header th { background: none; font-weight: 600; border: none; padding: .1em 1.2em .1em 0; }
table.header td { border: none; padding: .1em 0; }
.unmeasured, .left-out, .legend-text { color: #566; font-style: italic; }
.figures { display: flex; flex-wrap: wrap; gap: .5em 2em; align-items: flex-start; }
/* A chart is drawn at its own size (its text 12 px and up) and only shrinks, whole, where the
   page is narrower than it (print). */
svg { display: block; margin: .6em 0 1em; background: #fff; max-width: 100%; height: auto; }
svg text { font: 13px system-ui, sans-serif; fill: #1d2330; }
svg text.chart-title { font-size: 14px; font-weight: 600; }
svg text.axis-label { font-size: 13px; fill: #333; }
svg text.tick-label, svg text.value, svg text.legend-text, svg text.peak-label {
  font-size: 12px; fill: #333; }
svg text.legend-text { font-style: normal; }
svg .axis-line, svg .tick { stroke: #333; stroke-width: 1; shape-rendering: crispEdges; }
svg .grid { stroke: #e3e6ec; stroke-width: 1; shape-rendering: crispEdges; }
svg .bar { fill: #4c72b0; }
svg .bar.cublas { fill: #8c8c8c; }
svg .whisker { stroke: #1d2330; stroke-width: 1.4; }
svg .zero { stroke: #333; stroke-width: 1; stroke-dasharray: 3 2; }
svg line.peak { stroke: #b02a2a; stroke-width: 1.6; stroke-dasharray: 6 3; }
svg text.peak-label { fill: #b02a2a; }
svg .floor { fill: #f3e8c8; }
svg circle.estimate { fill: #1d2330; stroke: #1d2330; stroke-width: 1.5; }
svg circle.estimate.noise { fill: #fff; }
svg text.value.on-dark { fill: #fff; }
svg text.missing { fill: #99a; font-style: italic; }
svg .cell-missing { fill: #eceef2; }
svg .legend-bar { stroke: #999; stroke-width: .5; }
svg circle.point { fill: #4c72b0; stroke: #fff; stroke-width: 1; }
svg circle.point.first { fill: #b02a2a; }
svg line.segment { stroke: #1d2330; stroke-width: 2; opacity: .55; }
svg line.change-point { stroke: #b02a2a; stroke-width: 1.6; stroke-dasharray: 5 3; }
svg text.change-label { font-size: 12px; font-weight: 600; }
svg text.change-label.slower { fill: #b02a2a; }
svg text.change-label.faster { fill: #2a6fb0; }
/* A window too narrow for a table's columns (under 1100 px: half a laptop's screen, a phone)
   stacks each row: one cell a line, its column's title beside it, so that nothing is cut or
   scrolled. Print keeps the table (its own font sizes below). */
@media screen and (max-width: 1100px) {
  table.rows, table.conditions, table.rows tbody, table.conditions tbody,
  table.rows tr, table.conditions tr { display: block; width: auto; }
  table.rows tr.head, table.conditions tr.head { display: none; }
  table.rows tr, table.conditions tr { border: 1px solid #d8dce4; margin: .6em 0;
                                       padding: .2em 0; }
  table.rows td, table.conditions td { display: flex; gap: 1em; border: none;
                                       padding: .1em .6em; text-align: left; }
  table.rows td::before, table.conditions td::before { content: attr(data-label);
    flex: 0 0 11em; font-weight: 600; color: #566; }
  table.conditions caption { display: block; }
}
@media print {
  body { max-width: none; margin: 0; font-size: 12px; }
  table { font-size: 10px; }
  code { font-size: 10px; }
  section, svg, tr { break-inside: avoid; }
}
)css";

// A variant's name as code that may wrap after each underscore (<wbr>), so that a long name
// wraps in its column rather than widening the table.
std::string HtmlCode(const std::string& name) {
  std::string html = "<code>";
  for (char c : E(name)) {
    html += c;
    if (c == '_') html += "<wbr>";
  }
  return html + "</code>";
}

// A row's cells; with `titles`, each cell carries its column's title (data-label), which a
// narrow window shows beside the value when it stacks the row (the stylesheet's @media rule).
std::string Cells(const std::vector<std::string>& cells, const std::vector<std::string>& classes,
                  const std::vector<std::string>& titles = {}) {
  std::string html;
  for (std::size_t i = 0; i < cells.size(); ++i) {
    const std::string& cls = i < classes.size() ? classes[i] : "";
    html += "<td" + (cls.empty() ? "" : " class=\"" + cls + "\"") +
            (i < titles.size() ? " data-label=\"" + E(titles[i]) + "\"" : "") + ">" + cells[i] +
            "</td>";
  }
  return html;
}

std::string Headers(const std::vector<std::string>& titles) {
  std::string html = "<tr class=\"head\">";
  for (const std::string& t : titles) html += "<th>" + E(t) + "</th>";
  return html + "</tr>\n";
}

// The rows shown of a section: a ladder's measured and failed ones (the missing are named under
// its figures), a per-shape section's drawn cells (ShapeView), every item of "all".
std::vector<const v1::ReportRow*> TableRows(const v1::ReportSection& s) {
  std::vector<const v1::ReportRow*> rows;
  if (s.layout() != v1::SECTION_LAYOUT_SHAPES) {
    for (const v1::ReportRow& r : s.rows())
      if (r.status() != v1::ROW_STATUS_MISSING) rows.push_back(&r);
    return rows;
  }
  const ShapeView view = MeasuredCells(s);
  for (int r : view.rungs)
    for (int c : view.columns) rows.push_back(&s.rows(r * s.shapes_size() + c));
  return rows;
}

std::string TflopsInterval(const v1::ReportRow& r) {
  if (!r.has_tflops_interval()) return "-";
  return "[" + Fixed(r.tflops_interval().low(), 1) + ", " + Fixed(r.tflops_interval().high(), 1) +
         "]";
}

// The rows as an HTML table: rungs (what, vs, change) or, for "all", items (rounds, status); the
// TFLOPS interval, TFLOPS per GHz, share of the peak, the cycles change, the clock change and
// source of paired changes, and low-clock columns where the run has them.
std::string RowTable(const v1::ReportSection& s) {
  const bool all = s.layout() == v1::SECTION_LAYOUT_ALL;
  const bool cycles = !all && AnyCycles(s), low = AnyLowClock(s);
  const bool clock = !all && AnyClockChange(s), per_ghz = AnyTflopsPerGhz(s),
             peak = AnyPeakShare(s);
  const std::vector<const v1::ReportRow*> rows = TableRows(s);
  const SoloColumns solo(s);
  // With solo figures the interval shown is theirs (in their cell); the window's is in JSON and
  // CSV, so that the table keeps to the page.
  const bool ci = !solo.solo && std::any_of(rows.begin(), rows.end(),
                                            [](const auto* r) { return r->has_tflops_interval(); });
  std::vector<std::string> titles =
      all ? std::vector<std::string>{"#", "variant", "dtype", "shape"}
          : std::vector<std::string>{"rung", "what", "variant", "dtype", "shape"};
  const auto append = [](std::vector<std::string>* to, const std::vector<std::string>& more) {
    to->insert(to->end(), more.begin(), more.end());
  };
  append(&titles, solo.FrontTitles());
  titles.push_back(solo.WindowTflopsTitle());
  if (ci) titles.push_back(solo.WindowTflopsTitle() + " 95% CI");
  if (per_ghz) titles.push_back("TF/GHz");
  if (peak) titles.push_back("% of peak");
  titles.push_back(solo.ShareTitle());
  append(&titles, solo.ShareTitles());
  if (all) {
    titles.push_back("rounds");
  } else {
    titles.insert(titles.end(), {"vs", "change [95% CI]", "noise"});
  }
  if (cycles) titles.push_back("cycles change [95% CI]");
  if (clock) titles.insert(titles.end(), {"clock change", "source"});
  if (!all) append(&titles, solo.ChangeTitles());
  if (low) titles.push_back("low clock");
  if (all) titles.push_back("status");
  std::string html = "<table class=\"rows\">\n" + Headers(titles);
  for (const v1::ReportRow* row : rows) {
    const v1::ReportRow& r = *row;
    const std::string cls = r.status() == v1::ROW_STATUS_MISSING ? "missing"
                            : Measured(r)                        ? ""
                                                                 : "failed";
    html += "<tr" + (cls.empty() ? std::string() : " class=\"" + cls + "\"") + ">";
    const std::string variant = HtmlCode(r.variant());
    std::vector<std::string> cells, classes;
    if (all) {
      cells = {E(r.rung()), variant, E(r.dtype()), FormatShape(r.shape())};
      classes = {"num", "", "", ""};
    } else {
      cells = {E(r.rung()), E(r.what()), variant, E(r.dtype()), FormatShape(r.shape())};
      classes = {"", "", "", "", ""};
    }
    const auto add = [&](const std::vector<std::string>& more) {
      for (const std::string& c : more) cells.push_back(E(c)), classes.push_back("num");
    };
    add(solo.Front(r));
    cells.push_back(E(TflopsText(r))), classes.push_back("num");
    if (ci) cells.push_back(E(TflopsInterval(r))), classes.push_back("num");
    if (per_ghz) cells.push_back(E(TflopsPerGhzText(r))), classes.push_back("num");
    if (peak) cells.push_back(E(PeakShareText(r))), classes.push_back("num");
    cells.push_back(E(ShareCell(r, solo.solo))), classes.push_back("num");
    add(solo.Shares(r));
    if (all) {
      cells.push_back(std::to_string(r.rounds())), classes.push_back("num");
    } else {
      const bool noise = r.has_change() && r.change().within_noise();
      cells.insert(cells.end(), {E(VsText(r)), E(ChangeCell(r)), noise ? "&#8776;" : ""});
      classes.insert(classes.end(), {"", "num", "noise"});
    }
    if (cycles) cells.push_back(E(CyclesCell(r))), classes.push_back("num");
    if (clock) {
      cells.insert(cells.end(), {E(ClockChangeCell(r)), E(SourceCell(r))});
      classes.insert(classes.end(), {"num", ""});
    }
    if (!all) add(solo.Changes(r));
    if (low) cells.push_back(E(LowClockCell(r))), classes.push_back("num");
    if (all) cells.push_back(E(StatusAndError(r)));
    html += Cells(cells, classes, titles) + "</tr>\n";
  }
  html += "</table>\n";
  if (const std::string legend = solo.Legend(); !legend.empty())
    html += "<p class=\"scope\">" + E(legend) + "</p>\n";
  if (AnyOneRound(s)) html += "<p class=\"scope\">" + E(OneRoundLegends(s)) + "</p>\n";
  return html;
}

// A grid as a table of class `cls` under `caption` (HTML already), the variant column (1) as code.
std::string GridTable(const std::string& cls, const std::string& caption, const Grid& grid) {
  std::string html =
      "<table class=\"" + cls + "\">\n<caption>" + caption + "</caption>\n" + Headers(grid.titles);
  std::vector<std::string> classes;
  for (bool numeric : grid.numeric) classes.push_back(numeric ? "num" : "");
  for (const auto& row : grid.rows) {
    std::vector<std::string> cells;
    for (std::size_t i = 0; i < row.size(); ++i)
      cells.push_back(i == 1 ? HtmlCode(row[i]) : E(row[i]));
    html += "<tr>" + Cells(cells, classes, grid.titles) + "</tr>\n";
  }
  return html + "</table>\n";
}

// Each rung's geometric mean share of the cuBLAS baselines (ShareSummaryGrid), where there is one.
std::string HtmlShareSummaryTable(const v1::ReportSection& s) {
  const Grid grid = ShareSummaryGrid(s);
  if (grid.titles.empty()) return "";
  return GridTable("shares",
                   "Geometric mean of each rung's share of cuBLAS over the shapes (how many in "
                   "brackets)",
                   grid);
}

// How the rows ran and what their counters say (ConditionsGrid), where there is any of it.
std::string HtmlConditionsTable(const v1::ReportSection& s) {
  const Grid grid = ConditionsGrid(s);
  if (grid.titles.empty()) return "";
  std::string html =
      GridTable("conditions",
                "How each row ran: clocks, power, occupancy" +
                    std::string(CountersLegend(s).empty() ? "" : ", hardware counters"),
                grid);
  if (const std::string legend = CountersLegend(s); !legend.empty())
    html += "<p class=\"legend-text\">Counters: " + E(legend) + ".</p>\n";
  return html;
}

std::string Summary(const v1::ReportRun& run) {
  const v1::DeviceIdentity& d = run.device();
  return E(EnumWord(run.state())) + (d.name().empty() ? "" : " on " + E(d.name())) +
         (d.compute_capability().empty() ? "" : ", sm " + E(d.compute_capability())) +
         (run.clock_policy().empty() ? "" : "; clocks " + E(run.clock_policy())) +
         (RegimeText(run).empty() ? "" : "; regime " + E(RegimeText(run)));
}

std::string HtmlHeader(const v1::Report& report) {
  std::string html = "<table class=\"header\">\n";
  for (const auto& [label, value] : HeaderFields(report))
    html += "<tr><th>" + E(label) + "</th><td>" + E(value) + "</td></tr>\n";
  return html + "</table>\n";
}

// The floor the forest plot draws: the paired one where every change of the section is paired,
// since those are judged against it; else the run's floor over rounds.
double ChartFloor(const v1::ReportMethod& method, const v1::ReportSection& s) {
  bool any = false, all_paired = true;
  for (const v1::ReportRow& r : s.rows()) {
    if (!r.has_change()) continue;
    any = true;
    all_paired = all_paired && r.change().paired();
  }
  return any && all_paired ? method.paired_floor() : method.floor();
}

// A section's figures: a ladder's TFLOPS bars and its forest plot of changes; a per-shape
// section's two heatmaps. What they leave out is named under them.
std::string Figures(const v1::Report& report, const v1::ReportSection& s) {
  std::string figures, left_out;
  if (s.layout() == v1::SECTION_LAYOUT_LADDER) {
    figures = BarChart(s) + ChangeChart(s, ChartFloor(report.method(), s));
    left_out = NotDrawn(s);
  } else if (s.layout() == v1::SECTION_LAYOUT_SHAPES) {
    const ShapeView view = MeasuredCells(s);
    figures = TflopsHeatmap(s, view) + ChangeHeatmap(s, view);
    left_out = LeftOutLine(view);
  }
  figures += RooflineChart(s);
  std::string html;
  if (!figures.empty()) html += "<div class=\"figures\">\n" + figures + "</div>\n";
  if (!left_out.empty()) html += "<p class=\"left-out\">" + E(left_out) + "</p>\n";
  return html;
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
          Summary(report.run()) + "</p>\n" + HtmlHeader(report);
  // How every figure was computed is the last section: the first page holds the figures.
  html +=
      "<p class=\"scope\">" + E(kMethodPointer) + " (<a href=\"#methods\">its section</a>)</p>\n";
  if (const std::string line = UnmeasuredLine(report); !line.empty())
    html += "<p class=\"unmeasured\">" + E(line) + "</p>\n";
  int number = 0;
  for (const v1::ReportSection& s : report.sections()) {
    if (!Drawn(report, s)) continue;
    html += "<section id=\"" + E(s.id()) + "\">\n<h2>" + std::to_string(++number) + ". " +
            E(s.title()) + "</h2>\n<p class=\"scope\">" + E(s.scope()) + "</p>\n";
    html += Figures(report, s) + RowTable(s) + HtmlShareSummaryTable(s);
    if (const auto apart = RoundsApartLines(s, &HtmlPlain); !apart.empty()) {
      html += "<p class=\"scope\">" + E(apart[0]) + "</p>\n<ul class=\"notes\">\n";
      for (std::size_t i = 1; i < apart.size(); ++i) html += "<li>" + E(apart[i]) + "</li>\n";
      html += "</ul>\n";
    }
    html += HtmlConditionsTable(s);
    if (!s.notes().empty()) {
      html += "<ul class=\"notes\">\n";
      for (const std::string& note : s.notes()) html += "<li>" + E(note) + "</li>\n";
      html += "</ul>\n";
    }
    html += "</section>\n";
  }
  html += "<section id=\"methods\">\n<h2>How the figures were computed</h2>\n<p>" +
          E(MethodText(report)) + "</p>\n</section>\n";
  return html + "</body>\n</html>\n";
}

std::string RenderHistoryHtml(const v1::HistoryResponse& history, const std::string& what) {
  std::string html =
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      "<title>History: " +
      E(what) + "</title>\n<style>" + kStyle + "</style>\n</head>\n<body>\n";
  html += "<h1>History: " + E(what) + "</h1>\n<p class=\"summary\">" +
          std::to_string(history.series_size()) +
          " series (one per hardware fingerprint, variant, dtype, shape and regime); change "
          "points by E-divisive means, a permutation test at p &lt; " +
          E(FormatSignificant(history.significance(), 2)) + ", none smaller than " +
          E(Percent(history.min_relative_change(), 1)) + "</p>\n";
  if (history.series().empty()) html += "<p class=\"unmeasured\">No ok measurements match.</p>\n";
  int number = 0;
  for (const v1::Series& s : history.series()) {
    ++number;
    const std::string shape = std::to_string(s.shape().m()) + "x" + std::to_string(s.shape().n()) +
                              "x" + std::to_string(s.shape().k());
    html += "<section id=\"series-" + std::to_string(number) + "\">\n<h2>" +
            std::to_string(number) + ". " + HtmlCode(s.variant()) + " " + E(s.dtype()) + " " +
            E(shape) + " " + E(EnumWord(s.regime())) +
            (s.l2() == v1::L2_MODE_UNSPECIFIED ? "" : " L2 " + E(EnumWord(s.l2()))) +
            "</h2>\n<p class=\"scope\">on " + E(s.device_name().empty() ? "?" : s.device_name()) +
            ", fingerprint " +
            E(s.hardware_fingerprint().empty() ? "none (stored before v15)"
                                               : s.hardware_fingerprint()) +
            "</p>\n";
    html += "<div class=\"figures\">\n" + HistoryChart(s, "history-" + std::to_string(number)) +
            "</div>\n";
    if (s.newest().candidate())
      html += "<p class=\"notes\">The newest run is " +
              E(Percent(s.newest().relative_change(), 1)) + " against the " +
              std::to_string(s.newest().baseline_points()) + " before it (beyond " +
              E(Percent(s.newest().threshold(), 1)) +
              "): a candidate change, to confirm by a rerun.</p>\n";
    const std::vector<std::string> history_titles = {"#",     "run",    "date",  "median ms",
                                                     "noise", "TFLOPS", "change"};
    html += "<table class=\"rows\">\n" + Headers(history_titles);
    int next_change = 0;
    for (int i = 0; i < s.points_size(); ++i) {
      const v1::HistoryPoint& p = s.points(i);
      std::string change;
      if (p.change_point() && next_change < s.change_points_size()) {
        const v1::ChangePoint& c = s.change_points(next_change++);
        change = std::string(c.relative_change() > 0 ? "▲ slower " : "▼ faster ") +
                 Percent(c.relative_change(), 1) + " (p " + FormatSignificant(c.p_value(), 2) + ")";
      }
      html += std::string(p.change_point() ? "<tr class=\"change\">" : "<tr>") +
              Cells({std::to_string(i + 1), std::to_string(p.run_id()),
                     E(FormatTimeMs(p.time_ms())), E(FormatSignificant(p.median_ms(), 4)),
                     E(Percent(p.noise(), 2)), E(FormatFixed(p.tflops(), 1)), E(change)},
                    {"num", "num", "", "num", "num", "num", ""}, history_titles) +
              "</tr>\n";
    }
    html += "</table>\n</section>\n";
  }
  return html + "</body>\n</html>\n";
}

}  // namespace ablation::client::report
