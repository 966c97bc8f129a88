#include "client/report/report.h"

#include <gmock/gmock.h>
#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>
#include <gtest/gtest.h>

namespace ablation::client::report {
namespace {

namespace v1 = ::ablation::v1;
using ::testing::HasSubstr;
using ::testing::Not;

// A measurement whose samples are `ms` times a small deterministic wiggle.
void Add(v1::GetRunResponse& run, const std::string& variant, const std::string& dtype,
         std::int64_t m, std::int64_t n, std::int64_t k, double ms, int samples = 40) {
  v1::Measurement* x = run.add_measurements();
  x->set_variant(variant);
  x->set_dtype(dtype);
  x->mutable_shape()->set_m(m);
  x->mutable_shape()->set_n(n);
  x->mutable_shape()->set_k(k);
  x->set_status("ok");
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

const ReportTable& Table(const Report& r, const std::string& id) {
  for (const auto& t : r.tables)
    if (t.id == id) return t;
  throw std::runtime_error("no table " + id);
}

const ReportRow& Row(const ReportTable& t, const std::string& label) {
  for (const auto& r : t.rows)
    if (r.label == label) return r;
  throw std::runtime_error("no row " + label);
}

v1::GetRunResponse LadderRun() {
  v1::GetRunResponse run;
  run.mutable_run()->set_id(7);
  run.mutable_run()->set_state("succeeded");
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
  Report r = BuildReport(LadderRun());
  const ReportTable& a = Table(r, "ladder_a");
  const ReportRow& a3 = Row(a, "A3");
  EXPECT_EQ(a3.vs, "A2");  // A2 (0.51 ms) is faster than A1 (0.55 ms)
  ASSERT_TRUE(a3.change.has_value());
  EXPECT_NEAR(a3.change->estimate, 0.51 / 0.42 - 1, 1e-9);
  EXPECT_TRUE(a3.change->has_interval);
  EXPECT_FALSE(a3.change->within_noise());
  ASSERT_TRUE(a3.cublas_share.has_value());
  EXPECT_NEAR(*a3.cublas_share, 0.20 / 0.42, 1e-9);
  EXPECT_EQ(Row(a, "cuBLAS").variant, "cublas_bf16");
}

TEST(Report, MissingRowsAreShownMissingNeverInvented) {
  Report r = BuildReport(LadderRun());
  const ReportTable& b = Table(r, "ladder_b");
  const ReportRow& b1 = Row(b, "B1");
  EXPECT_EQ(b1.status, "missing");
  EXPECT_EQ(b1.variant, "abl_L1_R1_bl0_s1_sw1");
  EXPECT_FALSE(b1.change.has_value());
  EXPECT_EQ(Row(b, "B4").status, "ok");  // s3 at 4096^3 is also A3: measured once, in both
}

TEST(Report, LadderBSteps) {
  Report r = BuildReport(LadderRun());
  const ReportTable& b = Table(r, "ladder_b");
  EXPECT_EQ(Row(b, "B2").vs, "B0");  // the second buffer alone
  EXPECT_EQ(Row(b, "B3").vs, "B2");  // then cp.async alone
  // 4 stages take as long as 3: within noise.
  EXPECT_EQ(Row(b, "B5").vs, "B4");
  EXPECT_TRUE(Row(b, "B5").change->within_noise());
  // B1 missing: B0 has no successor change from it, and B1 has none.
  EXPECT_FALSE(Row(b, "B1").change.has_value());
  EXPECT_EQ(Row(b, "B6").status, "missing");
}

TEST(Report, WithinNoiseIsMarked) {
  v1::GetRunResponse run = LadderRun();
  Add4096(run, "abl_L1_R1_bl0_s1_sw1", "bf16", 0.60);  // B1 = B0: flat, as expected
  Report r = BuildReport(run);
  const ReportRow& b1 = Row(Table(r, "ladder_b"), "B1");
  ASSERT_TRUE(b1.change.has_value());
  EXPECT_TRUE(b1.change->within_noise());
  EXPECT_THAT(RenderReportMarkdown(r), HasSubstr("| B1 | cp.async, 1 stage |"));
  EXPECT_THAT(RenderReportMarkdown(r), HasSubstr("≈"));
}

TEST(Report, B4IsMissingWhenOnlyOtherShapesAreMeasured) {
  v1::GetRunResponse run;
  Add(run, "abl_L1_R1_bl0_s3_sw1", "bf16", 512, 512, 256, 0.01);
  Report r = BuildReport(run);
  // 512x512x256 becomes the reference shape (the run has no 4096^3).
  const ReportRow& b4 = Row(Table(r, "ladder_b"), "B4");
  EXPECT_EQ(b4.status, "ok");
  EXPECT_EQ(b4.shape.k(), 256);
}

TEST(Report, ShapesMatrixHasThePlanShapesAndMeasuredCells) {
  Report r = BuildReport(LadderRun());
  const ReportTable& s = Table(r, "shapes");
  EXPECT_EQ(s.column_shapes.size(), 10u);
  EXPECT_EQ(s.row_keys.size(), 8u);  // B0..B6 and cuBLAS
  EXPECT_EQ(s.rows.size(), 80u);
  int measured = s.measured();
  EXPECT_EQ(measured, 2 + 5 + 1);  // at 4096^3: B0 B2 B3 B4 B5 and cuBLAS; at K=256: B4, cuBLAS
  const std::string md = RenderReportMarkdown(r);
  EXPECT_THAT(md, HasSubstr("| rung | 512x512x256 |"));
  EXPECT_THAT(md, HasSubstr("Small K"));
}

TEST(Report, PipeliningTablePerDtypeAndTile) {
  v1::GetRunResponse run;
  Add4096(run, "pipe_baseline_f16_128x128x32", "fp16", 1.0);
  Add4096(run, "pipe_cpasync_f16_128x128x32", "fp16", 0.74);
  Add4096(run, "cublas_fp16", "fp16", 0.2);
  Report r = BuildReport(run);
  const ReportTable& p = Table(r, "pipelining");
  const ReportRow& cp = p.rows[2];
  EXPECT_EQ(cp.label, "cp.async");
  EXPECT_EQ(cp.variant, "pipe_cpasync_f16_128x128x32");
  EXPECT_EQ(cp.vs, "baseline");
  EXPECT_NEAR(cp.change->estimate, 1.0 / 0.74 - 1, 1e-9);  // speedup 1.35x
  EXPECT_EQ(p.rows[1].status, "missing");                  // LDG
  EXPECT_EQ(p.rows[1].variant, "pipe_ldg_f16_128x128x32");
  // int8 and fp32 were not measured at all: their rows are missing, named by pattern.
  bool i8 = false;
  for (const auto& row : p.rows)
    i8 |= row.variant == "pipe_baseline_i8_*" && row.status == "missing";
  EXPECT_TRUE(i8);
}

TEST(Report, ArchPicksTheBestAblationVariant) {
  v1::GetRunResponse run = LadderRun();
  Add4096(run, "simt_tiling", "fp32", 8.0);
  Add4096(run, "simt_at", "fp32", 7.0);
  Add4096(run, "cublas_fp32", "fp32", 3.0);
  Report r = BuildReport(run);
  const ReportTable& arch = Table(r, "arch");
  const ReportRow& best = Row(arch, "best bf16");
  EXPECT_EQ(best.variant, "abl_L1_R1_bl0_s3_sw1");  // 0.42 ms, the first of the ties
  EXPECT_EQ(Row(arch, "S2").vs, "S1");
  EXPECT_EQ(Row(arch, "S3").status, "missing");
  EXPECT_NEAR(*Row(arch, "S2").cublas_share, 3.0 / 7.0, 1e-9);
}

TEST(Report, AnUnmeasuredTableSaysSo) {
  const std::string md = RenderReportMarkdown(BuildReport(LadderRun()));
  EXPECT_THAT(md, HasSubstr("## 1. Architecture"));
  EXPECT_THAT(md, HasSubstr("all 12 rows missing (`ablation-client sweep --preset pipelining`"));
  EXPECT_THAT(md, HasSubstr("| B3 vs B2 |"));
  EXPECT_THAT(md, HasSubstr("## 2. Ladder A"));
  EXPECT_THAT(md, HasSubstr("| A3 | ldmatrix | `abl_L1_R1_bl0_s3_sw1` | bf16 |"));
  EXPECT_THAT(md,
              HasSubstr("| B1 | cp.async, 1 stage | `abl_L1_R1_bl0_s1_sw1` | bf16 | missing |"));
  EXPECT_THAT(md, HasSubstr("Reading notes"));
  EXPECT_THAT(md, HasSubstr("not bandwidth"));
  EXPECT_THAT(md, HasSubstr("expected to be flat"));
}

TEST(Report, JsonIsValidAndCsvHasEveryRow) {
  Report r = BuildReport(LadderRun());
  google::protobuf::Struct parsed;
  const std::string json = RenderReportJson(r);
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(json, &parsed).ok()) << json;
  EXPECT_EQ(parsed.fields().at("tables").list_value().values_size(), 6);
  EXPECT_THAT(json, HasSubstr("\"status\": \"missing\""));
  std::size_t rows = 0;
  for (const auto& t : r.tables) rows += t.rows.size();
  const std::string csv = RenderReportCsv(r);
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), static_cast<long>(rows + 1));
}

