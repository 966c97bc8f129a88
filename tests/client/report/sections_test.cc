// The report's sections are the presets' (ListPresets): a made-up catalogue gives its own tables,
// labels, comparisons and notes, and nothing of the built-in ones.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "client/report/report.h"
#include "client/report/run_index.h"
#include "tests/client/support/served_catalog.h"

namespace ablation::client::report {
namespace {

namespace v1 = ::ablation::v1;
using ::testing::HasSubstr;
using ::testing::Not;

void Add(v1::GetRunResponse& run, const std::string& variant, const std::string& dtype,
         std::int64_t k, double ms) {
  v1::Measurement* x = run.add_measurements();
  x->set_variant(variant);
  x->set_dtype(dtype);
  x->mutable_shape()->set_m(4096);
  x->mutable_shape()->set_n(4096);
  x->mutable_shape()->set_k(k);
  x->set_status(v1::MEASUREMENT_STATUS_OK);
  x->set_sequence(run.measurements_size());
  // 31 tight samples around `ms`, their median `ms` itself: changes are exact ratios, far outside
  // the noise.
  for (int i = 0; i < 31; ++i) x->add_sample_ms(ms * (1 + 0.0001 * (i - 15)));
  x->mutable_stats()->set_median_ms(ms);
  x->mutable_stats()->set_samples(31);
  x->set_tflops(2.0 * 4096 * 4096 * double(k) / (ms * 1e-3) / 1e12);
}

v1::Report Build(const std::string& toml, const v1::GetRunResponse& run) {
  return BuildReport(run, testing::ServedPresets(toml), testing::ServedVariants());
}

const char* kToy = R"(
[toy]
description = "a made-up ladder over three swizzle-free variants"
variants = ["abl_L0_R0_bl0_s1_sw0", "abl_L1_R0_bl0_s1_sw0", "abl_L1_R1_bl0_s1_sw0", "cublas_bf16"]
title = "Toy: three steps"
scope = "{dtype} at {shape}, made up"
order = 7
notes = ["Z2 is compared with the faster of Z0 and Z1.", "Made up | for tests."]

  [[toy.rung]]
  id = "Z0"
  label = "the start"
  variant = "abl_L0_R0_bl0_s1_sw0"

  [[toy.rung]]
  id = "Z1"
  label = "cp.async alone"
  variant = "abl_L1_R0_bl0_s1_sw0"

  [[toy.rung]]
  id = "Z2"
  label = "and ldmatrix"
  variant = "abl_L1_R1_bl0_s1_sw0"
  against = ["Z0", "Z1"]

