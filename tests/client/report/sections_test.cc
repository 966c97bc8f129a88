// The report's sections are the presets' (ListPresets): a made-up set of presets gives its own
// tables, labels, comparisons and notes, and nothing of the built-in ones.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <tuple>
#include <vector>

#include "client/report/report.h"
#include "client/report/run_index.h"
#include "client/report/text.h"
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

// A row of 4096^3 of one round: a sample of `ms` times each of `spread` (their median 1), their
// SM cycles at `mhz`.
v1::Measurement* AddSpreadRound(v1::GetRunResponse& run, const std::string& variant, int round,
                                double ms, const std::vector<double>& spread, double mhz) {
  v1::Measurement* x = run.add_measurements();
  x->set_variant(variant);
  x->set_dtype("bf16");
  *x->mutable_shape() = MakeShape(4096, 4096, 4096);
  x->set_status(v1::MEASUREMENT_STATUS_OK);
  x->set_round(round);
  x->set_sequence(run.measurements_size());
  for (double f : spread) {
    x->add_sample_ms(ms * f);
    x->add_sample_cycles(ms * f * mhz * 1e3);
  }
  x->mutable_stats()->set_median_ms(ms);
  x->mutable_stats()->set_samples(int(spread.size()));
  x->set_tflops(2.0 * 4096 * 4096 * 4096 / (ms * 1e-3) / 1e12);
  return x;
}

// A row of one round: three samples of `ms`, their SM cycles at a steady 1980 MHz.
void AddRound(v1::GetRunResponse& run, const std::string& variant, int round, double ms,
              int low_clock = -1) {
  v1::Measurement* x = AddSpreadRound(run, variant, round, ms, {1, 1, 1}, 1980);
  if (low_clock >= 0) x->mutable_stats()->set_low_clock_samples(low_clock);
}

// A round of nine samples of 4096^3 at `ms` (1% apart at the quartiles), its SM cycles at `mhz`.
void AddLevelRound(v1::GetRunResponse& run, const std::string& variant, int round, double ms,
                   double mhz) {
  AddSpreadRound(run, variant, round, ms, {0.99, 0.995, 0.995, 1.0, 1.0, 1.0, 1.005, 1.005, 1.01},
                 mhz);
}

