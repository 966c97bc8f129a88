// The report of the built-in presets' sections (deploy/presets.toml, as the daemon serves them):
// the report's tables, and their renderings.
#include "client/report/report.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "client/output/json.h"
#include "client/report/text.h"
#include "tests/client/support/served_catalog.h"

namespace ablation::client::report {
namespace {

namespace v1 = ::ablation::v1;
using ::testing::HasSubstr;
using ::testing::Not;

// A measurement whose samples are `ms` times a small deterministic wiggle.
void Add(v1::GetRunResponse& run, const std::string& variant, const std::string& dtype,
         std::int64_t m, std::int64_t n, std::int64_t k, double ms, int samples = 40,
         int round = 0) {
  v1::Measurement* x = run.add_measurements();
  x->set_round(round);
  x->set_variant(variant);
  x->set_dtype(dtype);
  x->mutable_shape()->set_m(m);
  x->mutable_shape()->set_n(n);
  x->mutable_shape()->set_k(k);
  x->set_status(v1::MEASUREMENT_STATUS_OK);
  x->set_sequence(run.measurements_size());
  for (int i = 0; i < samples; ++i) x->add_sample_ms(ms * (1 + 0.002 * std::sin(double(i) * 1.7)));
  x->mutable_stats()->set_median_ms(ms);
  x->mutable_stats()->set_samples(samples);
  x->set_tflops(2.0 * double(m) * double(n) * double(k) / (ms * 1e-3) / 1e12);
}

void Add4096(v1::GetRunResponse& run, const std::string& variant, const std::string& dtype,
             double ms) {
  Add(run, variant, dtype, 4096, 4096, 4096, ms);
}

// The report of a run from the built-in presets and every registered variant.
v1::Report BuildReport(const v1::GetRunResponse& run) {
  static const auto* presets = new std::vector<v1::Preset>(testing::ServedPresets());
  static const auto* variants = new std::vector<v1::Variant>(testing::ServedVariants());
  return report::BuildReport(run, *presets, *variants);
}

const v1::ReportSection& Table(const v1::Report& r, const std::string& id) {
  for (const auto& t : r.sections())
    if (t.id() == id) return t;
  throw std::runtime_error("no section " + id);
}

const v1::ReportRow& Row(const v1::ReportSection& t, const std::string& rung) {
  for (const auto& r : t.rows())
    if (r.rung() == rung) return r;
  throw std::runtime_error("no row " + rung);
}

v1::GetRunResponse LadderRun() {
  v1::GetRunResponse run;
  run.mutable_run()->set_id(7);
  run.mutable_run()->set_state(v1::RUN_STATE_SUCCEEDED);
  run.mutable_run()->mutable_device()->set_name("Test GPU");
  Add4096(run, "cublas_bf16", "bf16", 0.20);
  Add4096(run, "abl_L1_R0_bl0_s3_sw1", "bf16", 0.55);
  Add4096(run, "abl_L1_R0_bl1_s3_sw1", "bf16", 0.51);
  Add4096(run, "abl_L1_R1_bl0_s3_sw1", "bf16", 0.42);
  Add4096(run, "abl_L0_R1_bl0_s1_sw1", "bf16", 0.60);
  // B1 (cp.async, 1 stage) not measured: missing.
  Add4096(run, "abl_L0_R1_bl0_s2_sw1", "bf16", 0.58);
  Add4096(run, "abl_L1_R1_bl0_s2_sw1", "bf16", 0.42);
  Add4096(run, "abl_L1_R1_bl0_s4_sw1", "bf16", 0.42);  // the same as B4: within noise
  Add(run, "abl_L1_R1_bl0_s3_sw1", "bf16", 4096, 4096, 256, 0.05);
  Add(run, "cublas_bf16", "bf16", 4096, 4096, 256, 0.02);
  return run;
}

TEST(Report, LadderAComparesLdmatrixWithTheFasterLdShared) {
  v1::Report r = BuildReport(LadderRun());
  const v1::ReportSection& a = Table(r, "ladder-a");
  EXPECT_EQ(a.title(), "Ladder A: smem -> registers, ld.shared vs ldmatrix");
  EXPECT_EQ(a.scope(), "bf16, 4096x4096x4096; fixed: cp.async, 3 stages, swizzle");
  const v1::ReportRow& a3 = Row(a, "A3");
  EXPECT_EQ(a3.what(), "ldmatrix");
  EXPECT_EQ(a3.vs(), "A2");  // A2 (0.51 ms) is faster than A1 (0.55 ms)
  EXPECT_EQ(a3.vs_variant(), "abl_L1_R0_bl1_s3_sw1");
  ASSERT_TRUE(a3.has_change());
  EXPECT_NEAR(a3.change().estimate(), 0.51 / 0.42 - 1, 1e-9);
  EXPECT_TRUE(a3.change().has_interval());
  EXPECT_FALSE(a3.change().within_noise());
  ASSERT_TRUE(a3.has_cublas_share());
  EXPECT_NEAR(a3.cublas_share(), 0.20 / 0.42, 1e-9);
  const v1::ReportRow& cublas = Row(a, "cuBLAS");
  EXPECT_EQ(cublas.variant(), "cublas_bf16");
  EXPECT_EQ(cublas.what(), "cuBLAS bf16 (reference)");
  EXPECT_TRUE(cublas.baseline());
  EXPECT_FALSE(cublas.has_change());
}

TEST(Report, MissingRowsAreShownMissingNeverInvented) {
  v1::Report r = BuildReport(LadderRun());
  const v1::ReportSection& b = Table(r, "ladder-b");
  const v1::ReportRow& b1 = Row(b, "B1");
  EXPECT_EQ(b1.status(), v1::ROW_STATUS_MISSING);
  EXPECT_EQ(b1.variant(), "abl_L1_R1_bl0_s1_sw1");
  EXPECT_FALSE(b1.has_change());
  EXPECT_FALSE(b1.has_tflops());
  EXPECT_EQ(Row(b, "B4").status(), v1::ROW_STATUS_OK);  // s3 at 4096^3 is also A3: in both
  EXPECT_EQ(b.missing(), 2);                            // B1, B6
  EXPECT_EQ(b.measured(), 6);
}

TEST(Report, LadderBSteps) {
  v1::Report r = BuildReport(LadderRun());
  const v1::ReportSection& b = Table(r, "ladder-b");
  EXPECT_EQ(Row(b, "B2").vs(), "B0");  // the second buffer alone
  EXPECT_EQ(Row(b, "B3").vs(), "B2");  // then cp.async alone
  // 4 stages take as long as 3: within noise.
  EXPECT_EQ(Row(b, "B5").vs(), "B4");
  EXPECT_TRUE(Row(b, "B5").change().within_noise());
  // B1 missing: B0 has no successor change from it, and B1 has none.
  EXPECT_FALSE(Row(b, "B1").has_change());
  EXPECT_EQ(Row(b, "B6").status(), v1::ROW_STATUS_MISSING);
}

TEST(Report, WithinNoiseIsMarked) {
  v1::GetRunResponse run = LadderRun();
  Add4096(run, "abl_L1_R1_bl0_s1_sw1", "bf16", 0.60);  // B1 = B0: flat, as expected
  v1::Report r = BuildReport(run);
  const v1::ReportRow& b1 = Row(Table(r, "ladder-b"), "B1");
  ASSERT_TRUE(b1.has_change());
  EXPECT_TRUE(b1.change().within_noise());
  EXPECT_THAT(RenderReportMarkdown(r), HasSubstr("| B1 | cp.async, 1 stage |"));
  EXPECT_THAT(RenderReportMarkdown(r), HasSubstr("≈"));
}

// Ladder B measured in 3 rounds through a drift that each item meets at its own time (the rounds
// shuffle the order): +0, +1 or +2% by item and round, as on the H200 where three runs gave the
// 3-vs-2-stage change as -0.05%, +0.88% and -0.16%.
TEST(Report, ADriftBetweenRoundsIsNoChangeAndARealStepStillIs) {
  v1::GetRunResponse run;
  run.mutable_run()->set_rounds(3);
  const std::pair<const char*, double> items[] = {{"cublas_bf16", 0.20},
                                                  {"abl_L1_R1_bl0_s2_sw1", 0.46},   // B3
                                                  {"abl_L1_R1_bl0_s3_sw1", 0.42},   // B4
                                                  {"abl_L1_R1_bl0_s4_sw1", 0.42}};  // B5 = B4
  for (int r = 0; r < 3; ++r)
    for (int i = 0; i < 4; ++i)
      Add(run, items[i].first, "bf16", 4096, 4096, 4096,
          items[i].second * (1 + 0.01 * ((i + r) % 3)), 40, r);
  const v1::Report report = BuildReport(run);
  EXPECT_NEAR(report.method().floor(), 0.02 / 1.01, 1e-3);  // every item spans 2% over rounds
  const v1::ReportSection& b = Table(report, "ladder-b");
  const v1::Change& b5 = Row(b, "B5").change();  // 4 stages against 3: no true change
  EXPECT_EQ(b5.basis(), v1::CHANGE_BASIS_ROUNDS);
  EXPECT_LT(b5.interval().low(), 0);
  EXPECT_GT(b5.interval().high(), 0);
  EXPECT_TRUE(b5.within_noise());
  const v1::Change& b4 = Row(b, "B4").change();  // 3 stages against 2: 0.46 / 0.42 = +9.5%
  EXPECT_NEAR(b4.estimate(), 0.46 / 0.42 - 1, 0.01);
  EXPECT_GT(b4.interval().low(), 0.05);
  EXPECT_FALSE(b4.within_noise());
  EXPECT_EQ(Row(b, "B4").rounds(), 3);
  EXPECT_EQ(Row(b, "B4").samples(), 120);
}

TEST(Report, B4IsMissingWhenOnlyOtherShapesAreMeasured) {
  v1::GetRunResponse run;
  Add(run, "abl_L1_R1_bl0_s3_sw1", "bf16", 512, 512, 256, 0.01);
  v1::Report r = BuildReport(run);
  // 512x512x256 becomes the reference shape (the run has no 4096^3).
  const v1::ReportRow& b4 = Row(Table(r, "ladder-b"), "B4");
  EXPECT_EQ(b4.status(), v1::ROW_STATUS_OK);
  EXPECT_EQ(b4.shape().k(), 256);
  EXPECT_EQ(Table(r, "ladder-b").scope(),
            "bf16, 512x512x256; fixed: ldmatrix, B as [k][n], swizzle");
}

TEST(Report, ShapesMatrixHasThePlanShapesAndMeasuredCells) {
  v1::Report r = BuildReport(LadderRun());
  const v1::ReportSection& s = Table(r, "shapes");
  EXPECT_EQ(s.layout(), v1::SECTION_LAYOUT_SHAPES);
  EXPECT_EQ(s.shapes_size(), 10);
  EXPECT_EQ(s.rows_size(), 90);  // B0..B6, H12 and cuBLAS, rung-major
  EXPECT_EQ(s.rows(0).rung(), "B0");
  EXPECT_EQ(s.rows(10).rung(), "B1");
  EXPECT_EQ(s.rows(70).rung(), "H12");
  EXPECT_EQ(s.rows(89).rung(), "cuBLAS");
  EXPECT_EQ(s.measured(), 2 + 5 + 1);  // at 4096^3: B0 B2 B3 B4 B5 and cuBLAS; K=256: B4, cuBLAS
  const std::string md = RenderReportMarkdown(r);
  // Drawn: the two shapes measured; the other eight named in one line, not 64 "missing" cells.
  EXPECT_THAT(md, HasSubstr("| rung | 4096x4096x256 | 4096x4096x4096 |\n"));
  EXPECT_THAT(md, HasSubstr("Not measured in this run: at 512x512x256, 512x512x512,"));
  EXPECT_THAT(md, HasSubstr("| B4 vs B3 |"));
  EXPECT_THAT(md, Not(HasSubstr("| B0 vs")));
  EXPECT_THAT(md, Not(HasSubstr("| cuBLAS vs")));
  EXPECT_THAT(md, HasSubstr("Small K"));
}

TEST(Report, PipeliningTablePerDtypeAndTile) {
  v1::GetRunResponse run;
  Add4096(run, "pipe_baseline_f16_128x128x32", "fp16", 1.0);
  Add4096(run, "pipe_cpasync_f16_128x128x32", "fp16", 0.74);
  Add4096(run, "cublas_fp16", "fp16", 0.2);
  v1::Report r = BuildReport(run);
  const v1::ReportSection& p = Table(r, "pipelining");
  EXPECT_EQ(p.rows(0).what(), "fp16, tile 128x128x32: load, sync, compute, sync");
  const v1::ReportRow& cp = p.rows(2);
  EXPECT_EQ(cp.rung(), "cp.async");
  EXPECT_EQ(cp.variant(), "pipe_cpasync_f16_128x128x32");
  EXPECT_EQ(cp.vs(), "baseline");
  EXPECT_NEAR(cp.change().estimate(), 1.0 / 0.74 - 1, 1e-9);  // speedup 1.35x
  EXPECT_EQ(p.rows(1).status(), v1::ROW_STATUS_MISSING);      // LDG
  EXPECT_EQ(p.rows(1).variant(), "pipe_ldg_f16_128x128x32");
  EXPECT_EQ(p.rows(3).rung(), "cuBLAS");
  EXPECT_EQ(p.rows(3).what(), "cuBLAS fp16 (reference)");
  // int8 and fp32 were not measured at all: their rows are missing, named by pattern.
  EXPECT_EQ(p.rows(4).variant(), "pipe_baseline_i8_*");
  EXPECT_EQ(p.rows(4).status(), v1::ROW_STATUS_MISSING);
  EXPECT_EQ(p.rows(4).what(), "int8: load, sync, compute, sync");
  EXPECT_EQ(p.rows_size(), 12);
}

TEST(Report, ArchPicksTheBestAblationVariant) {
  v1::GetRunResponse run = LadderRun();
  Add4096(run, "simt_tiling", "fp32", 8.0);
  Add4096(run, "simt_at", "fp32", 7.0);
  Add4096(run, "cublas_fp32", "fp32", 3.0);
  v1::Report r = BuildReport(run);
  const v1::ReportSection& arch = Table(r, "arch");
  EXPECT_EQ(arch.scope(), "fp32 / tf32 / bf16, 4096x4096x4096");
  const v1::ReportRow& best = Row(arch, "best bf16");
  EXPECT_EQ(best.variant(), "abl_L1_R1_bl0_s3_sw1");  // 0.42 ms, the first of the ties
  EXPECT_EQ(best.what(), "fastest ablation variant (bf16 mma)");
  EXPECT_EQ(Row(arch, "S2").vs(), "S1");
  EXPECT_EQ(Row(arch, "S3").status(), v1::ROW_STATUS_MISSING);
  EXPECT_NEAR(Row(arch, "S2").cublas_share(), 3.0 / 7.0, 1e-9);
  EXPECT_EQ(Row(arch, "cuBLAS tf32").against(0), "cuBLAS fp32");
}

TEST(Report, AnFp16OnlyRunIsShownInFp16) {
  v1::GetRunResponse run;
  Add4096(run, "abl_L1_R1_bl0_s3_sw1", "fp16", 0.40);
  Add4096(run, "cublas_fp16", "fp16", 0.20);
  v1::Report r = BuildReport(run);
  const v1::ReportSection& a = Table(r, "ladder-a");
  EXPECT_EQ(a.scope(), "fp16, 4096x4096x4096; fixed: cp.async, 3 stages, swizzle");
  EXPECT_EQ(Row(a, "A3").status(), v1::ROW_STATUS_OK);
  EXPECT_EQ(Row(a, "cuBLAS").variant(), "cublas_fp16");
  EXPECT_NEAR(Row(a, "A3").cublas_share(), 0.5, 1e-9);
  EXPECT_EQ(Row(Table(r, "arch"), "best fp16").variant(), "abl_L1_R1_bl0_s3_sw1");
}

TEST(Report, AnUnmeasuredTableSaysSo) {
  const std::string md = RenderReportMarkdown(BuildReport(LadderRun()));
  // The sections the run measured whole (ladder A) come before those it measured in part.
  EXPECT_THAT(md, HasSubstr("## 1. Ladder A"));
  EXPECT_THAT(md, HasSubstr("## 2. Architecture"));
  EXPECT_THAT(md, HasSubstr("Not measured in this run, so not shown: Pipelining: baseline vs "
                            "LDG-register vs cp.async double buffer (`ablation-client sweep "
                            "--preset pipelining`), Hopper ladder: mma.sync to TMA + wgmma, one "
                            "change per rung (`ablation-client sweep --preset ladder-h`), FP8 "
                            "ladder: e4m3 wgmma, one change per rung, against cuBLASLt fp8 "
                            "(`ablation-client sweep --preset ladder-f8`), Serving shapes: decode "
                            "and prefill GEMMs (TFLOPS) (`ablation-client sweep --preset "
                            "serving`)."));
  EXPECT_THAT(md, HasSubstr("| B3 vs B2 |"));
  EXPECT_THAT(md, HasSubstr("## 3. Ladder B"));
  EXPECT_THAT(md, HasSubstr("## 4. Shape sensitivity"));
  EXPECT_THAT(md, Not(HasSubstr("## 5. Pipelining")));
  EXPECT_THAT(md, HasSubstr("## 5. All measurements of the run"));
  EXPECT_THAT(md, HasSubstr("| A3 | ldmatrix | `abl_L1_R1_bl0_s3_sw1` | bf16 |"));
  // Rows not measured are named under their table, not tabled as "missing".
  EXPECT_THAT(md, Not(HasSubstr("| B1 |")));
  EXPECT_THAT(md, HasSubstr("Not measured in this run: B1, B6."));
  EXPECT_THAT(md, HasSubstr("Not measured in this run: S1, S2, S3, S4, S5, cuBLAS fp32, T1, T2, "
                            "cuBLAS tf32, Hopper."));
  EXPECT_THAT(md, HasSubstr("Reading notes"));
  EXPECT_THAT(md, HasSubstr("not bandwidth"));
  EXPECT_THAT(md, HasSubstr("the load path alone"));
}

TEST(Report, JsonParsesBackIntoTheModelAndCsvHasEveryRow) {
  v1::Report r = BuildReport(LadderRun());
  const std::string json = RenderReportJson(r);
  std::vector<v1::Report> reports;
  ASSERT_EQ(ReadJsonEnvelope(json, "report", &reports), "") << json;
  ASSERT_EQ(reports.size(), 1u);
  const v1::Report& parsed = reports[0];
  EXPECT_EQ(parsed.schema_version(), 1);
  EXPECT_EQ(parsed.run().id(), 7);
  EXPECT_EQ(parsed.sections_size(), 9);
  EXPECT_EQ(parsed.SerializeAsString(), r.SerializeAsString());  // nothing lost
  // The words of the CSV (its status column says "missing" too), not ROW_STATUS_MISSING.
  EXPECT_THAT(json, HasSubstr("\"status\":\"missing\""));
  EXPECT_THAT(json, Not(HasSubstr("ROW_STATUS_")));
  EXPECT_THAT(json, HasSubstr("\"id\":\"ladder-a\""));
  int rows = 0;
  for (const auto& t : r.sections()) rows += t.rows_size();
  const std::string csv = RenderReportCsv(r);
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), static_cast<long>(rows + 1));
  EXPECT_THAT(csv, HasSubstr("\r\nladder-a,A3,ldmatrix,abl_L1_R1_bl0_s3_sw1,bf16,4096,4096,4096,"
                             "ok,"));
  EXPECT_THAT(csv, HasSubstr("\r\nladder-b,B1,\"cp.async, 1 stage\",abl_L1_R1_bl0_s1_sw1,bf16,"
                             "4096,4096,4096,missing,,,,cublas_bf16,,,,,,,,,,,,,,,,,,,,,,,,,,,,"
                             ",,,,,,,,,,,,,,,,,,,,,,,,,\r\n"));
}