  [[toy.rung]]
  id = "ref"
  label = "the library"
  variant = "cublas_bf16"
  against = ""

[other]
description = "a second section, before the first by order"
variants = ["abl_L0_R0_bl0_s1_sw0"]
order = 3
  [[other.rung]]
  id = "only"
  variant = "abl_L0_R0_bl0_s1_sw0"
)";

v1::GetRunResponse ToyRun() {
  v1::GetRunResponse run;
  run.mutable_run()->set_id(3);
  run.mutable_run()->set_state(v1::RUN_STATE_SUCCEEDED);
  Add(run, "abl_L0_R0_bl0_s1_sw0", "bf16", 4096, 0.80);
  Add(run, "abl_L1_R0_bl0_s1_sw0", "bf16", 4096, 0.50);
  Add(run, "abl_L1_R1_bl0_s1_sw0", "bf16", 4096, 0.40);
  Add(run, "cublas_bf16", "bf16", 4096, 0.20);
  return run;
}

// A row of one round: three samples of `ms`, their SM cycles at a steady 1980 MHz.
void AddRound(v1::GetRunResponse& run, const std::string& variant, int round, double ms,
              int low_clock = -1) {
  v1::Measurement* x = run.add_measurements();
  x->set_variant(variant);
  x->set_dtype("bf16");
  *x->mutable_shape() = MakeShape(4096, 4096, 4096);
  x->set_status(v1::MEASUREMENT_STATUS_OK);
  x->set_round(round);
  x->set_sequence(run.measurements_size());
  for (int i = 0; i < 3; ++i) {
    x->add_sample_ms(ms);
    x->add_sample_cycles(ms * 1980e3);
  }
  x->mutable_stats()->set_median_ms(ms);
  x->mutable_stats()->set_samples(3);
  if (low_clock >= 0) x->mutable_stats()->set_low_clock_samples(low_clock);
  x->set_tflops(2.0 * 4096 * 4096 * 4096 / (ms * 1e-3) / 1e12);
}

TEST(Sections, AMadeUpLadderGivesItsOwnTable) {
  const v1::Report r = Build(kToy, ToyRun());
  ASSERT_EQ(r.sections_size(), 3);  // other (order 3), toy (order 7), all
  EXPECT_EQ(r.sections(0).id(), "other");
  EXPECT_EQ(r.sections(0).title(), "other");  // no title: the name
  EXPECT_EQ(r.sections(2).id(), "all");
  const v1::ReportSection& toy = r.sections(1);
  EXPECT_EQ(toy.id(), "toy");
  EXPECT_EQ(toy.title(), "Toy: three steps");
  EXPECT_EQ(toy.scope(), "bf16 at 4096x4096x4096, made up");
  ASSERT_EQ(toy.rows_size(), 4);
  EXPECT_EQ(toy.rows(0).rung(), "Z0");
  EXPECT_FALSE(toy.rows(0).has_change());
  EXPECT_EQ(toy.rows(1).vs(), "Z0");  // by default, the previous rung
  EXPECT_DOUBLE_EQ(toy.rows(1).change().estimate(), 0.80 / 0.50 - 1);
  EXPECT_EQ(toy.rows(2).vs(), "Z1");  // the faster of Z0 and Z1
  EXPECT_DOUBLE_EQ(toy.rows(2).change().estimate(), 0.50 / 0.40 - 1);
  EXPECT_FALSE(toy.rows(3).has_change());
  EXPECT_DOUBLE_EQ(toy.rows(2).cublas_share(), 0.20 / 0.40);
  EXPECT_EQ(toy.notes_size(), 2);

  const std::string md = RenderReportMarkdown(r);
  EXPECT_THAT(md, HasSubstr("\n## 1. other\n\n_"));
  EXPECT_THAT(md, HasSubstr("\n## 2. Toy: three steps\n\n_bf16 at 4096x4096x4096, made up_\n\n"
                            "| rung | what | variant | dtype | TFLOPS | share of cuBLAS | vs | "
                            "change [95% CI] | noise |\n"));
  EXPECT_THAT(md, HasSubstr("| Z0 | the start | `abl_L0_R0_bl0_s1_sw0` | bf16 | 171.8 | 25.0% | "
                            "- | - |  |\n"));
  EXPECT_THAT(md, HasSubstr("| Z1 | cp.async alone | `abl_L1_R0_bl0_s1_sw0` | bf16 | 274.9 | "
                            "40.0% | Z0 | +60.0% ["));
  EXPECT_THAT(md, HasSubstr("| Z2 | and ldmatrix | `abl_L1_R1_bl0_s1_sw0` | bf16 | 343.6 | "
                            "50.0% | Z1 | +25.0% ["));
  EXPECT_THAT(md, HasSubstr("| ref | the library | `cublas_bf16` | bf16 | 687.2 | 100.0% | - | - "
                            "|  |\n"));
  EXPECT_THAT(md, HasSubstr("Reading notes:\n\n- Z2 is compared with the faster of Z0 and Z1.\n"
                            "- Made up | for tests.\n"));
  EXPECT_THAT(md, Not(HasSubstr("Ladder A")));
  EXPECT_THAT(md, HasSubstr("## 3. All measurements of the run"));
}

TEST(Sections, ASectionTheRunDidNotMeasureSaysHowToMeasureIt) {
  v1::GetRunResponse run;
  Add(run, "cublas_fp16", "fp16", 4096, 0.2);
  const std::string md = RenderReportMarkdown(Build(kToy, run));
  // Not drawn: named in one line with how to measure it.
  EXPECT_THAT(md, HasSubstr("Not measured in this run, so not shown: other (`ablation-client "
                            "sweep --preset other`), Toy: three steps (`ablation-client sweep "
                            "--preset toy`).\n"));
  EXPECT_THAT(md, Not(HasSubstr("## 1. Toy")));
}

// A section whose every row failed is a result: drawn, each row with its error, not "not
// measured".
TEST(Sections, ASectionWhoseRowsFailedIsShownWithTheErrors) {
  v1::GetRunResponse run;
  Add(run, "abl_L0_R0_bl0_s1_sw0", "bf16", 4096, 0.5);
  run.mutable_measurements(0)->set_status(v1::MEASUREMENT_STATUS_FAILED);
  run.mutable_measurements(0)->set_error("illegal address");
  const v1::Report r = Build(kToy, run);
  const std::string md = RenderReportMarkdown(r);
  EXPECT_THAT(md, HasSubstr("## 1. other"));
  EXPECT_THAT(md, HasSubstr("| only |  | `abl_L0_R0_bl0_s1_sw0` | bf16 | failed |"));
  EXPECT_THAT(md, HasSubstr("| 1 | `abl_L0_R0_bl0_s1_sw0` | bf16 | 4096x4096x4096 | failed | - | 0 "
                            "| failed: illegal address |"));
  const std::string html = RenderReportHtml(r);
  EXPECT_THAT(html, HasSubstr("<section id=\"other\">"));
  EXPECT_THAT(html, HasSubstr("Failed, so not drawn: only."));
}

TEST(Sections, PerTileRungsRepeatForEveryTileMeasured) {
  v1::GetRunResponse run;
  Add(run, "pipe_baseline_f16_64x64x16", "fp16", 4096, 2.0);
  Add(run, "pipe_ldg_f16_64x64x16", "fp16", 4096, 1.6);
  Add(run, "pipe_baseline_f16_128x128x32", "fp16", 4096, 1.0);
  Add(run, "pipe_ldg_f16_128x128x32", "fp16", 4096, 0.8);
  Add(run, "cublas_fp16", "fp16", 4096, 0.5);
  const v1::Report r = Build(R"(
[pipes]
description = "d"
dtype = "fp16"
variants = ["pipe_baseline_f16_*", "pipe_ldg_f16_*", "cublas_fp16"]
  [[pipes.rung]]
  id = "base"
  label = "baseline"
  variant = "pipe_baseline_*"
  per_tile = true
  [[pipes.rung]]
  id = "ldg"
  label = "LDG"
  variant = "pipe_ldg_*"
  per_tile = true
  [[pipes.rung]]
  id = "cuBLAS"
  label = "cuBLAS {dtype}"
  variant = "cublas_{dtype}"
  against = "base"
)",
                             run);
  const v1::ReportSection& s = r.sections(0);
  ASSERT_EQ(s.rows_size(), 5);
  EXPECT_EQ(s.rows(0).what(), "fp16, tile 128x128x32: baseline");
  EXPECT_EQ(s.rows(0).variant(), "pipe_baseline_f16_128x128x32");
  EXPECT_EQ(s.rows(1).variant(), "pipe_ldg_f16_128x128x32");
  EXPECT_EQ(s.rows(1).vs_variant(), "pipe_baseline_f16_128x128x32");  // its own tile's
  EXPECT_DOUBLE_EQ(s.rows(1).change().estimate(), 1.0 / 0.8 - 1);
  EXPECT_EQ(s.rows(2).what(), "fp16, tile 64x64x16: baseline");
  EXPECT_EQ(s.rows(3).vs_variant(), "pipe_baseline_f16_64x64x16");
  EXPECT_DOUBLE_EQ(s.rows(3).change().estimate(), 2.0 / 1.6 - 1);
  EXPECT_EQ(s.rows(4).what(), "cuBLAS fp16");
  EXPECT_TRUE(s.rows(4).baseline());
  EXPECT_FALSE(s.rows(4).has_change());  // a per-tile rung is no rung of the whole section
}