// Z1 takes 0.50 ms in round 0 and 0.60 in round 1 at the same clock: the same work at two
// levels. Z0 takes 0.80 and 0.90 ms, but its clock fell from 1980 to 1760 MHz (0.8 x 1980 = 0.9
// x 1760): on SM cycles its rounds agree, so it is not apart. Z2 and cuBLAS agree in both.
TEST(Sections, RoundsOnTwoLevelsAreNamedUnderTheTableAndAClockMoveIsNot) {
  v1::GetRunResponse run;
  run.mutable_run()->set_id(4);
  run.mutable_run()->set_rounds(2);
  for (int r = 0; r < 2; ++r) {
    AddLevelRound(run, "abl_L0_R0_bl0_s1_sw0", r, r ? 0.90 : 0.80, r ? 1760 : 1980);
    AddLevelRound(run, "abl_L1_R0_bl0_s1_sw0", r, r ? 0.60 : 0.50, 1980);
    AddLevelRound(run, "abl_L1_R1_bl0_s1_sw0", r, 0.40, 1980);
    AddLevelRound(run, "cublas_bf16", r, 0.20, 1980);
  }
  const v1::Report report = Build(kToy, run);
  const v1::ReportSection& toy = report.sections(1);
  ASSERT_EQ(toy.id(), "toy");
  EXPECT_FALSE(toy.rows(0).has_rounds_apart());  // Z0: a clock move
  ASSERT_TRUE(toy.rows(1).has_rounds_apart());
  const v1::RoundsApart& a = toy.rows(1).rounds_apart();
  EXPECT_NEAR(a.spread(), 0.1 / 0.55, 1e-12);  // the medians' (max - min) / median
  EXPECT_NEAR(a.within(), 0.01, 1e-12);        // (1.005 - 0.995) / 1.0
  EXPECT_EQ(a.basis(), "cycles");
  const double flops = 2.0 * 4096 * 4096 * 4096;
  ASSERT_EQ(a.round_tflops_size(), 2);
  EXPECT_NEAR(a.round_tflops(0), flops / 0.50e-3 / 1e12, 1e-6);
  EXPECT_NEAR(a.round_tflops(1), flops / 0.60e-3 / 1e12, 1e-6);
  EXPECT_FALSE(toy.rows(2).has_rounds_apart());
  EXPECT_FALSE(toy.rows(3).has_rounds_apart());

  const std::string md = RenderReportMarkdown(report);
  EXPECT_THAT(md, HasSubstr(std::string("\n") + kRoundsApartNote + "\n\n"));
  EXPECT_THAT(md, HasSubstr("- Z1 `abl_L1_R0_bl0_s1_sw0` bf16 4096x4096x4096: rounds at 274.9 / "
                            "229.1 TFLOPS, 18.2% apart on SM cycles where a round's own spread "
                            "is 1.0%\n"));
  EXPECT_THAT(md, Not(HasSubstr("Z0 `abl_L0_R0_bl0_s1_sw0` bf16 4096x4096x4096: rounds at")));
  const std::string html = RenderReportHtml(report);
  EXPECT_THAT(html, HasSubstr("<li>Z1 abl_L1_R0_bl0_s1_sw0 bf16 4096x4096x4096: rounds at 274.9 / "
                              "229.1 TFLOPS, 18.2% apart on SM cycles where a round"));
  // Without SM cycles the same rounds are told apart in time, and so is Z0's clock move.
  for (v1::Measurement& m : *run.mutable_measurements()) m.clear_sample_cycles();
  const v1::ReportSection timed = Build(kToy, run).sections(1);
  ASSERT_TRUE(timed.rows(1).has_rounds_apart());
  EXPECT_EQ(timed.rows(1).rounds_apart().basis(), "time");
  EXPECT_TRUE(timed.rows(0).has_rounds_apart());
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

// A sweep of one preset draws that preset's section and any other it measured mostly ("other",
// whose one variant is the toy's Z0); one it touched only through a row or two it shares with
// the swept ladder ("wider": 1 of its 3 variants) is named in one line with how many of its rows
// the run measured, not drawn as if the run had been its sweep.
TEST(Sections, ASweepDrawsItsPresetsSectionAndNamesTheOthersItOnlyTouched) {
  const std::string toml = std::string(kToy) + R"(
[wider]
description = "a ladder that shares one variant with the toy"
variants = ["abl_L0_R0_bl0_s1_sw0", "abl_L1_R1_bl0_s3_sw1", "abl_L1_R1_bl0_s4_sw1"]
order = 9
  [[wider.rung]]
  id = "W0"
  variant = "abl_L0_R0_bl0_s1_sw0"
  [[wider.rung]]
  id = "W1"
  variant = "abl_L1_R1_bl0_s3_sw1"
  [[wider.rung]]
  id = "W2"
  variant = "abl_L1_R1_bl0_s4_sw1"
)";
  v1::GetRunResponse run = ToyRun();
  run.mutable_run()->set_request_json(R"({"preset":"toy","shapes":[{"m":"4096"}]})");
  const v1::Report r = Build(toml, run);
  EXPECT_EQ(r.run().preset(), "toy");
  const std::string md = RenderReportMarkdown(r);
  EXPECT_THAT(md, HasSubstr("\n## 1. other\n"));
  EXPECT_THAT(md, HasSubstr("\n## 2. Toy: three steps\n"));
  EXPECT_THAT(md, Not(HasSubstr(". wider")));
  EXPECT_THAT(md, HasSubstr("This run swept the preset toy; not drawn, as it measured them only "
                            "through the rows they share with it: wider (1 of 3 rows)."));
  EXPECT_THAT(md, HasSubstr("## 3. All measurements of the run"));
  const std::string html = RenderReportHtml(r);
  EXPECT_THAT(html, HasSubstr("<section id=\"toy\">"));
  EXPECT_THAT(html, Not(HasSubstr("<section id=\"wider\">")));

  // A run of named variants (no preset) and a preset that is no section draw every section the
  // run measured.
  for (const char* request : {"", R"({"variants":["cublas_bf16"]})", R"({"preset":"arch"})"}) {
    run.mutable_run()->set_request_json(request);
    const std::string all = RenderReportMarkdown(Build(toml, run));
    EXPECT_THAT(all, HasSubstr("## 3. wider")) << request;
    EXPECT_THAT(all, Not(HasSubstr("This run swept"))) << request;
  }
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
  // The methods are the last section: the figures come first, the page opens with one line.
  const std::size_t first = md.find("\n## 1. "),
                    methods = md.find("## How the figures were computed");
  ASSERT_NE(first, std::string::npos);
  ASSERT_NE(methods, std::string::npos);
  EXPECT_LT(first, methods);
  EXPECT_GT(md.find("Noise floor: 2.47%"), methods);
  EXPECT_LT(md.find(kMethodPointer), first);
  const std::string page = RenderReportHtml(report);
  EXPECT_LT(page.find("<section id=\"toy\">"), page.find("<section id=\"methods\">"));
  EXPECT_GT(page.find("Noise floor: 2.47%"), page.find("<section id=\"methods\">"));
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
              HasSubstr("<td class=\"num\" data-label=\"cycles change [95% CI]\">+80.0% [+61.5, "
                        "+103.1]</td><td class=\"num\" data-label=\"low clock\">50%</td>"));
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

