// Presets, sweep, report and compare end to end: the real daemon and client over gRPC with a real
// SQLite file and the fake worker; the HTML report rendered by headless Chromium.
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gmock/gmock.h>
#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>
#include <gtest/gtest.h>

#include "client/report/report.h"
#include "tests/e2e/harness.h"
#include "tests/e2e/png.h"

namespace ablation::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

bool IsJson(const std::string& text) {
  google::protobuf::Struct parsed;
  return google::protobuf::util::JsonStringToMessage(text, &parsed).ok();
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class ReportE2E : public ::testing::Test {
 protected:
  void StartDaemon(std::vector<std::string> extra_args = {}, std::string preset_file = "",
                   std::map<std::string, std::string> env = {}) {
    dir_ = MakeTempDir();
    ASSERT_FALSE(dir_.empty());
    daemon_ = std::make_unique<Daemon>(dir_, FAKE_WORKER_PATH, std::move(env));
    if (!preset_file.empty()) {
      std::ofstream(dir_ + "/presets.toml") << preset_file;
      extra_args.push_back("--presets");
      extra_args.push_back(dir_ + "/presets.toml");
    }
    daemon_->set_extra_args(extra_args);
    start_error_ = daemon_->Start();
  }
  void TearDown() override {
    if (daemon_) daemon_->Stop(SIGTERM);
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }
  CommandResult Client(std::vector<std::string> args) { return daemon_->Client(std::move(args)); }

  std::string dir_;
  std::string start_error_;
  std::unique_ptr<Daemon> daemon_;
};

TEST_F(ReportE2E, PresetsSweepReportCompare) {
  StartDaemon();
  ASSERT_EQ(start_error_, "");

  auto presets = Client({"presets"});
  ASSERT_EQ(presets.exit_code, 0) << presets.err;
  for (const char* name : {"ladder-a", "ladder-b", "swizzle", "all-ablation", "pipelining", "arch",
                           "shapes", "nightly"})
    EXPECT_THAT(presets.out, HasSubstr(name));
  auto ladder_b = Client({"presets", "ladder-b"});
  ASSERT_EQ(ladder_b.exit_code, 0) << ladder_b.err;
  EXPECT_THAT(ladder_b.out, HasSubstr("abl_L1_R1_bl0_s4_sw1_rb1"));
  EXPECT_THAT(ladder_b.out, HasSubstr("planned      24 measurements"));
  auto unknown = Client({"presets", "ladder-z"});
  EXPECT_EQ(unknown.exit_code, 65);  // the daemon refused the input
  EXPECT_THAT(unknown.err, HasSubstr("NOT_FOUND"));

  // Two sweeps of the same preset: stderr is not a terminal, so progress comes as plain lines.
  auto first = Client({"sweep", "--preset", "ladder-a", "--tag", "nightly"});
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_THAT(first.err, HasSubstr("[12/12]"));
  EXPECT_THAT(first.err, HasSubstr("ETA"));
  EXPECT_THAT(first.err, Not(HasSubstr("\r")));
  EXPECT_THAT(first.out, HasSubstr("abl_L1_R1_bl0_s3_sw1"));
  EXPECT_THAT(first.out, HasSubstr("cublas_bf16"));
  auto second = Client({"sweep", "--preset", "ladder-a"});
  ASSERT_EQ(second.exit_code, 0) << second.err;

  auto runs = Client({"runs", "--tag", "nightly"});
  EXPECT_THAT(runs.out, HasSubstr("succeeded"));

  auto md = Client({"report", "1", "--format", "md"});
  ASSERT_EQ(md.exit_code, 0) << md.err;
  EXPECT_THAT(md.out, HasSubstr("# Ablation report: run 1"));
  EXPECT_THAT(md.out, HasSubstr("## 1. Ladder A"));
  EXPECT_THAT(md.out,
              HasSubstr("| A3 | ldmatrix | `abl_L1_R1_bl0_s3_sw1` | bf16 | 100.0 [100.0, 100.0] "
                        "@ 1980 MHz | - | 100.0 | 50.5 | 9.3% | 100.0% | A1 | +0.0% [+0.0, "
                        "+0.0] paired |"));
  // The run's regime beside its clocks, and the fake's 100 TFLOPS per its 1.98 GHz.
  EXPECT_THAT(md.out, HasSubstr("clocks observe; regime sustained, paired"));
  // A sweep of ladder-a draws ladder A: ladder B and the shapes' heatmap (ladder B across
  // shapes), which share two of its rows, are named in one line, not drawn half empty.
  EXPECT_THAT(md.out, Not(HasSubstr(". Ladder B")));
  EXPECT_THAT(md.out, Not(HasSubstr(". Shape sensitivity")));
  EXPECT_THAT(md.out, HasSubstr("This run swept the preset ladder-a; not drawn, as it measured "
                                "them only through the rows they share with it: "));
  EXPECT_THAT(md.out, HasSubstr("Ladder B: global -> smem, sync load vs cp.async, stages (2 of 8 "
                                "rows)"));
  // Pipelining, which the run did not measure, is named in one line and not drawn.
  EXPECT_THAT(md.out, HasSubstr("Not measured in this run, so not shown: Pipelining"));
  EXPECT_THAT(md.out, Not(HasSubstr("## 5. Pipelining")));
  EXPECT_THAT(md.out, HasSubstr("Reading notes"));

  auto json = Client({"report", "--format", "json"});  // latest: run 2
  ASSERT_EQ(json.exit_code, 0) << json.err;
  EXPECT_TRUE(IsJson(json.out)) << json.out;
  EXPECT_THAT(json.out, HasSubstr("\"kind\": \"report\""));
  EXPECT_THAT(json.out, HasSubstr("\"id\":2"));
  EXPECT_THAT(json.out, HasSubstr("\"id\":\"ladder-a\""));
  EXPECT_THAT(json.out, HasSubstr("\"id\":\"pipelining\""));
  auto global_json = Client({"--format", "json", "report", "1"});
  EXPECT_TRUE(IsJson(global_json.out)) << global_json.out << global_json.err;
  auto csv = Client({"report", "--format", "csv"});
  EXPECT_THAT(csv.out, HasSubstr("table,label,what,variant"));

  auto compare = Client({"compare", "1", "2"});
  EXPECT_EQ(compare.exit_code, 0) << compare.out << compare.err;
  EXPECT_THAT(compare.err, HasSubstr("4 compared, 0 significant slowdowns beyond 3%"));
  EXPECT_THAT(compare.out, HasSubstr("same (within noise)"));
  auto compare_json = Client({"compare", "1", "latest", "--threshold", "5%", "--format", "json"});
  EXPECT_EQ(compare_json.exit_code, 0) << compare_json.err;
  EXPECT_TRUE(IsJson(compare_json.out)) << compare_json.out;
  EXPECT_THAT(compare_json.out, HasSubstr("\"regressions\":0"));
  auto bad_threshold = Client({"compare", "1", "2", "--threshold", "lots"});
  EXPECT_EQ(bad_threshold.exit_code, 64);  // usage: refused by the client
  auto no_run = Client({"compare", "1", "99"});
  EXPECT_EQ(no_run.exit_code, 65);  // the daemon refused the input
  EXPECT_THAT(no_run.err, HasSubstr("NOT_FOUND"));
}

// A preset's 3 rounds with 2 of every row's 10 samples at half the clock (windows of the 10
// cycles min_samples asks for): the report takes each item over its rounds and shows the floor,
// the paired changes in time, cycles and clock, and the low-clock share.
TEST_F(ReportE2E, TheReportTakesItemsOverRoundsWithTheirClocks) {
  StartDaemon({}, "", {{"ABLATION_FAKE_LOW_CLOCK_SAMPLES", "2"}});
  ASSERT_EQ(start_error_, "");
  auto sweep = Client({"sweep", "--preset", "ladder-a", "--shape", "256x256x256", "--min-samples",
                       "30", "--window-seconds", "0.000001"});
  ASSERT_EQ(sweep.exit_code, 0) << sweep.err;
  EXPECT_THAT(sweep.err, HasSubstr("[12/12]"));  // 4 items, 3 rounds

  auto md = Client({"report", "--format", "md"});
  ASSERT_EQ(md.exit_code, 0) << md.err;
  EXPECT_THAT(md.out, HasSubstr("a bootstrap over the run's 3 rounds, paired"));
  EXPECT_THAT(md.out, HasSubstr("Noise floor: 0.00%, the median over the run's items"));
  EXPECT_THAT(md.out, HasSubstr("| change [95% CI] | noise | cycles change [95% CI] | clock change "
                                "| source | at-cap change [95% CI] | decided by (solo clock) | low "
                                "clock |"));
  // The fake worker times every variant alike, and the low-clock cycles of a window hit every
  // variant at once: no change, in time, in cycles or in clock, in the window or alone.
  EXPECT_THAT(md.out, HasSubstr("| A1 | +0.0% [+0.0, +0.0] paired | ≈ | +0.0% [+0.0, +0.0] ≈ | "
                                "+0.0% |  | +0.0% [+0.0, +0.0] ≈ | (+0.0%) | 20% |"));
  // The low-clock cycles pull the window's median down a little; the solo span's thousands of
  // samples hold its median at the clock.
  EXPECT_THAT(md.out, HasSubstr("| 256x256x256 | 100.0 [100.0, 100.0] @ 1980 MHz | - | 99.9 | "
                                "50.5 | 9.3% | 100.0% | 3 | 20% | ok |"));
  EXPECT_THAT(md.out, Not(HasSubstr("†")));

  auto json = Client({"report", "--format", "json"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  EXPECT_THAT(json.out, HasSubstr("\"rounds\":3"));
  EXPECT_THAT(json.out, HasSubstr("\"basis\":\"paired_rounds\""));
  EXPECT_THAT(json.out, HasSubstr("\"low_clock_share\":0.2"));
}

TEST_F(ReportE2E, MissingPresetEntriesAreNamedAndNeedAllowMissing) {
  StartDaemon({}, R"(
[future]
description = "a variant that is not written yet, and one that is"
variants = ["zz_future_kernel", "abl_L1_R1_bl0_s3_sw1", "cublas_bf16"]
shapes = ["256"]
)");
  ASSERT_EQ(start_error_, "");
  auto listed = Client({"presets", "future"});
  ASSERT_EQ(listed.exit_code, 0) << listed.err;
  EXPECT_THAT(listed.out, HasSubstr("MISSING"));
  EXPECT_THAT(listed.err, HasSubstr("zz_future_kernel (bf16)"));

  auto refused = Client({"sweep", "--preset", "future"});
  EXPECT_EQ(refused.exit_code, 65);  // the daemon refused the input
  EXPECT_THAT(refused.err, HasSubstr("zz_future_kernel (bf16)"));
  EXPECT_THAT(refused.err, HasSubstr("--allow-missing"));

  // The daemon refuses on its own too (a client that skips ListPresets).
  v1::RunRequest request;
  request.set_preset("future");
  auto stub = daemon_->Stub();
  grpc::ClientContext ctx;
  auto reader = stub->RunAblation(&ctx, request);
  v1::RunEvent event;
  while (reader->Read(&event)) {
  }
  grpc::Status status = reader->Finish();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("zz_future_kernel (bf16)"));

  auto allowed = Client({"sweep", "--preset", "future", "--allow-missing"});
  ASSERT_EQ(allowed.exit_code, 0) << allowed.err;
  EXPECT_THAT(allowed.err, HasSubstr("skipping 1 missing entry: zz_future_kernel (bf16)"));
  EXPECT_THAT(allowed.err, HasSubstr("[6/6]"));
}

TEST_F(ReportE2E, ABadPresetsFileStopsTheDaemonNamingTheLine) {
  StartDaemon({}, "[broken]\ndescription = \"x\"\nvariants = [\"a\", 3]\n");
  EXPECT_THAT(start_error_, HasSubstr("presets.toml:3: broken.variants[1]: expected a string"));
  daemon_.reset();
}

// Chromium's log lines for messages of the page's console (errors, uncaught exceptions, failed
// loads); the report has no scripts, so any of them is a fault.
std::vector<std::string> ConsoleLines(const std::string& log) {
  std::vector<std::string> out;
  std::istringstream in(log);
  for (std::string line; std::getline(in, line);)
    if (line.find("CONSOLE") != std::string::npos || line.find("Uncaught") != std::string::npos)
      out.push_back(line);
  return out;
}

std::string FindChromium() {
  for (const char* name : {"chromium", "chromium-browser"}) {
    const char* path = std::getenv("PATH");
    std::istringstream dirs(path ? path : "/usr/bin");
    for (std::string dir; std::getline(dirs, dir, ':');) {
      std::string candidate = dir + "/" + name;
      if (::access(candidate.c_str(), X_OK) == 0) return candidate;
    }
  }
  return "";
}

// Loads a file in headless Chromium in a window 1400 px wide (or `width`); returns the DOM it built
// (console lines on stderr), or with `screenshot` a PNG of the page written there instead.
CommandResult Render(const std::string& chromium, const std::string& file, const std::string& tmp,
                     const std::string& screenshot = "", int width = 1400) {
  std::vector<std::string> args = {chromium,
                                   "--headless",
                                   "--no-sandbox",
                                   "--disable-gpu",
                                   "--disable-background-networking",
                                   "--disable-component-update",
                                   "--disable-sync",
                                   "--no-first-run",
                                   "--hide-scrollbars",
                                   "--force-device-scale-factor=1",
                                   "--user-data-dir=" + tmp + "/chromium",
                                   "--enable-logging=stderr",
                                   "--v=0"};
  if (screenshot.empty()) {
    args.push_back("--window-size=" + std::to_string(width) + ",2000");
    args.push_back("--dump-dom");
  } else {
    args.push_back("--window-size=" + std::to_string(width) + ",9000");
    args.push_back("--screenshot=" + screenshot);
  }
  args.push_back("file://" + file);
  return RunCommand(args, {}, 180);
}

// The SVG element of the rendered DOM that `id` opens, to its end; "" if none.
std::string SvgOf(const std::string& dom, const std::string& id) {
  const std::size_t at = dom.find("id=\"" + id + "\"");
  if (at == std::string::npos) return "";
  const std::size_t start = dom.rfind("<svg", at);
  return dom.substr(start, dom.find("</svg>", at) + 6 - start);
}

// What a screenshot shows: the share of pixels that are not background, how many have the bars'
// colour, and the longest run of dark pixels along one row (an axis line; nothing else on the
// page is dark for hundreds of pixels).
struct Painted {
  double inked = 0;
  int bar_pixels = 0;
  int longest_dark_run = 0;
};

Painted Look(const Image& image) {
  Painted p;
  long inked = 0;
  for (int y = 0; y < image.height; ++y) {
    int run = 0;
    for (int x = 0; x < image.width; ++x) {
      const std::uint32_t px = image.Pixel(x, y);
      const int r = int(px >> 16), g = int(px >> 8 & 0xff), b = int(px & 0xff);
      if (px != 0xffffff) ++inked;
      if (px == 0x4c72b0) ++p.bar_pixels;
      run = (0.299 * r + 0.587 * g + 0.114 * b) < 90 ? run + 1 : 0;
      p.longest_dark_run = std::max(p.longest_dark_run, run);
    }
  }
  p.inked = double(inked) / (double(image.width) * image.height);
  return p;
}

// A page with the layout check below appended: for every table, whether any of it is out of
// sight at the window's width (wider than its box or the window, or inside a box that scrolls
// or clips it sideways); the smallest text of the charts as painted (its font size times the
// chart's scale); tick labels of one axis that overlap. Written into the DOM as
// <pre id="layout-check">, for --dump-dom to carry out.
std::string WithLayoutCheck(const std::string& html) {
  const std::string script = R"js(<script>
(() => {
  const lines = [];
  const vw = document.documentElement.clientWidth;
  document.querySelectorAll('table').forEach((t, i) => {
    const box = t.getBoundingClientRect();
    const why = [];
    if (t.scrollWidth > t.clientWidth + 1) why.push('wider than its box');
    if (box.right > vw + 0.5 || box.left < -0.5) why.push('past the window');
    t.querySelectorAll('th, td').forEach(c => {
      const b = c.getBoundingClientRect();
      if (b.right > box.right + 1 || b.right > vw + 0.5) why.push('a cell past the table');
    });
    for (let p = t.parentElement; p && p !== document.documentElement; p = p.parentElement) {
      const o = getComputedStyle(p).overflowX;
      if (o !== 'visible' && p.scrollWidth > p.clientWidth + 1) why.push('scrolled in ' + p.tagName);
    }
    lines.push('table ' + i + ' ' + (t.className || '-') + ' ' + Math.round(box.width) + 'px: ' +
               (why.length ? 'CLIPPED (' + [...new Set(why)].join(', ') + ')' : 'whole'));
  });
  let smallest = 1e9, overlaps = 0;
  document.querySelectorAll('svg').forEach(svg => {
    const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
    svg.querySelectorAll('text').forEach(t => {
      smallest = Math.min(smallest, parseFloat(getComputedStyle(t).fontSize) * scale);
    });
    svg.querySelectorAll('g.axis.x').forEach(axis => {
      const boxes = [...axis.querySelectorAll('text.tick-label')].map(t => t.getBoundingClientRect());
      boxes.forEach((a, i) => boxes.slice(i + 1).forEach(b => {
        if (a.left < b.right + 2 && b.left < a.right + 2 && a.top < b.bottom && b.top < a.bottom)
          ++overlaps;
      }));
    });
  });
  // A variant name may wrap only where it offers to (after an underscore, <wbr>): each of its
  // pieces on one line.
  let broken = 0;
  document.querySelectorAll('td code').forEach(code => {
    code.childNodes.forEach(node => {
      if (node.nodeType !== Node.TEXT_NODE || node.textContent.length < 2) return;
      const range = document.createRange();
      range.selectNodeContents(node);
      const tops = new Set([...range.getClientRects()].map(r => Math.round(r.top)));
      if (tops.size > 1) ++broken;
    });
  });
  lines.push('names broken mid-piece ' + broken);
  lines.push('page ' + (document.documentElement.scrollWidth > vw ? 'WIDER than' : 'within') +
             ' the window of ' + vw + 'px');
  lines.push('smallest chart text ' + smallest.toFixed(1) + 'px');
  lines.push('overlapping tick labels ' + overlaps);
  const pre = document.createElement('pre');
  pre.id = 'layout-check';
  pre.textContent = lines.join('\n');
  document.body.appendChild(pre);
})();
</script>)js";
  std::string page = html;
  const std::size_t end = page.rfind("</body>");
  page.insert(end == std::string::npos ? page.size() : end, script);
  return page;
}

// The <pre id="layout-check"> of a dumped DOM.
std::string LayoutCheck(const std::string& dom) {
  const std::size_t at = dom.find("<pre id=\"layout-check\">");
  if (at == std::string::npos) return "";
  const std::size_t start = dom.find('>', at) + 1;
  return dom.substr(start, dom.find("</pre>", start) - start);
}

TEST_F(ReportE2E, HtmlReportRendersInHeadlessChromium) {
  const std::string chromium = FindChromium();
  if (chromium.empty())
    GTEST_SKIP() << "chromium is not installed, so the HTML report cannot be rendered: run "
                    "scripts/install-deps.sh (it installs Debian's chromium, which this test "
                    "uses headless)";
  // Rungs as far apart as on an H200, B1 a little slower than B0, so that every figure has
  // something to show on both sides of 0.
  // A stand-in ncu with the H200's output for the variants it has (tests/core/testdata/ncu), so
  // that the conditions table has its counter columns: the widest table of a report.
  const std::string ncu_dir = MakeTempDir();
  const std::string ncu = ncu_dir + "/ncu";
  std::ofstream(ncu) << "#!/bin/sh\n"
                        "if [ \"$1\" = --version ]; then echo 'Version 2025.3.1.0'; exit 0; fi\n"
                        "while [ $# -gt 0 ]; do [ \"$1\" = --variant ] && variant=$2; shift; done\n"
                        "cat \"" NCU_TESTDATA_DIR "/$variant.csv\"\n";
  ::chmod(ncu.c_str(), 0755);
  StartDaemon({}, "",
              {{"ABLATION_FAKE_SPEEDUP",
                "abl_L1_R1_bl0_s1_sw1=0.97,abl_L0_R1_bl0_s2_sw1=1.15,abl_L1_R1_bl0_s2_sw1=1.45,"
                "abl_L1_R1_bl0_s3_sw1=1.5,abl_L1_R1_bl0_s4_sw1=1.5,abl_L1_R1_bl0_s4_sw1_rb1=1.7,"
                "cublas_bf16=2.3"},
               {"ABLATION_NCU", ncu}});
  ASSERT_EQ(start_error_, "");
  const CommandResult sweep = Client({"sweep", "--preset", "ladder-b", "--shape", "4096", "--shape",
                                      "4096x4096x256", "--profile"});
  std::filesystem::remove_all(ncu_dir);
  ASSERT_EQ(sweep.exit_code, 0) << sweep.err;
  const std::string html = dir_ + "/report.html";
  auto written = Client({"report", "--format", "html", "-o", html});
  ASSERT_EQ(written.exit_code, 0) << written.err;

  // The check itself works: a page that throws is caught.
  const std::string bad = dir_ + "/bad.html";
  std::ofstream(bad) << "<!DOCTYPE html><p>x</p><script>throw new Error('boom')</script>";
  CommandResult control = Render(chromium, bad, dir_);
  ASSERT_EQ(control.exit_code, 0) << control.err;
  ASSERT_FALSE(ConsoleLines(control.err).empty()) << "Chromium's console log not seen:\n"
                                                  << control.err;

  CommandResult rendered = Render(chromium, html, dir_);
  ASSERT_EQ(rendered.exit_code, 0) << rendered.err;
  EXPECT_THAT(rendered.out, HasSubstr("<h1>Ablation report: run 1</h1>"));
  EXPECT_THAT(rendered.out, HasSubstr("<svg class=\"chart\" id=\"chart-ladder-b\""));
  EXPECT_THAT(rendered.out, HasSubstr("<svg class=\"heatmap\" id=\"heatmap-shapes\""));
  EXPECT_THAT(rendered.out, HasSubstr("<rect class=\"bar"));
  EXPECT_THAT(rendered.out, HasSubstr("Ladder B"));
  EXPECT_TRUE(ConsoleLines(rendered.err).empty())
      << "console messages while rendering the report:\n"
      << rendered.err;
  EXPECT_THAT(ReadFile(html), Not(HasSubstr("<script")));

  // Every figure in the DOM Chromium built has its axes, their titles (the units) and a legend:
  // the bars' for the rungs, the grey cuBLAS and the dashed peak at the measured clock.
  const std::map<std::string, std::vector<std::string>> figures = {
      {"chart-ladder-b",
       {"<g class=\"axis x\">", "<g class=\"axis y\">", ">TFLOPS</text>", "class=\"tick-label\"",
        "<g class=\"whisker\">", "<g class=\"legend\">", ">rung</text>",
        ">cuBLAS (reference)</text>", "<g class=\"peak\">",
        ">dense peak at the measured clock</text>"}},
      {"change-ladder-b",
       {"<g class=\"axis x\">",
        ">speed change: median(compared) / "
        "median(this) - 1</text>",
        ">B3 vs B2</text>", "class=\"zero\""}},
      {"heatmap-shapes",
       {"<g class=\"axis x\">", ">shape (M = N, K)</text>", "<g class=\"legend\">",
        ">TFLOPS</text>"}},
      {"heatmap-change-shapes",
       {"<g class=\"axis x\">", "<g class=\"legend\">", ">slower ← change → faster</text>"}}};
  for (const auto& [id, parts] : figures) {
    const std::string svg = SvgOf(rendered.out, id);
    ASSERT_FALSE(svg.empty()) << "no figure " << id;
    for (const std::string& part : parts) EXPECT_THAT(svg, HasSubstr(part)) << id;
  }
  // Only what was measured is drawn: pipelining is listed, not drawn.
  EXPECT_THAT(rendered.out, HasSubstr("Not measured in this run, so not shown: Pipelining"));
  EXPECT_THAT(rendered.out, Not(HasSubstr("<section id=\"pipelining\">")));
  EXPECT_THAT(rendered.out, HasSubstr("<th>driver</th><td>13.0</td>"));
  EXPECT_THAT(rendered.out, HasSubstr("<th>cuBLAS</th><td>13.1.0</td>"));

  // And it is painted: a blank page reads as blank, the report shows its bars and axis lines.
  const std::string blank = dir_ + "/blank.html";
  std::ofstream(blank) << "<!DOCTYPE html><html><body></body></html>";
  ASSERT_EQ(Render(chromium, blank, dir_, dir_ + "/blank.png").exit_code, 0);
  Image image;
  ASSERT_EQ(DecodePng(ReadFile(dir_ + "/blank.png"), &image), "");
  EXPECT_LT(Look(image).inked, 0.001);
  const CommandResult shot = Render(chromium, html, dir_, dir_ + "/report.png");
  ASSERT_EQ(shot.exit_code, 0) << shot.err;
  ASSERT_EQ(DecodePng(ReadFile(dir_ + "/report.png"), &image), "");
  EXPECT_EQ(image.width, 1400);
  const Painted painted = Look(image);
  EXPECT_GT(painted.inked, 0.03) << "the screenshot is (nearly) blank";
  EXPECT_GT(painted.bar_pixels, 1000) << "no TFLOPS bars painted";
  EXPECT_GE(painted.longest_dark_run, 360) << "no axis line painted";

  // At 1400 px no table hides a column (no scrollbar: print and PDF would lose it), the charts'
  // text is painted at 12 px or more, and no axis's tick labels run together. The check itself
  // works: a wide table in a box that scrolls sideways, and squeezed chart text, are caught.
  const std::string control_page = dir_ + "/clipped.html";
  std::string wide_row;
  for (int i = 0; i < 40; ++i) wide_row += "<td>column_" + std::to_string(i) + "_nowrap</td>";
  std::ofstream(control_page) << WithLayoutCheck(
      "<!DOCTYPE html><html><body><div style=\"overflow-x:auto\"><table style=\"white-space:"
      "nowrap\"><tr>" +
      wide_row +
      "</tr></table></div><svg viewBox=\"0 0 2000 100\" "
      "width=\"500\"><text x=\"0\" y=\"50\" style=\"font-size:12px\">squeezed</text></svg>"
      "</body></html>");
  const CommandResult controlled = Render(chromium, control_page, dir_);
  ASSERT_EQ(controlled.exit_code, 0) << controlled.err;
  const std::string control_check = LayoutCheck(controlled.out);
  ASSERT_THAT(control_check, HasSubstr("CLIPPED")) << controlled.out;
  ASSERT_THAT(control_check, HasSubstr("scrolled in DIV")) << control_check;
  ASSERT_THAT(control_check, HasSubstr("smallest chart text 3.0px")) << control_check;

  const std::string checked_page = dir_ + "/report-checked.html";
  std::ofstream(checked_page) << WithLayoutCheck(ReadFile(html));
  const CommandResult checked = Render(chromium, checked_page, dir_);
  ASSERT_EQ(checked.exit_code, 0) << checked.err;
  const std::string layout = LayoutCheck(checked.out);
  ASSERT_THAT(layout, HasSubstr("table 0 ")) << checked.out;
  EXPECT_THAT(layout, HasSubstr(" conditions ")) << "no conditions table to check:\n" << layout;
  EXPECT_THAT(layout, Not(HasSubstr("CLIPPED"))) << layout;
  EXPECT_THAT(layout, HasSubstr("page within the window of 1400px")) << layout;
  EXPECT_THAT(layout, HasSubstr("overlapping tick labels 0")) << layout;
  EXPECT_THAT(layout, HasSubstr("names broken mid-piece 0")) << layout;
  const std::size_t at = layout.find("smallest chart text ");
  ASSERT_NE(at, std::string::npos) << layout;
  EXPECT_GE(std::stod(layout.substr(at + 20)), 12.0) << layout;

  // At 800 px (a laptop's half screen) too: every table whole, inside the window, no name broken
  // inside a piece (charts shrink whole there, so their text is not measured).
  const CommandResult narrow = Render(chromium, checked_page, dir_, "", 800);
  ASSERT_EQ(narrow.exit_code, 0) << narrow.err;
  const std::string narrow_layout = LayoutCheck(narrow.out);
  ASSERT_THAT(narrow_layout, HasSubstr("table 0 ")) << narrow.out;
  EXPECT_THAT(narrow_layout, Not(HasSubstr("CLIPPED"))) << narrow_layout;
  EXPECT_THAT(narrow_layout, HasSubstr("page within the window of 800px")) << narrow_layout;
  EXPECT_THAT(narrow_layout, HasSubstr("names broken mid-piece 0")) << narrow_layout;
}

// The history page (`history --format html`, charts.h HistoryChart) in headless Chromium at
// 1400 px: two series, one of 40 runs with a change point near each end (the labels' worst
// places) and one of 3 runs, laid out whole, with text of 12 px or more and no tick labels
// running together. Drawn from a HistoryResponse made here (the page from a real daemon is
// HistoryE2E's), so that only Chromium's time is spent.
TEST_F(ReportE2E, HistoryHtmlRendersWholeInHeadlessChromium) {
  const std::string chromium = FindChromium();
  if (chromium.empty())
    GTEST_SKIP() << "chromium is not installed, so the history page cannot be rendered: run "
                    "scripts/install-deps.sh";
  dir_ = MakeTempDir();
  v1::HistoryResponse history;
  history.set_min_relative_change(0.01);
  history.set_significance(0.01);
  auto add = [&](const std::string& variant, int points, std::vector<int> changes) {
    v1::Series* s = history.add_series();
    s->set_variant(variant);
    s->set_dtype("bf16");
    s->mutable_shape()->set_m(4096);
    s->mutable_shape()->set_n(4096);
    s->mutable_shape()->set_k(4096);
    s->set_regime(v1::REGIME_SUSTAINED);
    s->set_device_name("NVIDIA H200");
    s->set_hardware_fingerprint("0123456789abcdef");
    double level = 1.0;
    for (int i = 0; i < points; ++i) {
      for (int c : changes)
        if (c == i) level *= 1.08;
      v1::HistoryPoint* p = s->add_points();
      p->set_run_id(1000 + i);
      p->set_time_ms(1764633600000 + i * 86400000ll);
      p->set_median_ms(level * (1 + 0.003 * std::sin(i * 1.3)));
      p->set_tflops(137.4 / p->median_ms());
      p->set_noise(0.004);
      p->set_change_point(std::find(changes.begin(), changes.end(), i) != changes.end());
    }
    for (int c : changes) {
      v1::ChangePoint* cp = s->add_change_points();
      cp->set_index(c);
      cp->set_before_median_ms(1.0);
      cp->set_after_median_ms(1.08);
      cp->set_relative_change(0.08);
      cp->set_p_value(0.005);
    }
  };
  add("sm90_h10_epilogue_overlap_with_a_long_name", 40, {2, 38});
  add("abl_L1_R1_bl0_s3_sw1", 3, {});
  const std::string checked_page = dir_ + "/history-checked.html";
  std::ofstream(checked_page) << WithLayoutCheck(
      client::report::RenderHistoryHtml(history, "sm90_h10*, tag nightly"));
  const CommandResult checked = Render(chromium, checked_page, dir_);
  ASSERT_EQ(checked.exit_code, 0) << checked.err;
  EXPECT_THAT(SvgOf(checked.out, "history-1"), HasSubstr("<line class=\"change-point\""));
  EXPECT_THAT(SvgOf(checked.out, "history-2"), HasSubstr("<circle class=\"point\""));
  const std::string layout = LayoutCheck(checked.out);
  ASSERT_THAT(layout, HasSubstr("table 1 rows")) << checked.out;
  EXPECT_THAT(layout, Not(HasSubstr("CLIPPED"))) << layout;
  EXPECT_THAT(layout, HasSubstr("page within the window of 1400px")) << layout;
  EXPECT_THAT(layout, HasSubstr("overlapping tick labels 0")) << layout;
  EXPECT_THAT(layout, HasSubstr("names broken mid-piece 0")) << layout;
  const std::size_t at = layout.find("smallest chart text ");
  ASSERT_NE(at, std::string::npos) << layout;
  EXPECT_GE(std::stod(layout.substr(at + 20)), 12.0) << layout;

  // At 800 px (a laptop's half screen) too: every table whole, inside the window, no name broken
  // inside a piece (charts shrink whole there, so their text is not measured).
  const CommandResult narrow = Render(chromium, checked_page, dir_, "", 800);
  ASSERT_EQ(narrow.exit_code, 0) << narrow.err;
  const std::string narrow_layout = LayoutCheck(narrow.out);
  ASSERT_THAT(narrow_layout, HasSubstr("table 0 ")) << narrow.out;
  EXPECT_THAT(narrow_layout, Not(HasSubstr("CLIPPED"))) << narrow_layout;
  EXPECT_THAT(narrow_layout, HasSubstr("page within the window of 800px")) << narrow_layout;
  EXPECT_THAT(narrow_layout, HasSubstr("names broken mid-piece 0")) << narrow_layout;
}

}  // namespace
}  // namespace ablation::testing