TEST(Sections, PerShapeIsAMatrixOverThePresetsAndTheRunsShapes) {
  v1::GetRunResponse run = ToyRun();
  Add(run, "abl_L1_R0_bl0_s1_sw0", "bf16", 256, 0.04);
  Add(run, "abl_L1_R1_bl0_s1_sw0", "bf16", 128, 0.03);
  const v1::Report r = Build(R"(
[sweep]
description = "d"
shapes = ["4096x4096x256", "4096x4096x512"]
variants = ["abl_L0_R0_bl0_s1_sw0", "abl_L1_R0_bl0_s1_sw0", "abl_L1_R1_bl0_s1_sw0"]
per_shape = true
  [[sweep.rung]]
  id = "Z0"
  variant = "abl_L0_R0_bl0_s1_sw0"
  [[sweep.rung]]
  id = "Z1"
  variant = "abl_L1_R0_bl0_s1_sw0"
)",
                             run);
  const v1::ReportSection& s = r.sections(0);
  EXPECT_EQ(s.layout(), v1::SECTION_LAYOUT_SHAPES);
  // The preset's two and the run's two others of these rungs (K = 4096; Z1 at K = 256 is one
  // of the preset's); not K = 128, measured by no rung of the section.
  ASSERT_EQ(s.shapes_size(), 3);
  EXPECT_EQ(s.shapes(0).k(), 256);
  EXPECT_EQ(s.shapes(1).k(), 512);
  EXPECT_EQ(s.shapes(2).k(), 4096);
  ASSERT_EQ(s.rows_size(), 6);
  EXPECT_EQ(s.rows(1).rung(), "Z0");
  EXPECT_EQ(s.rows(1).status(), v1::ROW_STATUS_MISSING);  // Z0 at K = 512
  EXPECT_EQ(s.rows(3).status(), v1::ROW_STATUS_OK);       // Z1 at K = 256
  EXPECT_EQ(s.rows(5).vs(), "Z0");
  const std::string md = RenderReportMarkdown(r);
  // K = 512, where nothing was measured, is left out and named.
  EXPECT_THAT(md, HasSubstr("| rung | 4096x4096x256 | 4096x4096x4096 |\n"));
  EXPECT_THAT(md, HasSubstr("Not measured in this run: at 4096x4096x512.\n"));
  // One round: the change is marked, and the legend says what that means.
  EXPECT_THAT(md, HasSubstr("| Z1 vs Z0 | - | +60.0%† |\n"));
  EXPECT_THAT(md, HasSubstr("\n† one round: interval from samples, drift not included.\n"));
}