TEST(Report, HtmlIsSelfContainedWithCharts) {
  const std::string html = RenderReportHtml(BuildReport(LadderRun()));
  EXPECT_THAT(html, HasSubstr("<svg class=\"chart\" id=\"chart-ladder-a\""));
  EXPECT_THAT(html, HasSubstr("<svg class=\"heatmap\" id=\"heatmap-shapes\""));
  EXPECT_THAT(html, HasSubstr("<rect class=\"bar cublas\""));
  EXPECT_THAT(html, HasSubstr("<h1>Ablation report: run 7</h1>"));
  EXPECT_THAT(html, HasSubstr("<p class=\"summary\">succeeded on Test GPU</p>"));
  EXPECT_THAT(html, HasSubstr("<style>"));
  EXPECT_THAT(html, Not(HasSubstr("<script")));
  EXPECT_THAT(html, Not(HasSubstr("http://www.w3.org/1999")));  // only the SVG namespace URI
  EXPECT_THAT(html, Not(HasSubstr("https://")));
}

// The header and the method name how the inputs met the L2 and the rounds: from the L2 mode every
// row stored and the request's timing.fresh_inputs; rows of different modes are counted by mode.
TEST(Report, TheInputsAreNamedFromTheRowsAndTheRequest) {
  v1::GetRunResponse run = LadderRun();
  EXPECT_EQ(BuildReport(run).run().inputs(), "");  // no row names its L2 mode: nothing is said
  EXPECT_THAT(RenderReportMarkdown(BuildReport(run)), Not(HasSubstr("- inputs:")));
  for (v1::Measurement& m : *run.mutable_measurements()) m.set_l2(v1::L2_MODE_COLD_ROTATED);
  v1::Report r = BuildReport(run);
  EXPECT_EQ(r.run().inputs(),
            "L2 cold (each sample on its own copy of the inputs, the copies over twice the L2); "
            "inputs kept on the device from window to window");
  EXPECT_THAT(RenderReportMarkdown(r), HasSubstr("\n- inputs: L2 cold (each sample"));
  EXPECT_THAT(RenderReportHtml(r), HasSubstr("<th>inputs</th><td>L2 cold (each sample"));
  EXPECT_THAT(MethodText(r), HasSubstr(" Inputs: L2 cold (each sample"));

  run.mutable_run()->set_request_json(R"({"timing": {"flushL2": true, "freshInputs": true}})");
  for (v1::Measurement& m : *run.mutable_measurements()) m.set_l2(v1::L2_MODE_COLD);
  EXPECT_EQ(BuildReport(run).run().inputs(),
            "L2 cold (flushed before every sample); inputs made anew for every round (fresh "
            "inputs)");
  // Two rows of cuBLAS hot (4096^3 and 4096x4096x256), the other eight flushed.
  for (v1::Measurement& m : *run.mutable_measurements())
    if (m.variant() == "cublas_bf16") m.set_l2(v1::L2_MODE_HOT);
  EXPECT_EQ(BuildReport(run).run().inputs(),
            "L2 per row: cold (flushed before every sample), 8 rows; hot (the inputs the previous "
            "sample left in it), 2 rows; inputs made anew for every round (fresh inputs)");
  // A request that does not parse is no request: the rows still say their L2.
  run.mutable_run()->set_request_json("{not json");
  EXPECT_THAT(BuildReport(run).run().inputs(),
              HasSubstr("; inputs kept on the device from window to window"));
}

TEST(Report, EmptyRun) {
  v1::GetRunResponse run;
  run.mutable_run()->set_id(1);
  v1::Report r = BuildReport(run);
  EXPECT_THAT(RenderReportMarkdown(r), HasSubstr("No measurements."));
  std::vector<v1::Report> parsed;
  ASSERT_EQ(ReadJsonEnvelope(RenderReportJson(r), "report", &parsed), "");
  ASSERT_EQ(parsed.size(), 1u);
  EXPECT_EQ(parsed[0].schema_version(), 1);
}

}  // namespace
}  // namespace ablation::client::report