// Paired runs: the items of one dtype and shape interleaved in one window per round.

// The clock of each round: a drift of +-3% between rounds that every row of a window shares.
constexpr double kRoundClock[] = {1.0, 0.97, 1.03};

// A row of `round` in `window` (0: none): per sample c, `cycles` SM cycles with a jitter of the
// row's own (`seed`), at 1980 MHz x the round's clock x `clock` x the power controller's swing at
// cycle c, which every row of the window shares; ms = cycles / MHz.
v1::Measurement* AddWindowed(v1::GetRunResponse& run, const std::string& variant, int round,
                             std::int64_t window, double cycles, double clock, int seed,
                             int n = 15) {
  v1::Measurement* x = run.add_measurements();
  x->set_variant(variant);
  x->set_dtype("bf16");
  *x->mutable_shape() = MakeShape(4096, 4096, 4096);
  x->set_status(v1::MEASUREMENT_STATUS_OK);
  x->set_round(round);
  x->set_sequence(run.measurements_size());
  x->set_regime(v1::REGIME_SUSTAINED);
  x->set_window(window);
  x->set_window_members(4);
  x->set_windows(1);
  x->set_conditioned(true);
  std::vector<double> ms, mhz;
  for (int c = 0; c < n; ++c) {
    const double swing = 1 + 0.01 * std::sin(1.3 * c + 2 * round);
    const double at = 1980 * kRoundClock[round] * clock * swing;
    const double own = cycles * (1 + 0.0005 * std::sin(1.7 * c + 0.9 * seed + round));
    x->add_sample_cycles(own);
    x->add_sample_sm_mhz(at);
    x->add_sample_ms(own / (at * 1e3));
    ms.push_back(own / (at * 1e3));
    mhz.push_back(at);
  }
  x->mutable_stats()->set_median_ms(Median(ms));
  x->mutable_stats()->set_median_sm_mhz(Median(mhz));
  x->mutable_stats()->set_samples(n);
  x->set_tflops(2.0 * 4096 * 4096 * 4096 / (Median(ms) * 1e-3) / 1e12);
  x->set_tflops_per_ghz(x->tflops() / (Median(mhz) / 1000));
  x->set_peak_share(x->tflops() / (0.5 * Median(mhz)));
  return x;
}

// The toy ladder in 3 rounds. Z1 does Z0's work at a clock 2% lower in their shared windows
// (it draws more power); Z2 does 10% less work than Z0 at Z0's clock. `window` gives a row's
// window from its round and item: shared by all four items, or one each.
v1::GetRunResponse PairedRun(std::int64_t (*window)(int round, int item), int rounds = 3) {
  v1::GetRunResponse run;
  run.mutable_run()->set_id(9);
  run.mutable_run()->set_state(v1::RUN_STATE_SUCCEEDED);
  run.mutable_run()->set_rounds(rounds);
  run.mutable_run()->set_regime(v1::REGIME_SUSTAINED);
  run.mutable_run()->set_paired(true);
  run.mutable_run()->set_clock_policy("observe");
  const std::tuple<const char*, double, double> items[] = {
      {"abl_L0_R0_bl0_s1_sw0", 1.6e6, 1.0},
      {"abl_L1_R0_bl0_s1_sw0", 1.6e6, 0.98},
      {"abl_L1_R1_bl0_s1_sw0", 1.6e6 / 1.1, 1.0},
      {"cublas_bf16", 0.8e6, 1.0}};
  for (int r = 0; r < rounds; ++r)
    for (int i = 0; i < 4; ++i) {
      const auto& [variant, cycles, clock] = items[i];
      AddWindowed(run, variant, r, window(r, i), cycles, clock, i);
    }
  return run;
}

