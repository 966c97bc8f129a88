// The report's figures (charts.h, svg.h) and the paper-ready page around them: axes with units
// and round ticks, whiskers from the intervals, each change beside its own comparison, heatmaps
// whose colour is the value they print, with legends; only measured sections drawn.
#include "client/report/charts.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <regex>
#include <set>

#include "client/report/report.h"
#include "client/report/svg.h"
#include "tests/client/support/served_catalog.h"

namespace ablation::client::report {
namespace {

namespace v1 = ::ablation::v1;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

// `rounds` rounds of an item; each round's samples `ms` times a small wiggle and a drift.
void Add(v1::GetRunResponse& run, const std::string& variant, std::int64_t m, std::int64_t k,
         double ms, int rounds = 3) {
  for (int r = 0; r < rounds; ++r) {
    v1::Measurement* x = run.add_measurements();
    x->set_round(r);
    x->set_variant(variant);
    x->set_dtype("bf16");
    x->mutable_shape()->set_m(m);
    x->mutable_shape()->set_n(m);
    x->mutable_shape()->set_k(k);
    x->set_status(v1::MEASUREMENT_STATUS_OK);
    const double round_ms = ms * (1 + 0.004 * r);
    for (int i = 0; i < 30; ++i) x->add_sample_ms(round_ms * (1 + 0.002 * std::sin(i * 1.7)));
    x->mutable_stats()->set_median_ms(round_ms);
    x->mutable_stats()->set_samples(30);
    x->set_tflops(2.0 * double(m) * double(m) * double(k) / (round_ms * 1e-3) / 1e12);
  }
}

// Ladder B at 4096^3 and at K = 256, as `sweep --preset ladder-b --shape 4096 --shape
// 4096x4096x256` gives it: one of the shape section's two M = N and four of its five K.
v1::GetRunResponse LadderBRun() {
  v1::GetRunResponse run;
  run.mutable_run()->set_id(9);
  run.mutable_run()->set_state(v1::RUN_STATE_SUCCEEDED);
  run.mutable_run()->set_rounds(3);
  run.mutable_run()->set_started_at_ms(1'764'590'400'000);  // 2025-12-01T12:00:00Z
  run.mutable_run()->set_finished_at_ms(1'764'590'520'000);
  run.mutable_run()->add_tags("nightly");
  v1::DeviceIdentity& d = *run.mutable_run()->mutable_device();
  d.set_name("NVIDIA H200");
  d.set_compute_capability("9.0");
  d.set_driver_version("580.159.04");
  d.set_cublas_version("13.1.0");
  for (std::int64_t k : {4096, 256}) {
    const double f = k == 4096 ? 1 : 0.08;
    Add(run, "cublas_bf16", 4096, k, 0.184 * f);
    Add(run, "abl_L0_R1_bl0_s1_sw1", 4096, k, 0.70 * f);
    Add(run, "abl_L1_R1_bl0_s1_sw1", 4096, k, 0.72 * f);  // B1 slower than B0
    Add(run, "abl_L0_R1_bl0_s2_sw1", 4096, k, 0.58 * f);
    Add(run, "abl_L1_R1_bl0_s2_sw1", 4096, k, 0.46 * f);
    Add(run, "abl_L1_R1_bl0_s3_sw1", 4096, k, 0.427 * f);
    Add(run, "abl_L1_R1_bl0_s4_sw1", 4096, k, 0.427 * f);  // B5 = B4: within noise
  }
  return run;
}

v1::Report Build(const v1::GetRunResponse& run) {
  static const auto* presets = new std::vector<v1::Preset>(testing::ServedPresets());
  static const auto* variants = new std::vector<v1::Variant>(testing::ServedVariants());
  return BuildReport(run, *presets, *variants);
}

const v1::ReportSection& Section(const v1::Report& r, const std::string& id) {
  for (const auto& s : r.sections())
    if (s.id() == id) return s;
  throw std::runtime_error("no section " + id);
}

int Count(const std::string& text, const std::string& what) {
  int n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// The SVG element that `id` opens, to its end.
std::string Svg(const std::string& html, const std::string& id) {
  const std::size_t at = html.find("id=\"" + id + "\"");
  if (at == std::string::npos) return "";
  const std::size_t start = html.rfind("<svg", at);
  return html.substr(start, html.find("</svg>", at) + 6 - start);
}

TEST(Svg, TicksAreRoundAndCoverTheRange) {
  double lo = 0, hi = 343.6;
  EXPECT_THAT(svg::Ticks(&lo, &hi, 5), ElementsAre(0, 50, 100, 150, 200, 250, 300, 350));
  EXPECT_EQ(hi, 350);
  lo = -0.031, hi = 0.262;
  const std::vector<double> t = svg::Ticks(&lo, &hi, 6);
  EXPECT_DOUBLE_EQ(t.front(), -0.05);
  EXPECT_DOUBLE_EQ(t.back(), 0.3);
  EXPECT_NE(std::find(t.begin(), t.end(), 0.0), t.end());  // 0 is a tick
}

TEST(Svg, TheDivergingScaleIsWhiteAtZeroRedSlowerBlueFaster) {
  EXPECT_EQ(svg::Diverging(0), "#f7f7f7");
  EXPECT_EQ(svg::Diverging(-1), "#b2182b");
  EXPECT_EQ(svg::Diverging(1), "#2166ac");
  EXPECT_EQ(svg::Diverging(7), "#2166ac");  // clamped
  EXPECT_EQ(svg::Sequential(0), "#f7fbff");
  EXPECT_TRUE(svg::Dark(svg::Sequential(1)));
  EXPECT_FALSE(svg::Dark(svg::Sequential(0)));
}

TEST(Charts, BarsHaveAxesUnitsAndWhiskersFromTheIntervals) {
  const v1::Report report = Build(LadderBRun());
  const v1::ReportSection& b = Section(report, "ladder-b");
  const v1::ReportRow& b4 = b.rows(4);
  ASSERT_EQ(b4.rung(), "B4");
  ASSERT_TRUE(b4.has_tflops_interval());
  EXPECT_LT(b4.tflops_interval().low(), b4.tflops());
  EXPECT_GT(b4.tflops_interval().high(), b4.tflops());
  const std::string chart = BarChart(b);
  EXPECT_THAT(chart, HasSubstr("<g class=\"axis x\">"));
  EXPECT_THAT(chart, HasSubstr("<g class=\"axis y\">"));
  EXPECT_THAT(chart, HasSubstr(">TFLOPS</text>"));  // the unit, as the axis title
  EXPECT_THAT(chart, HasSubstr("class=\"tick-label\""));
  EXPECT_THAT(chart, HasSubstr(">0</text>"));
  // A whisker per measured row (B6 is not measured): 7 bars, 7 whiskers of 3 lines each.
  EXPECT_EQ(Count(chart, "<rect class=\"bar"), 7);
  EXPECT_EQ(Count(chart, "<g class=\"whisker\">"), 7);
  EXPECT_THAT(chart, Not(HasSubstr("B6")));
}

TEST(Charts, BarsHaveALegendAndThePeakAtTheMeasuredClock) {
  v1::GetRunResponse run = LadderBRun();
  // The rows' clock-adjusted peak (server/core/gpu/peak.h): 900 TFLOPS for most, one at 880.
  for (int i = 0; i < run.measurements_size(); ++i)
    run.mutable_measurements(i)->set_peak_tflops(i == 0 ? 880 : 900);
  const v1::Report report = Build(run);
  const v1::ReportSection& b = Section(report, "ladder-b");
  EXPECT_DOUBLE_EQ(b.rows(0).peak_tflops(), 900);  // the median over the item's rounds
  const std::string chart = BarChart(b);
  EXPECT_THAT(chart, HasSubstr("<g class=\"legend\">"));
  EXPECT_THAT(chart, HasSubstr(">rung</text>"));
  EXPECT_THAT(chart, HasSubstr("<rect class=\"swatch bar cublas\""));
  EXPECT_THAT(chart, HasSubstr(">cuBLAS (reference)</text>"));
  EXPECT_THAT(chart, HasSubstr(">dense peak at the measured clock</text>"));
  EXPECT_THAT(chart, HasSubstr(">peak 900</text>"));
  EXPECT_EQ(Count(chart, "<line class=\"peak\""), 2);  // the line and its legend's sample
  EXPECT_THAT(chart, HasSubstr(">1000</text>"));       // the axis reaches past the peak
  EXPECT_EQ(Count(chart, "<rect class=\"bar"), 7);     // the legend's swatches are no bars
  // Rows without a peak (an architecture the table lacks): no line, no legend entry for it.
  const v1::Report plain = Build(LadderBRun());
  const std::string without = BarChart(Section(plain, "ladder-b"));
  EXPECT_THAT(without, Not(HasSubstr("class=\"peak\"")));
  EXPECT_THAT(without, HasSubstr(">cuBLAS (reference)</text>"));
}

TEST(Svg, TickLabelsThatWouldRunTogetherAreThinnedKeepingZero) {
  // 21 ticks of "+0.05%"-wide labels over 300 px: about 15 px apart, far less than a label.
  std::vector<double> ticks;
  for (int i = -10; i <= 10; ++i) ticks.push_back(i * 0.0005);
  const svg::Scale x{-0.005, 0.005, 0, 300};
  const std::string axis = svg::XAxis(x, ticks, 100, 0, "change", [](double v) {
    return std::string(v > 0 ? "+" : "") + std::to_string(int(std::lround(v * 1e4))) + "bp";
  });
  const int labels = Count(axis, "class=\"tick-label\"");
  EXPECT_GE(labels, 3);
  EXPECT_LE(labels, 7);
  EXPECT_THAT(axis, HasSubstr(">0bp</text>"));
  // Labelled ticks at least a label's width apart: their x positions.
  std::vector<double> xs;
  const std::regex label("<text class=\"tick-label\" x=\"([-0-9.]+)\"");
  for (auto it = std::sregex_iterator(axis.begin(), axis.end(), label);
       it != std::sregex_iterator(); ++it)
    xs.push_back(std::stod((*it)[1]));
  for (std::size_t i = 1; i < xs.size(); ++i) EXPECT_GE(xs[i] - xs[i - 1], 5 * 7.5) << axis;
  // Few ticks far apart keep every label.
  EXPECT_EQ(
      Count(svg::XAxis(x, {-0.005, 0, 0.005}, 100, 0, "t", [](double) { return std::string("x"); }),
            "class=\"tick-label\""),
      3);
}

TEST(Charts, TheForestPlotsTickLabelsAreDistinctAndApart) {
  // Changes of a few hundredths of a percent to ten percent: every label names its own value
  // (none rounded into its neighbour's), 0 among them, at least a label's width apart.
  for (double scale : {0.0003, 0.004, 0.05}) {
    v1::ReportSection s;
    s.set_id("ladder");
    for (int i = 0; i < 3; ++i) {
      v1::ReportRow* r = s.add_rows();
      r->set_rung("T" + std::to_string(i));
      r->set_status(v1::ROW_STATUS_OK);
      r->set_tflops(100);
      r->set_vs("T0");
      r->mutable_change()->set_estimate(scale * i);
      r->mutable_change()->mutable_interval()->set_low(scale * (i - 0.7));
      r->mutable_change()->mutable_interval()->set_high(scale * (i + 0.7));
    }
    const std::string forest = ChangeChart(s, 0);
    std::vector<std::string> labels;
    std::vector<double> xs;
    const std::regex tick("<text class=\"tick-label\" x=\"([-0-9.]+)\"[^>]*>([^<]*)</text>");
    for (auto it = std::sregex_iterator(forest.begin(), forest.end(), tick);
         it != std::sregex_iterator(); ++it) {
      xs.push_back(std::stod((*it)[1]));
      labels.push_back((*it)[2]);
    }
    ASSERT_GE(labels.size(), 3u) << forest;
    EXPECT_EQ(std::set<std::string>(labels.begin(), labels.end()).size(), labels.size())
        << scale << ": " << forest;
    EXPECT_NE(std::find(labels.begin(), labels.end(), "0%"), labels.end()) << forest;
    for (std::size_t i = 1; i < xs.size(); ++i)
      EXPECT_GE(xs[i] - xs[i - 1], labels[i].size() * 7.5) << scale << ": " << forest;
  }
}

TEST(Charts, EachChangeSitsBesideItsOwnComparison) {
  const v1::Report report = Build(LadderBRun());
  const std::string forest = ChangeChart(Section(report, "ladder-b"), report.method().floor());
  // One row per compared rung, labelled with what it is compared with; B2 is against B0.
  for (const char* label : {"B1 vs B0", "B2 vs B0", "B3 vs B2", "B4 vs B3", "B5 vs B4"})
    EXPECT_THAT(forest, HasSubstr(">" + std::string(label) + "</text>")) << label;
  // The label, the estimate and the change text share one row (the same y).
  const std::size_t at = forest.find(">B2 vs B0</text>");
  ASSERT_NE(at, std::string::npos);
  const std::size_t y_at = forest.rfind("y=\"", at);
  const std::string label_y = forest.substr(y_at + 3, forest.find('"', y_at + 3) - y_at - 3);
  const std::string b2_change = ChangeText(Section(report, "ladder-b").rows(2).change());
  const std::size_t text_at = forest.find(">" + b2_change + "</text>");
  ASSERT_NE(text_at, std::string::npos) << forest;
  const std::size_t text_y = forest.rfind("y=\"", text_at);
  EXPECT_EQ(forest.substr(text_y + 3, forest.find('"', text_y + 3) - text_y - 3), label_y);
  EXPECT_THAT(forest, HasSubstr("class=\"zero\""));
  EXPECT_THAT(forest, HasSubstr("class=\"estimate noise\""));  // B5 = B4: hollow
  EXPECT_THAT(forest, HasSubstr("class=\"axis-label\""));
}

TEST(Charts, HeatmapColourIsTheValueItPrintsAndOnlyMeasuredCellsAreDrawn) {
  const v1::Report report = Build(LadderBRun());
  const v1::ReportSection& s = Section(report, "shapes");
  ASSERT_EQ(s.shapes_size(), 10);
  const ShapeView view = MeasuredCells(s);
  EXPECT_EQ(view.columns.size(), 2u);  // K = 256 and 4096 at M = N = 4096
  EXPECT_THAT(view.rungs_left, ElementsAre("B6", "H12"));
  EXPECT_EQ(LeftOutLine(view),
            "Not measured in this run: at 512x512x256, 512x512x512, 512x512x1024, 512x512x4096, "
            "512x512x8192, 4096x4096x512, 4096x4096x1024, 4096x4096x8192; B6, H12.");
  const std::string tflops = TflopsHeatmap(s, view);
  EXPECT_EQ(Count(tflops, "class=\"cell\""), 14);  // 7 rungs x 2 shapes, none missing
  EXPECT_EQ(Count(tflops, "cell-missing"), 0);
  // Each cell's fill is its TFLOPS on the scale, and it prints that TFLOPS.
  double max = 0;
  for (int r : view.rungs)
    for (int c : view.columns) max = std::max(max, s.rows(r * 10 + c).tflops());
  const v1::ReportRow& cublas = s.rows(8 * 10 + view.columns[1]);  // after B0..B6 and H8
  ASSERT_EQ(cublas.variant(), "cublas_bf16");
  const std::string cell = "fill=\"" + svg::Sequential(cublas.tflops() / max) + "\"><title>" +
                           "cublas_bf16 4096x4096x4096: " + Fixed(cublas.tflops(), 1) + " TFLOPS";
  EXPECT_THAT(tflops, HasSubstr(cell));
  EXPECT_THAT(tflops, HasSubstr("<g class=\"legend\">"));
  EXPECT_THAT(tflops, HasSubstr(">TFLOPS</text>"));
  EXPECT_THAT(tflops, Not(HasSubstr("share of cuBLAS")));

  const std::string change = ChangeHeatmap(s, view);
  EXPECT_THAT(change, HasSubstr("id=\"heatmap-change-shapes\""));
  EXPECT_THAT(change, HasSubstr(">B4 vs B3</text>"));
  EXPECT_THAT(change, Not(HasSubstr(">B0 vs")));  // B0 and cuBLAS are compared with nothing
  EXPECT_THAT(change, HasSubstr(">slower ← change → faster</text>"));
  // B1 is slower than B0: red side; B3 faster than B2: blue side; each printed as it is coloured.
  const v1::ReportRow& b1 = s.rows(1 * 10 + view.columns[1]);
  ASSERT_LT(b1.change().estimate(), 0);
  EXPECT_THAT(change, HasSubstr(">" + SignedPercent(b1.change().estimate()) + "%</text>"));
  const std::string b1_fill = change.substr(change.find("B1 vs B0 at 4096x4096x4096") - 200, 200);
  std::smatch m;
  ASSERT_TRUE(std::regex_search(b1_fill, m, std::regex("fill=\"#([0-9a-f]{2})([0-9a-f]{2})")));
  EXPECT_GT(std::stoi(m[1], nullptr, 16), std::stoi(m[2], nullptr, 16));  // more red than green
}

TEST(Page, OnlyMeasuredSectionsAreDrawnTheRestListedInOneLine) {
  const v1::Report report = Build(LadderBRun());
  const std::string html = RenderReportHtml(report);
  EXPECT_THAT(
      html,
      HasSubstr(
          "<p class=\"unmeasured\">Not measured in this run, so not shown: "
          "Pipelining: baseline vs LDG-register vs cp.async double buffer "
          "(`ablation-client sweep --preset pipelining`), "
          "Hopper ladder: mma.sync to TMA + wgmma, one change per rung (`ablation-client sweep "
          "--preset ladder-h`), FP8 ladder: e4m3 wgmma, one change per rung, against cuBLASLt "
          "fp8 (`ablation-client sweep --preset ladder-f8`), Serving shapes: decode and prefill "
          "GEMMs (TFLOPS) (`ablation-client sweep --preset serving`).</p>"));
  EXPECT_THAT(html, HasSubstr("<section id=\"ladder-a\">"));  // A3 is ladder B's B4
  EXPECT_THAT(html, Not(HasSubstr("<section id=\"pipelining\">")));
  EXPECT_THAT(html, HasSubstr("<section id=\"ladder-b\">"));
  // 14 drawn cells, not 80 with 66 of them "missing".
  EXPECT_EQ(Count(Svg(html, "heatmap-shapes"), "cell-missing"), 0);
  EXPECT_THAT(html, HasSubstr("<p class=\"left-out\">Not measured in this run: B6.</p>"));
  EXPECT_THAT(html, Not(HasSubstr("<tr class=\"missing\">")));  // named, not tabled
  const std::string md = RenderReportMarkdown(report);
  EXPECT_THAT(md, HasSubstr("Not measured in this run, so not shown: Pipelining"));
  EXPECT_THAT(md, HasSubstr("## 5. All measurements"));
  EXPECT_THAT(md, Not(HasSubstr("## 6.")));
  EXPECT_THAT(md, HasSubstr("| rung | 4096x4096x256 | 4096x4096x4096 |\n"));
}

TEST(Page, TheHeaderSaysWhenWhereAndWithWhat) {
  const std::string html = RenderReportHtml(Build(LadderBRun()));
  for (const char* row :
       {"<tr><th>date</th><td>2025-12-01T12:00:00Z, 120 s</td></tr>",
        "<tr><th>device</th><td>NVIDIA H200, sm 9.0</td></tr>",
        "<tr><th>driver</th><td>580.159.04</td></tr>", "<tr><th>cuBLAS</th><td>13.1.0</td></tr>",
        "<tr><th>tags</th><td>nightly</td></tr>", "<tr><th>rounds</th><td>3</td></tr>"})
    EXPECT_THAT(html, HasSubstr(row));
  EXPECT_THAT(html, HasSubstr("<th>TFLOPS 95% CI</th>"));
}

// A series of 10 runs, 10% slower from the sixth: its chart has a point per run, a segment
// line per side of the change, and the change point marked before the sixth point with its
// change and p-value; the page around it has the chart and a table row marked per change.
v1::Series TenNights() {
  v1::Series s;
  s.set_variant("abl_L1_R1_bl0_s3_sw1");
  s.set_dtype("bf16");
  s.mutable_shape()->set_m(4096);
  s.mutable_shape()->set_n(4096);
  s.mutable_shape()->set_k(4096);
  s.set_regime(v1::REGIME_BURST);
  s.set_device_name("NVIDIA H200");
  s.set_hardware_fingerprint("0123456789abcdef");
  for (int i = 0; i < 10; ++i) {
    v1::HistoryPoint* p = s.add_points();
    p->set_run_id(100 + i);
    p->set_time_ms(1764633600000 + i * 86400000ll);
    p->set_median_ms((i < 5 ? 1.0 : 1.1) * (1 + 0.002 * std::sin(i)));
    p->set_tflops(137.4 / p->median_ms());
    p->set_noise(0.004);
    p->set_change_point(i == 5);
  }
  v1::ChangePoint* c = s.add_change_points();
  c->set_index(5);
  c->set_before_median_ms(1.0);
  c->set_after_median_ms(1.1);
  c->set_relative_change(0.1);
  c->set_p_value(0.002);
  return s;
}

TEST(HistoryChart, DrawsEveryRunAndMarksTheChangePoint) {
  const std::string svg = HistoryChart(TenNights(), "history-1");
  EXPECT_THAT(svg, HasSubstr("<svg class=\"chart history\" id=\"history-1\""));
  EXPECT_EQ(Count(svg, "<circle class=\"point"), 10);
  EXPECT_EQ(Count(svg, "<circle class=\"point first\""), 1);  // the change's first point
  EXPECT_EQ(Count(svg, "<line class=\"segment\""), 2);
  EXPECT_EQ(Count(svg, "<g class=\"change-point\" data-index=\"5\">"), 1);
  EXPECT_THAT(svg, HasSubstr("▲ slower +10% (p 0.0020)"));
  EXPECT_THAT(svg, HasSubstr("change point at run 6 (run id 105)"));
  EXPECT_THAT(svg, HasSubstr("run 105, 2025-12-07T00:00:00Z"));
  EXPECT_THAT(svg, HasSubstr(">median ms</text>"));
  EXPECT_THAT(svg, HasSubstr(">run id, oldest first</text>"));
  // The x axis names runs by id (100 to 109), not by place (1 to 10).
  EXPECT_THAT(svg, HasSubstr("text-anchor=\"middle\">100</text>"));
  EXPECT_THAT(svg, HasSubstr("text-anchor=\"middle\">109</text>"));
  EXPECT_THAT(svg, Not(HasSubstr("text-anchor=\"middle\">1</text>")));
  // The title on two lines: the series, then how to read it.
  EXPECT_THAT(svg, HasSubstr("<text class=\"chart-title\" x=\"8\" y=\"18\">abl_L1_R1_bl0_s3_sw1 "
                             "bf16 4096x4096x4096</text>"));
  EXPECT_THAT(svg, HasSubstr(">median time per run; lines: segment means; dashed: change points<"));
  // The dashed line sits between the fifth and the sixth point.
  const std::regex dashed("<line class=\"change-point\" x1=\"([0-9.]+)\"");
  const std::regex point("<circle class=\"point[^\"]*\" cx=\"([0-9.]+)\"");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(svg, m, dashed));
  const double x_change = std::stod(m[1]);
  std::vector<double> xs;
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), point); it != std::sregex_iterator();
       ++it)
    xs.push_back(std::stod((*it)[1]));
  ASSERT_EQ(xs.size(), 10u);
  EXPECT_GT(x_change, xs[4]);
  EXPECT_LT(x_change, xs[5]);
  // Within the drawing: no coordinate past the viewBox.
  EXPECT_LT(*std::max_element(xs.begin(), xs.end()), 880);

  v1::Series none = TenNights();
  none.clear_points();
  EXPECT_EQ(HistoryChart(none, "empty"), "");
}

TEST(HistoryChart, ThePageHasTheChartAndATableRowPerRun) {
  v1::HistoryResponse h;
  *h.add_series() = TenNights();
  h.set_min_relative_change(0.01);
  h.set_significance(0.05);
  const std::string html = RenderHistoryHtml(h, "L1_R1_s3, tag nightly");
  EXPECT_THAT(html, HasSubstr("<title>History: L1_R1_s3, tag nightly</title>"));
  EXPECT_THAT(html, HasSubstr("id=\"history-1\""));
  EXPECT_EQ(Count(html, "<tr class=\"change\">"), 1);
  EXPECT_EQ(Count(html, "<tr"), 11);  // a heading and 10 runs
  EXPECT_THAT(html, HasSubstr("fingerprint 0123456789abcdef"));
  EXPECT_THAT(html, Not(HasSubstr("<script")));
  EXPECT_THAT(RenderHistoryHtml(v1::HistoryResponse(), "x"), HasSubstr("No ok measurements match"));
}

}  // namespace
}  // namespace ablation::client::report