TEST(Report, HtmlIsSelfContainedWithCharts) {
  const std::string html = RenderReportHtml(BuildReport(LadderRun()));
  EXPECT_THAT(html, HasSubstr("<svg class=\"chart\" id=\"chart-ladder_a\""));
  EXPECT_THAT(html, HasSubstr("<svg class=\"heatmap\""));
  EXPECT_THAT(html, HasSubstr("<style>"));
  EXPECT_THAT(html, Not(HasSubstr("<script")));
  EXPECT_THAT(html, Not(HasSubstr("http://www.w3.org/1999")));  // only the SVG namespace URI
  EXPECT_THAT(html, Not(HasSubstr("https://")));
  EXPECT_THAT(HtmlEscape("<a & \"b\">"), "&lt;a &amp; &quot;b&quot;&gt;");
}

TEST(Report, EmptyRun) {
  v1::GetRunResponse run;
  run.mutable_run()->set_id(1);
  Report r = BuildReport(run);
  EXPECT_THAT(RenderReportMarkdown(r), HasSubstr("No measurements."));
  google::protobuf::Struct parsed;
  EXPECT_TRUE(google::protobuf::util::JsonStringToMessage(RenderReportJson(r), &parsed).ok());
}

}  // namespace
}  // namespace ablation::client::report