std::int64_t Shared(int round, int) { return 10 + round; }
std::int64_t OwnWindow(int round, int item) { return 100 * (item + 1) + round; }

TEST(Sections, APairedChangeIsSplitIntoWorkAndClock) {
  v1::GetRunResponse run = PairedRun(Shared);
  // A failed clock probe: NaN cycles in Z1's first sample of round 0 and in Z0's second sample
  // of round 1. The other cycles keep their pairs.
  run.mutable_measurements(1)->set_sample_cycles(0, NAN);
  run.mutable_measurements(4)->set_sample_cycles(1, NAN);
  const v1::Report report = Build(kToy, run);
  EXPECT_EQ(report.run().regime(), v1::REGIME_SUSTAINED);
  EXPECT_TRUE(report.run().paired());
  const v1::ReportMethod& m = report.method();
  EXPECT_GT(m.floor(), 0.05);  // unpaired, the rounds' drift: 6%
  EXPECT_GT(m.paired_floor(), 0);
  EXPECT_LT(m.paired_floor(), 0.002);  // paired, the rows' own jitter
  EXPECT_LT(m.paired_cycles_floor(), 0.002);
  EXPECT_FALSE(m.paired().empty());

  // Z1 against Z0: 2% slower, all of it the clock: the same cycles at 0.98 of Z0's clock. Over
  // the rounds unpaired, -2% would be well within the drift's 6%.
  const v1::ReportSection& toy = report.sections(1);
  const v1::ReportRow& z1 = toy.rows(1);
  ASSERT_EQ(z1.vs(), "Z0");
  EXPECT_TRUE(z1.change().paired());
  EXPECT_EQ(z1.change().basis(), v1::CHANGE_BASIS_PAIRED_ROUNDS);
  EXPECT_EQ(z1.change().rounds(), 3);
  EXPECT_NEAR(z1.change().estimate(), -0.02, 5e-4);
  EXPECT_DOUBLE_EQ(z1.change().floor(), m.paired_floor());
  EXPECT_FALSE(z1.change().within_noise());
  EXPECT_TRUE(z1.cycles_change().paired());
  EXPECT_NEAR(z1.cycles_change().estimate(), 0, 5e-4);
  EXPECT_NEAR(z1.clock_change(), -0.02, 1e-9);
  EXPECT_EQ(z1.change_source(), "clock (power)");
  // (1 + time) = (1 + cycles)(1 + clock), give or take the medians.
  EXPECT_NEAR(1 + z1.change().estimate(),
              (1 + z1.cycles_change().estimate()) * (1 + z1.clock_change()), 5e-4);
  // Z2 against Z0 (the faster of Z0 and Z1): 10% less work at the same clock.
  const v1::ReportRow& z2 = toy.rows(2);
  ASSERT_EQ(z2.vs(), "Z0");
  EXPECT_NEAR(z2.change().estimate(), 0.1, 5e-4);
  EXPECT_NEAR(z2.cycles_change().estimate(), 0.1, 5e-4);
  EXPECT_NEAR(z2.clock_change(), 0, 1e-9);
  EXPECT_EQ(z2.change_source(), "work");
  // The rows' regime and clock-normalised throughput, medians over the rounds.
  EXPECT_EQ(z2.regime(), v1::REGIME_SUSTAINED);
  EXPECT_GT(z2.tflops_per_ghz(), 0);
  EXPECT_GT(z2.peak_share(), 0);

  const std::string md = RenderReportMarkdown(report);
  EXPECT_THAT(md, HasSubstr("; clocks observe; regime sustained, paired"));
  EXPECT_THAT(md, HasSubstr("- clocks: observe\n- regime: sustained, paired\n"));
  EXPECT_THAT(md, HasSubstr("Paired: a paired change comes from one window per round in which "
                            "both rows were interleaved"));
  EXPECT_THAT(md, HasSubstr("| TFLOPS | TF/GHz | % of peak | share of cuBLAS | vs | change [95% "
                            "CI] | noise | cycles change [95% CI] | clock change | source |\n"));
  EXPECT_THAT(md, HasSubstr("| Z0 | -2.0% ["));
  EXPECT_THAT(md, HasSubstr("] paired |  | +0.0% ["));
  EXPECT_THAT(md, HasSubstr("| -2.0% | clock (power) |\n"));
  EXPECT_THAT(md, HasSubstr("| +0.0% | work |\n"));
  const std::string html = RenderReportHtml(report);
  EXPECT_THAT(html, HasSubstr("; clocks observe; regime sustained, paired</p>"));
  EXPECT_THAT(html, HasSubstr("<th>regime</th><td>sustained, paired</td>"));
  EXPECT_THAT(html, HasSubstr("<th>TF/GHz</th><th>% of peak</th><th>share of cuBLAS</th>"));
  EXPECT_THAT(html, HasSubstr("<th>cycles change [95% CI]</th><th>clock change</th>"
                              "<th>source</th>"));
  // Each cell names its column (shown beside it where a narrow window stacks the row).
  EXPECT_THAT(html, HasSubstr("<td class=\"num\" data-label=\"clock change\">-2.0%</td><td "
                              "data-label=\"source\">clock (power)</td>"));
  const std::string csv = RenderReportCsv(report);
  EXPECT_THAT(csv, HasSubstr(",change_paired,clock_change,change_source,regime,tflops_per_ghz,"
                             "peak_share,shared_window,solo_tflops,"));
  EXPECT_THAT(csv, HasSubstr(",paired_rounds,"));
  EXPECT_THAT(csv, HasSubstr(",true,-0.0"));
  EXPECT_THAT(csv, HasSubstr(",clock (power),sustained,"));
}