TEST(Sections, AGlobRungIsTheFastestItSelects) {
  const v1::Report r = Build(R"(
[best]
description = "d"
variants = ["abl_L1_*_s1_sw0"]
  [[best.rung]]
  id = "best"
  label = "the fastest of them"
  variant = "abl_L1_*_s1_sw0"
)",
                             ToyRun());
  EXPECT_EQ(r.sections(0).rows(0).variant(), "abl_L1_R1_bl0_s1_sw0");  // 0.40 ms
}

TEST(Sections, RoundsGiveTheIntervalTheFloorCyclesAndLowClock) {
  // Two rounds. Z0 0.80 and 0.82 ms; Z1 0.50 and 0.40 (low clock in its second round); Z2 0.40
  // and 0.41; cuBLAS 0.20 and 0.205. Medians over both rounds: 0.81, 0.45, 0.405, 0.2025.
  v1::GetRunResponse run = ToyRun();
  run.clear_measurements();
  run.mutable_run()->set_rounds(2);
  for (int r = 0; r < 2; ++r) {
    AddRound(run, "abl_L0_R0_bl0_s1_sw0", r, r ? 0.82 : 0.80, 0);
    AddRound(run, "abl_L1_R0_bl0_s1_sw0", r, r ? 0.40 : 0.50, r ? 3 : 0);
    AddRound(run, "abl_L1_R1_bl0_s1_sw0", r, r ? 0.41 : 0.40);
    AddRound(run, "cublas_bf16", r, r ? 0.205 : 0.20);
  }
  const v1::Report report = Build(kToy, run);
  // Round spreads (max - min) / median: 0.02 / 0.81, 0.1 / 0.45, 0.01 / 0.405, 0.005 / 0.2025,
  // i.e. 2.469%, 22.2%, 2.469%, 2.469%: the floor is their median, 2.469%; the same in cycles.
  EXPECT_NEAR(report.method().floor(), 0.02 / 0.81, 1e-12);
  EXPECT_NEAR(report.method().cycles_floor(), 0.02 / 0.81, 1e-12);
  EXPECT_EQ(report.run().rounds(), 2);
  const v1::ReportSection& toy = report.sections(1);
  // Z1 against Z0, paired over the 4 draws of 2 rounds: {0,0} 0.80 / 0.50 - 1 = 0.6, {0,1} and
  // {1,0} 0.81 / 0.45 - 1 = 0.8, {1,1} 0.82 / 0.40 - 1 = 1.05. Low at rank 0.075: 0.6 + 0.075 *
  // 0.2 = 0.615; high at rank 2.925: 0.8 + 0.925 * 0.25 = 1.03125; the estimate 0.81/0.45 - 1.
  const v1::ReportRow& z1 = toy.rows(1);
  EXPECT_EQ(z1.rounds(), 2);
  EXPECT_EQ(z1.samples(), 6);
  EXPECT_DOUBLE_EQ(z1.median_ms(), 0.45);
  EXPECT_NEAR(z1.change().estimate(), 0.8, 1e-12);
  EXPECT_NEAR(z1.change().interval().low(), 0.615, 1e-12);
  EXPECT_NEAR(z1.change().interval().high(), 1.03125, 1e-12);
  EXPECT_EQ(z1.change().basis(), v1::CHANGE_BASIS_ROUNDS);
  EXPECT_NEAR(z1.change().floor(), 0.02 / 0.81, 1e-12);
  EXPECT_FALSE(z1.change().within_noise());
  EXPECT_NEAR(z1.cycles_change().estimate(), 0.8, 1e-12);  // a steady clock: the same
  EXPECT_DOUBLE_EQ(z1.low_clock_share(), 0.5);             // 3 of its 6 samples
  EXPECT_NEAR(z1.round_spread(), 0.1 / 0.45, 1e-12);
  // Z2 against Z1 (the faster of Z0 and Z1): {0,0} 0.50 / 0.40 - 1 = 0.25, {0,1} and {1,0}
  // 0.45 / 0.405 - 1 = 0.1111, {1,1} 0.40 / 0.41 - 1 = -0.02439. Low: -0.02439 + 0.075 * 0.1355
  // = -0.014228; high: 0.1111 + 0.925 * 0.1389 = 0.239583: around 0, within noise.
  const v1::ReportRow& z2 = toy.rows(2);
  EXPECT_NEAR(z2.change().interval().low(), -0.0142276, 1e-6);
  EXPECT_NEAR(z2.change().interval().high(), 0.2395833, 1e-6);
  EXPECT_TRUE(z2.change().within_noise());

  const std::string md = RenderReportMarkdown(report);
  EXPECT_THAT(md, HasSubstr("a bootstrap over the run's 2 rounds, paired"));
  EXPECT_THAT(md, HasSubstr("Noise floor: 2.47% (cycles 2.47%)"));
  EXPECT_THAT(md,
              HasSubstr("| vs | change [95% CI] | noise | cycles change [95% CI] | low clock |"));
  EXPECT_THAT(md, HasSubstr("| Z1 | cp.async alone | `abl_L1_R0_bl0_s1_sw0` | bf16 | 305.4 | 45.0% "
                            "| Z0 | +80.0% [+61.5, +103.1] |  | +80.0% [+61.5, +103.1] | 50% |\n"));
  EXPECT_THAT(md, HasSubstr("| Z2 | and ldmatrix | `abl_L1_R1_bl0_s1_sw0` | bf16 | 339.4 | 50.0% "
                            "| Z1 | +11.1% [-1.4, +24.0] | ≈ | +11.1% [-1.4, +24.0] ≈ | - |\n"));
  EXPECT_THAT(md, Not(HasSubstr("†")));
  EXPECT_THAT(md, HasSubstr("| 2 | `abl_L1_R0_bl0_s1_sw0` | bf16 | 4096x4096x4096 | 305.4 | 45.0% "
                            "| 2 | 50% | ok |\n"));
  const std::string html = RenderReportHtml(report);
  EXPECT_THAT(html, HasSubstr("<th>cycles change [95% CI]</th><th>low clock</th>"));
  EXPECT_THAT(html,
              HasSubstr("<td class=\"num\">+80.0% [+61.5, +103.1]</td><td class=\"num\">50%</td>"));
  const std::string csv = RenderReportCsv(report);
  EXPECT_THAT(
      csv,
      HasSubstr(",0.8,0.6150000000000001,1.0312499999999998,false,,2,0,rounds,0.0246913580246"));
}

TEST(Sections, AnItemWithAFailedRoundIsMeasuredByTheOthers) {
  v1::GetRunResponse run = ToyRun();
  run.clear_measurements();
  AddRound(run, "abl_L0_R0_bl0_s1_sw0", 0, 0.8);
  AddRound(run, "abl_L0_R0_bl0_s1_sw0", 1, 0.8);
  v1::Measurement* failed = run.mutable_measurements(1);
  failed->set_status(v1::MEASUREMENT_STATUS_FAILED);
  failed->set_error("illegal address");
  AddRound(run, "abl_L1_R0_bl0_s1_sw0", 0, 0.5);
  AddRound(run, "abl_L1_R0_bl0_s1_sw0", 1, 0.5);
  v1::Measurement* both = run.add_measurements();  // no round of it measured
  *both = run.measurements(1);
  both->set_variant("abl_L1_R1_bl0_s1_sw0");
  const v1::Report report = Build(kToy, run);
  const v1::ReportRow& z0 = report.sections(1).rows(0);
  EXPECT_EQ(z0.status(), v1::ROW_STATUS_OK);
  EXPECT_EQ(z0.rounds(), 1);
  EXPECT_EQ(z0.failed_rounds(), 1);
  // Z1 has 2 rounds, Z0 only round 0: the rounds in common are fewer than 2, so samples.
  EXPECT_EQ(report.sections(1).rows(1).change().basis(), v1::CHANGE_BASIS_SAMPLES);
  EXPECT_EQ(report.sections(1).rows(2).status(), v1::ROW_STATUS_FAILED);
  EXPECT_EQ(report.sections(1).rows(2).error(), "illegal address");
  const std::string md = RenderReportMarkdown(report);
  EXPECT_THAT(md, HasSubstr("| 1 | ok (1 of 2 rounds not measured) |\n"));
  EXPECT_THAT(md, HasSubstr("| 0 | failed: illegal address |\n"));
}

}  // namespace
}  // namespace ablation::client::report