TEST(Sections, APerShapeSectionShowsThePairedChangesParts) {
  const v1::Report report = Build(R"(
[sweep]
description = "d"
variants = ["abl_L0_R0_bl0_s1_sw0", "abl_L1_R0_bl0_s1_sw0"]
per_shape = true
  [[sweep.rung]]
  id = "Z0"
  variant = "abl_L0_R0_bl0_s1_sw0"
  [[sweep.rung]]
  id = "Z1"
  variant = "abl_L1_R0_bl0_s1_sw0"
)",
                                  PairedRun(Shared));
  const std::string md = RenderReportMarkdown(report);
  EXPECT_THAT(md, HasSubstr("| Z1 vs Z0 | -2.0% paired |\n"));
  EXPECT_THAT(md, HasSubstr("Paired changes in cycles and clock (source):\n\n| rung | "
                            "4096x4096x4096 |\n| --- | ---: |\n| Z1 | cycles +0.0%, clock -2.0% "
                            "(clock (power)) |\n"));
  const std::string html = RenderReportHtml(report);
  EXPECT_THAT(html, HasSubstr("<th>clock change</th><th>source</th>"));
}

TEST(Sections, RowsOfDifferentWindowsAreComparedUnpaired) {
  // The same rows, each item in a window of its own (an unpaired run): nothing to pair, the
  // rounds as before.
  v1::GetRunResponse run = PairedRun(OwnWindow);
  run.mutable_run()->set_paired(false);
  const v1::Report report = Build(kToy, run);
  EXPECT_TRUE(report.method().paired().empty());
  EXPECT_EQ(report.method().paired_floor(), 0);
  const v1::ReportRow& z1 = report.sections(1).rows(1);
  EXPECT_FALSE(z1.change().paired());
  EXPECT_EQ(z1.change().basis(), v1::CHANGE_BASIS_ROUNDS);
  EXPECT_NEAR(z1.change().estimate(), -0.02, 1e-3);
  EXPECT_TRUE(z1.change().within_noise());  // -2% against a floor of 6%
  EXPECT_FALSE(z1.cycles_change().paired());
  EXPECT_FALSE(z1.has_clock_change());
  EXPECT_EQ(z1.change_source(), "");
  const std::string md = RenderReportMarkdown(report);
  EXPECT_THAT(md, HasSubstr("- regime: sustained, unpaired\n"));
  EXPECT_THAT(md, Not(HasSubstr("| clock change |")));
  EXPECT_THAT(md, Not(HasSubstr("Paired:")));
  EXPECT_THAT(md, Not(HasSubstr(" paired |")));
}

TEST(Sections, OnePairedRoundTakesItsIntervalFromTheWindowsCycles) {
  const v1::Report report = Build(kToy, PairedRun(Shared, 1));
  const v1::ReportRow& z1 = report.sections(1).rows(1);
  EXPECT_EQ(z1.change().basis(), v1::CHANGE_BASIS_PAIRED_CYCLES);
  EXPECT_EQ(z1.change().note(), "one round: interval from the window's cycles, drift not included");
  EXPECT_TRUE(z1.change().has_interval());
  EXPECT_NEAR(z1.change().estimate(), -0.02, 5e-4);
  EXPECT_EQ(report.method().paired_floor(), 0);  // unknown with one round
  const std::string md = RenderReportMarkdown(report);
  EXPECT_THAT(md, HasSubstr("]† paired |"));
  EXPECT_THAT(md, HasSubstr("\n† one round: interval from the window's cycles, drift not "
                            "included.\n"));
  EXPECT_THAT(md, HasSubstr("Paired floor: unknown (under 2 rounds)."));
}

}  // namespace
}  // namespace ablation::client::report

namespace ablation::client::report {
namespace {

// A per-shape section's summary: each rung's geometric mean share of cuBLAS and of the best
// candidate (its rows' cublas_share and cublas_best_share), over every shape and over those of
// M <= 128 and of N <= 128, with the shapes counted; the baselines themselves are not rows of it,
// and a ladder gives none.
TEST(Sections, TheShareSummaryIsTheGeometricMeanOfEachRungsShares) {
  v1::ReportSection s;
  s.set_layout(v1::SECTION_LAYOUT_SHAPES);
  const std::vector<std::array<int64_t, 3>> shapes = {
      {1, 4096, 4096}, {128, 4096, 4096}, {4096, 16, 4096}};
  for (const auto& [m, n, k] : shapes) {
    v1::Shape* x = s.add_shapes();
    x->set_m(m);
    x->set_n(n);
    x->set_k(k);
  }
  // Rows as SetShares leaves them: each with its shares of cuBLAS and of the best candidate; both
  // baselines flagged as Fill flags them.
  auto rung = [&](const std::string& id, const std::string& variant, std::vector<double> of_cublas,
                  std::vector<double> of_best, bool baseline) {
    for (size_t c = 0; c < shapes.size(); ++c) {
      v1::ReportRow* r = s.add_rows();
      r->set_rung(id);
      r->set_variant(variant);
      r->set_status(v1::ROW_STATUS_OK);
      r->set_tflops(1);
      *r->mutable_shape() = s.shapes(int(c));
      r->set_baseline(baseline);
      r->set_cublas_share(of_cublas[c]);
      r->set_cublas_best_share(of_best[c]);
    }
  };
  rung("S1", "sm90_s1", {0.5, 0.8, 1.25}, {0.5, 0.8, 1.0}, false);
  rung("cuBLAS", "cublas_bf16", {1, 1, 1}, {1, 1, 0.8}, true);
  rung("best", "cublas_bf16_best", {1, 1, 1.25}, {1, 1, 1}, true);
  const Grid grid = ShareSummaryGrid(s);
  ASSERT_EQ(grid.titles.size(), 8u);
  EXPECT_EQ(grid.titles[2], "every shape: of cuBLAS");
  EXPECT_EQ(grid.titles[5], "M <= 128: of the best");
  ASSERT_GE(grid.rows.size(), 1u);
  const std::vector<std::string> s1 = grid.rows[0];
  EXPECT_EQ(s1[0], "S1");
  EXPECT_EQ(s1[2], "79.4% (3)");  // (0.5 * 0.8 * 1.25)^(1/3)
  EXPECT_EQ(s1[3], "73.7% (3)");  // (0.5 * 0.8 * 1.0)^(1/3)
  EXPECT_EQ(s1[4], "63.2% (2)");  // M <= 128: the first two shapes
  EXPECT_EQ(s1[5], "63.2% (2)");
  EXPECT_EQ(s1[6], "125.0% (1)");  // N <= 128: the transposed one
  EXPECT_EQ(s1[7], "100.0% (1)");
  for (const auto& row : grid.rows) {
    EXPECT_NE(row[0], "cuBLAS");  // the baselines are no rows
    EXPECT_NE(row[0], "best");
  }
  // A ladder section, or a single shape, has no summary.
  s.set_layout(v1::SECTION_LAYOUT_LADDER);
  EXPECT_TRUE(ShareSummaryGrid(s).titles.empty());
}

}  // namespace
}  // namespace ablation::client::report
