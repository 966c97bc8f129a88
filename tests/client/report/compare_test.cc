// compare on made-up runs: items over rounds, intervals and printed changes worked out by hand,
// verdicts that name the clocks, setups that differ, runs that are not complete.
#include "client/report/compare.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "client/output/json.h"

namespace ablation::client::report {
namespace {

namespace v1 = ::ablation::v1;
using ::testing::HasSubstr;

constexpr double kMaxMhz = 1980;

// How one item's rows of a run look.
struct Rows {
  std::vector<double> ms;  // per round: every sample of the round takes this (with a wiggle)
  double mhz = kMaxMhz;    // the clock of every sample; cycles = ms * MHz * 1000
  int samples = 20;
  bool clocks = true;  // per-sample clocks and cycles, as the worker probes them
  int low_clock = -1;  // low_clock_samples per row (-1: unset)
  int throttled = -1;  // NVML throttled_samples per row (-1: no telemetry)
};

void Add(v1::GetRunResponse& run, const std::string& variant, const Rows& rows) {
  for (std::size_t r = 0; r < rows.ms.size(); ++r) {
    v1::Measurement* m = run.add_measurements();
    m->set_variant(variant);
    m->set_dtype("bf16");
    m->mutable_shape()->set_m(4096);
    m->mutable_shape()->set_n(4096);
    m->mutable_shape()->set_k(4096);
    m->set_status(v1::MEASUREMENT_STATUS_OK);
    m->set_round(int(r));
    for (int i = 0; i < rows.samples; ++i) {
      const double ms = rows.ms[r] * (rows.samples > 1 ? 1 + 0.0005 * std::sin(1.3 * i) : 1);
      m->add_sample_ms(ms);
      if (!rows.clocks) continue;
      m->add_sample_sm_mhz(rows.mhz);
      m->add_sample_cycles(ms * rows.mhz * 1e3);  // ms x MHz x 1000
    }
    m->mutable_stats()->set_median_ms(rows.ms[r]);
    m->mutable_stats()->set_samples(rows.samples);
    if (rows.low_clock >= 0) m->mutable_stats()->set_low_clock_samples(rows.low_clock);
    if (rows.throttled >= 0) {
      m->mutable_telemetry()->set_available(true);
      m->mutable_telemetry()->set_throttled_samples(rows.throttled);
      m->mutable_telemetry()->set_sm_clock_mhz_mean(rows.mhz);
      m->mutable_telemetry()->set_sm_clock_mhz_min(rows.mhz - 30);
      m->mutable_telemetry()->set_power_w_mean(650);
      m->mutable_telemetry()->set_temperature_c_mean(61);
    }
  }
}

v1::GetRunResponse MadeUpRun(int id) {
  v1::GetRunResponse run;
  run.mutable_run()->set_id(id);
  run.mutable_run()->set_state(v1::RUN_STATE_SUCCEEDED);
  run.mutable_run()->set_rounds(3);
  v1::DeviceIdentity* d = run.mutable_run()->mutable_device();
  d->set_name("NVIDIA H200");
  d->set_uuid("GPU-1");
  d->set_driver_version("580.65");
  d->set_cublas_version("13.1.0");
  return run;
}

std::map<std::string, v1::ComparisonRow> ByVariant(const v1::Comparison& c) {
  std::map<std::string, v1::ComparisonRow> rows;
  for (const auto& r : c.rows()) rows[r.variant()] = r;
  return rows;
}

TEST(Compare, SameRunTwiceIsNoRegression) {
  v1::GetRunResponse a = MadeUpRun(1), b = MadeUpRun(2);
  for (auto* run : {&a, &b}) {
    Add(*run, "abl_x", {.ms = {1.0, 1.01, 1.02}});
    Add(*run, "cublas_bf16", {.ms = {0.5, 0.505, 0.51}});
  }
  const v1::Comparison c = Compare(a, b, 0.03);
  ASSERT_EQ(c.rows_size(), 2);
  EXPECT_EQ(c.regressions(), 0);
  EXPECT_EQ(c.schema_version(), 1);
  EXPECT_EQ(c.run_a(), 1);
  EXPECT_EQ(c.run_b(), 2);
  EXPECT_TRUE(c.warnings().empty());
  EXPECT_TRUE(c.incomplete().empty());
  EXPECT_EQ(c.rows(0).verdict(), "same (within noise)");
  EXPECT_EQ(c.rows(0).time_change().basis(), v1::CHANGE_BASIS_ROUNDS);
  EXPECT_EQ(c.rows(0).conditions_a().rounds(), 3);
  EXPECT_EQ(c.rows(0).samples_a(), 60);
  EXPECT_NEAR(c.floor_a(), 0.02 / 1.01, 1e-3);  // each item's rounds span 2%
}

TEST(Compare, TheChangeAndItsIntervalAreWorkedOutByHand) {
  // One sample a round. a: 1.0 and 1.0; b: 1.5 and 2.0. b's 4 draws of 2 rounds have medians
  // 1.5, 1.75, 1.75, 2.0, a's all 1.0: 16 ratios, 4 x 0.50, 8 x 0.75, 4 x 1.00; the 2.5% point
  // at rank 0.375 is 0.50, the 97.5% at 14.625 is 1.00. The change: median(1.5, 2.0) / 1.0 - 1
  // = +75%, B slower. Floors: a's item has no spread, b's (2.0 - 1.5) / 1.75 = 28.6% < 75%.
  v1::GetRunResponse a = MadeUpRun(1), b = MadeUpRun(2);
  Add(a, "abl_x", {.ms = {1.0, 1.0}, .samples = 1, .clocks = false});
  Add(b, "abl_x", {.ms = {1.5, 2.0}, .samples = 1, .clocks = false});
  const v1::Comparison c = Compare(a, b, 0.03);
  ASSERT_EQ(c.rows_size(), 1);
  const v1::ComparisonRow& r = c.rows(0);
  EXPECT_DOUBLE_EQ(r.time_change().estimate(), 0.75);
  EXPECT_DOUBLE_EQ(r.time_change().interval().low(), 0.5);
  EXPECT_DOUBLE_EQ(r.time_change().interval().high(), 1.0);
  EXPECT_DOUBLE_EQ(r.time_change().floor(), 0.5 / 1.75);
  EXPECT_EQ(r.time_change().rounds(), 2);
  EXPECT_FALSE(r.has_cycles_change());
  EXPECT_TRUE(r.regression());
  EXPECT_EQ(r.verdict(), "REGRESSION");
  // Printed as computed: +75% means B takes 75% longer, never the other way round.
  const std::string text = RenderText(CompareTable(c));
  EXPECT_THAT(text, HasSubstr("+75.0% [+50.0, +100.0]"));
  EXPECT_THAT(text, HasSubstr("time change [95% CI]"));
  EXPECT_THAT(text, ::testing::Not(HasSubstr("SM MHz")));  // no row has clocks: no column
  const std::string csv = RenderCsv(CompareTable(c, true));
  EXPECT_THAT(csv, HasSubstr("variant,dtype,shape,figures,median_a_ms,median_b_ms,time_change,"
                             "cycles_change,ci_low,ci_high,within_noise,basis,floor,"));
  EXPECT_THAT(csv,
              HasSubstr("\r\nabl_x,bf16,4096x4096x4096,window,1,1.75,0.75,,0.5,1,false,rounds,"));
  EXPECT_THAT(csv, HasSubstr(",REGRESSION\r\n"));
}

TEST(Compare, SlowdownsBeyondTheThresholdAreRegressions) {
  v1::GetRunResponse a = MadeUpRun(1), b = MadeUpRun(2);
  Add(a, "slower", {.ms = {1.0, 1.0, 1.0}});
  Add(b, "slower", {.ms = {1.06, 1.06, 1.06}});  // +6%, same clock: the kernel
  Add(a, "slightly", {.ms = {1.0, 1.0, 1.0}});
  Add(b, "slightly", {.ms = {1.015, 1.015, 1.015}});  // +1.5%: real, under the threshold
  Add(a, "faster", {.ms = {1.0, 1.0, 1.0}});
  Add(b, "faster", {.ms = {0.9, 0.9, 0.9}});
  Add(a, "gone", {.ms = {1.0, 1.0, 1.0}});
  const v1::Comparison c = Compare(a, b, 0.03);
  ASSERT_EQ(c.rows_size(), 3);
  auto rows = ByVariant(c);
  EXPECT_TRUE(rows["slower"].regression());
  EXPECT_EQ(rows["slower"].verdict(), "REGRESSION");
  EXPECT_NEAR(rows["slower"].cycles_change().estimate(), 0.06, 1e-9);
  EXPECT_TRUE(rows["slightly"].significant());
  EXPECT_FALSE(rows["slightly"].regression());
  EXPECT_EQ(rows["slightly"].verdict(), "slower");
  EXPECT_EQ(rows["faster"].verdict(), "faster");
  EXPECT_EQ(c.regressions(), 1);
  ASSERT_EQ(c.only_in_a_size(), 1);
  // A change of -0.0004% with no noise at all (identical samples) is no finding either way.
  v1::GetRunResponse x = MadeUpRun(3), y = MadeUpRun(4);
  Add(x, "tiny", {.ms = {1.0, 1.0, 1.0}});
  Add(y, "tiny", {.ms = {0.999996, 0.999996, 0.999996}});
  Add(x, "small", {.ms = {1.0, 1.0, 1.0}});
  Add(y, "small", {.ms = {0.998, 0.998, 0.998}});  // -0.2%: past the smallest change
  auto tiny = ByVariant(Compare(x, y, 0.03));
  EXPECT_FALSE(tiny["tiny"].significant());
  EXPECT_EQ(tiny["tiny"].verdict(), "same (under 0.1%)");
  EXPECT_EQ(tiny["small"].verdict(), "faster");
  EXPECT_EQ(c.only_in_a(0), "gone bf16 4096x4096x4096");
  EXPECT_EQ(Compare(a, b, 0.10).regressions(), 0);  // a looser threshold

  // The JSON is the message: it parses back into it, nothing lost.
  const std::string json = JsonEnvelope("comparison", c);
  std::vector<v1::Comparison> parsed;
  ASSERT_EQ(ReadJsonEnvelope(json, "comparison", &parsed), "") << json;
  ASSERT_EQ(parsed.size(), 1u);
  EXPECT_EQ(parsed[0].SerializeAsString(), c.SerializeAsString());
  EXPECT_THAT(json, HasSubstr("\"regressions\":1"));
  EXPECT_THAT(RenderText(CompareTable(c)), HasSubstr("REGRESSION"));
}

TEST(Compare, AThrottledSlowdownIsExplainedAndNotCounted) {
  // B ran at 1800 MHz instead of 1980: every sample 10% longer, the same cycles.
  v1::GetRunResponse a = MadeUpRun(1), b = MadeUpRun(2);
  Add(a, "abl_x", {.ms = {1.0, 1.0, 1.0}, .low_clock = 0});
  Add(b, "abl_x", {.ms = {1.1, 1.1, 1.1}, .mhz = 1800, .low_clock = 0});
  const v1::Comparison c = Compare(a, b, 0.03);
  ASSERT_EQ(c.rows_size(), 1);
  const v1::ComparisonRow& r = c.rows(0);
  EXPECT_NEAR(r.time_change().estimate(), 0.10, 1e-9);
  EXPECT_NEAR(r.cycles_change().estimate(), 0, 1e-9);
  EXPECT_TRUE(r.cycles_change().within_noise());
  EXPECT_NEAR(r.clock_change(), 1800.0 / 1980 - 1, 1e-12);  // -9.09%
  EXPECT_NEAR(r.conditions_b().sm_mhz(), 1800, 1e-9);
  EXPECT_TRUE(r.explained());
  EXPECT_FALSE(r.regression());
  EXPECT_EQ(r.verdict(), "slower with the clock down 9%: throttling, not the kernel");
  EXPECT_EQ(c.regressions(), 0);
  EXPECT_EQ(c.explained(), 1);
  const std::string text = RenderText(CompareTable(c));
  EXPECT_THAT(text, HasSubstr("SM MHz (probes) (A -> B)"));
  EXPECT_THAT(text, HasSubstr("1980 -> 1800"));
  EXPECT_THAT(text, HasSubstr("0% -> 0%"));              // low clock
  EXPECT_THAT(text, HasSubstr("+0.0% [+0.0, +0.0] ≈"));  // cycles

  // --strict counts it, and says what the clocks did.
  const v1::Comparison strict = Compare(a, b, 0.03, true);
  EXPECT_TRUE(strict.strict());
  EXPECT_EQ(strict.regressions(), 1);
  EXPECT_EQ(strict.rows(0).verdict(), "REGRESSION (--strict; the clock down 9%, cycles +0.0%)");
}

TEST(Compare, LowerClocksDoNotExcuseMoreCycles) {
  // The clock down 9% and 16% more time: the cycles are 6% up too, so the kernel is slower.
  v1::GetRunResponse a = MadeUpRun(1), b = MadeUpRun(2);
  Add(a, "abl_x", {.ms = {1.0, 1.0, 1.0}});
  Add(b, "abl_x", {.ms = {1.1 * 1.06, 1.1 * 1.06, 1.1 * 1.06}, .mhz = 1800});
  const v1::ComparisonRow r = Compare(a, b, 0.03).rows(0);
  EXPECT_NEAR(r.cycles_change().estimate(), 0.06, 1e-9);
  EXPECT_FALSE(r.explained());
  EXPECT_TRUE(r.regression());
  EXPECT_EQ(r.verdict(), "REGRESSION (the clock down 9%, cycles +6.0%)");
  // Without cycles nothing can clear it.
  v1::GetRunResponse c = MadeUpRun(1), d = MadeUpRun(2);
  Add(c, "abl_x", {.ms = {1.0, 1.0, 1.0}, .clocks = false, .throttled = 0});
  Add(d, "abl_x", {.ms = {1.1, 1.1, 1.1}, .mhz = 1800, .clocks = false, .throttled = 8});
  const v1::ComparisonRow e = Compare(c, d, 0.03).rows(0);
  EXPECT_NEAR(e.clock_change(), 1800.0 / 1980 - 1, 1e-12);  // NVML's mean, lacking probes
  EXPECT_EQ(e.verdict(), "REGRESSION (the clock down 9%, no cycles to tell)");
}

TEST(Compare, FewerCyclesAtALowerClockAreTheClocksToo) {
  // Seen on the H200 under a background load: 8.5% slower, the clock down 9%, 0.5% fewer cycles.
  // In cycles the kernel did not get slower, so the time went to the clock.
  v1::GetRunResponse a = MadeUpRun(1), b = MadeUpRun(2);
  Add(a, "abl_x", {.ms = {1.0, 1.0, 1.0}});
  Add(b, "abl_x", {.ms = {1.1 * 0.995, 1.1 * 0.995, 1.1 * 0.995}, .mhz = 1800});
  const v1::ComparisonRow r = Compare(a, b, 0.03).rows(0);
  EXPECT_NEAR(r.cycles_change().estimate(), -0.005, 1e-9);
  EXPECT_NEAR(r.time_change().estimate(), 1.1 * 0.995 - 1, 1e-9);
  EXPECT_TRUE(r.explained());
  EXPECT_FALSE(r.regression());
  EXPECT_EQ(r.verdict(), "slower with the clock down 9%: throttling, not the kernel");
}

TEST(Compare, MoreThrottledSamplesExplainASlowdownAtTheSameMeanClock) {
  // NVML says 8 of 20 samples were throttled in B (none in A); the mean clock did not move, the
  // cycles did not either.
  v1::GetRunResponse a = MadeUpRun(1), b = MadeUpRun(2);
  Add(a, "abl_x", {.ms = {1.0, 1.0, 1.0}, .throttled = 0});
  Add(b, "abl_x", {.ms = {1.05, 1.05, 1.05}, .throttled = 8});
  for (int i = 0; i < b.measurements_size(); ++i) {  // the cycles: A's, round for round
    b.mutable_measurements(i)->clear_sample_cycles();
    for (double x : a.measurements(i).sample_cycles())
      b.mutable_measurements(i)->add_sample_cycles(x);
  }
  const v1::Comparison c = Compare(a, b, 0.03);
  const v1::ComparisonRow& r = c.rows(0);
  EXPECT_NEAR(r.conditions_b().throttled_share(), 0.4, 1e-12);
  EXPECT_NEAR(r.clock_change(), 0, 1e-12);
  EXPECT_EQ(r.verdict(),
            "slower with throttled samples up from 0% to 40%: throttling, not the kernel");
  EXPECT_EQ(c.regressions(), 0);
  const std::string text = RenderText(CompareTable(c));
  EXPECT_THAT(text, HasSubstr("NVML SM MHz min (A -> B)"));
  EXPECT_THAT(text, HasSubstr("1950 -> 1950"));
  EXPECT_THAT(text, HasSubstr("0% -> 40%"));
  EXPECT_THAT(text, HasSubstr("650 -> 650"));
  EXPECT_THAT(text, HasSubstr("61 -> 61"));
  const std::string csv = RenderCsv(CompareTable(c, true));
  EXPECT_THAT(csv, HasSubstr(",throttled_share_a,throttled_share_b,"));
  EXPECT_THAT(csv, HasSubstr(",0,0.4,"));
}

TEST(Compare, OneRoundFallsBackToSamplesAndWithoutThemNothingIsClaimed) {
  v1::GetRunResponse a = MadeUpRun(1), b = MadeUpRun(2);
  Add(a, "x", {.ms = {1.0}, .samples = 1});
  Add(b, "x", {.ms = {2.0}, .samples = 1});
  Add(a, "y", {.ms = {1.0}});
  Add(b, "y", {.ms = {1.0}});
  const auto rows = ByVariant(Compare(a, b, 0.03));
  EXPECT_EQ(rows.at("x").verdict(), "no samples");
  EXPECT_FALSE(rows.at("x").has_test());
  EXPECT_EQ(rows.at("x").time_change().basis(), v1::CHANGE_BASIS_MEDIANS);
  EXPECT_EQ(rows.at("y").time_change().basis(), v1::CHANGE_BASIS_SAMPLES);
  EXPECT_EQ(rows.at("y").time_change().note(),
            "one round: interval from samples, drift not included");
  EXPECT_EQ(rows.at("y").verdict(), "same (within noise)");
  EXPECT_DOUBLE_EQ(rows.at("y").test().time_change(), 0);  // Welch, for reference
}

// Run B's rounds of "levels" sit on two levels (1.20 and 1.25 ms at one clock, 4.1% apart, each
// round within 0.1%): its slowdown is a regression still, and the verdict says it may be a draw
// between levels (run A's may have been drawn from a faster one).
// "steady" slows by as much in every round: a plain regression.
TEST(Compare, AChangeWhereARunsRoundsAreApartSaysItMayBeADrawBetweenLevels) {
  v1::GetRunResponse a = MadeUpRun(1), b = MadeUpRun(2);
  Add(a, "levels", {.ms = {1.0, 1.0, 1.0}});
  Add(b, "levels", {.ms = {1.2, 1.25, 1.2}});
  Add(a, "steady", {.ms = {1.0, 1.0, 1.0}});
  Add(b, "steady", {.ms = {1.13, 1.13, 1.13}});
  auto rows = ByVariant(Compare(a, b, 0.03));
  EXPECT_EQ(rows["levels"].rounds_apart(), "run B");
  EXPECT_TRUE(rows["levels"].regression());
  EXPECT_EQ(rows["levels"].verdict(), "REGRESSION; rounds apart in run B: a draw between levels?");
  EXPECT_EQ(rows["steady"].rounds_apart(), "");
  EXPECT_EQ(rows["steady"].verdict(), "REGRESSION");
  // Both runs on levels 20% apart: the rounds' own spread makes the change one within noise (the
  // bootstrap over rounds draws either level); the row still says whose rounds are apart.
  Add(a, "both", {.ms = {1.0, 1.2, 1.0}});
  Add(b, "both", {.ms = {1.2, 1.0, 1.2}});
  rows = ByVariant(Compare(a, b, 0.03));
  EXPECT_EQ(rows["both"].rounds_apart(), "both runs");
  EXPECT_EQ(rows["both"].verdict().rfind("same", 0), 0u) << rows["both"].verdict();
}

TEST(Compare, DifferentSetupsAreNamed) {
  v1::GetRunResponse a = MadeUpRun(1), b = MadeUpRun(2);
  EXPECT_TRUE(SetupDifferences(a.run(), b.run()).empty());
  b.mutable_run()->mutable_device()->set_uuid("GPU-2");
  EXPECT_THAT(SetupDifferences(a.run(), b.run()),
              ::testing::ElementsAre(
                  "different devices: run 1 NVIDIA H200 GPU-1, run 2 NVIDIA H200 GPU-2"));
  v1::GetRunResponse c = MadeUpRun(3);
  c.mutable_run()->mutable_device()->clear_uuid();  // an old row: the name is all there is
  c.mutable_run()->mutable_device()->set_driver_version("575.1");
  c.mutable_run()->mutable_device()->set_cublas_version("12.9");
  EXPECT_THAT(SetupDifferences(a.run(), c.run()),
              ::testing::ElementsAre("different drivers: run 1 580.65, run 3 575.1",
                                     "different cuBLAS versions: run 1 13.1.0, run 3 12.9"));
  c.mutable_run()->mutable_device()->set_name("NVIDIA H100");
  EXPECT_EQ(SetupDifferences(a.run(), c.run())[0],
            "different devices: run 1 NVIDIA H200, run 3 NVIDIA H100");
  EXPECT_EQ(Compare(a, c, 0.03).warnings_size(), 3);
}

// Hot against cold L2, or resident against fresh inputs, is said; a run whose rows name no L2
// mode (stored before they did) says nothing either way.
TEST(Compare, RunsThatMetTheL2OrTheirInputsDifferentlyAreWarnedOf) {
  v1::GetRunResponse a = MadeUpRun(1), b = MadeUpRun(2);
  Add(a, "x", Rows{{1.0, 1.0, 1.0}});
  Add(b, "x", Rows{{1.0, 1.0, 1.0}});
  EXPECT_EQ(Compare(a, b, 0.03).warnings_size(), 0);
  for (v1::Measurement& m : *a.mutable_measurements()) m.set_l2(v1::L2_MODE_COLD_ROTATED);
  EXPECT_EQ(Compare(a, b, 0.03).warnings_size(), 0);  // b's rows are silent
  for (v1::Measurement& m : *b.mutable_measurements()) m.set_l2(v1::L2_MODE_COLD_ROTATED);
  EXPECT_EQ(Compare(a, b, 0.03).warnings_size(), 0);
  b.mutable_run()->set_request_json(R"({"timing": {"freshInputs": true}})");
  v1::Comparison c = Compare(a, b, 0.03);
  ASSERT_EQ(c.warnings_size(), 1);
  EXPECT_THAT(c.warnings(0), HasSubstr("different inputs: run 1 L2 cold (each sample"));
  EXPECT_THAT(c.warnings(0), HasSubstr("inputs made anew for every round (fresh inputs); the "
                                       "changes include what that difference does"));
  b.mutable_run()->clear_request_json();
  for (v1::Measurement& m : *b.mutable_measurements()) m.set_l2(v1::L2_MODE_HOT);
  EXPECT_THAT(Compare(a, b, 0.03).warnings(0),
              HasSubstr(", run 2 L2 hot (the inputs the previous sample left in it); inputs"));
}

TEST(Compare, RunsOfDifferentRegimesAreRefusedUnlessAllowed) {
  v1::GetRunResponse a = MadeUpRun(1), b = MadeUpRun(2);
  a.mutable_run()->set_regime(v1::REGIME_SUSTAINED);
  b.mutable_run()->set_regime(v1::REGIME_SUSTAINED);
  Add(a, "abl_x", {.ms = {1.0, 1.0, 1.0}});
  Add(b, "abl_x", {.ms = {0.9, 0.9, 0.9}});
  EXPECT_EQ(RegimeDifference(a.run(), b.run()), "");
  EXPECT_TRUE(Refusals(a.run(), b.run(), false, false).empty());
  const std::string same = RenderText(CompareTable(Compare(a, b, 0.03)));
  EXPECT_THAT(same, HasSubstr("regime (A -> B)"));
  EXPECT_THAT(same, HasSubstr("sustained -> sustained"));

  b.mutable_run()->set_regime(v1::REGIME_BURST);
  EXPECT_EQ(RegimeDifference(a.run(), b.run()), "different regimes: run 1 sustained, run 2 burst");
  EXPECT_THAT(Refusals(a.run(), b.run(), false, false),
              ::testing::ElementsAre("different regimes: run 1 sustained, run 2 burst",
                                     "runs 1 and 2 were measured in different power regimes "
                                     "(sustained, burst), so their times do not compare; "
                                     "--allow-different-regime compares them anyway"));
  // --allow-different-device is no licence for a different regime, and the other way round.
  EXPECT_EQ(Refusals(a.run(), b.run(), true, false).size(), 2u);
  EXPECT_TRUE(Refusals(a.run(), b.run(), false, true).empty());
  b.mutable_run()->mutable_device()->set_uuid("GPU-2");
  EXPECT_THAT(
      Refusals(a.run(), b.run(), false, true),
      ::testing::ElementsAre("different devices: run 1 NVIDIA H200 GPU-1, run 2 NVIDIA H200 GPU-2",
                             "runs 1 and 2 ran on different setups, so their times do not compare; "
                             "--allow-different-device compares them anyway"));
  EXPECT_EQ(Refusals(a.run(), b.run(), false, false).size(), 4u);
  EXPECT_TRUE(Refusals(a.run(), b.run(), true, true).empty());
  b.mutable_run()->mutable_device()->set_uuid("GPU-1");

  // Allowed: compared, the difference a warning, each run's regime in the model and the table.
  const v1::Comparison c = Compare(a, b, 0.03);
  EXPECT_THAT(c.warnings(),
              ::testing::ElementsAre("different regimes: run 1 sustained, run 2 burst"));
  EXPECT_EQ(c.regime_a(), v1::REGIME_SUSTAINED);
  EXPECT_EQ(c.regime_b(), v1::REGIME_BURST);
  ASSERT_EQ(c.rows_size(), 1);
  EXPECT_EQ(c.rows(0).verdict(), "faster");  // rows matched as ever
  EXPECT_THAT(RenderText(CompareTable(c)), HasSubstr("sustained -> burst"));
  const std::string csv = RenderCsv(CompareTable(c, true));
  EXPECT_THAT(csv, HasSubstr(",regime_a,regime_b,verdict\r\n"));
  EXPECT_THAT(csv, HasSubstr(",sustained,burst,faster\r\n"));

  // A run stored before regimes has none: a difference too.
  a.mutable_run()->clear_regime();
  EXPECT_EQ(RegimeDifference(a.run(), b.run()), "different regimes: run 1 none, run 2 burst");
}

TEST(Compare, ARunThatIsNotCompleteSaysWhy) {
  v1::Run run = MadeUpRun(4).run();
  EXPECT_EQ(Incomplete(run), "");
  run.set_state(v1::RUN_STATE_PARTIAL);
  run.set_ok(11);
  run.set_failed(1);
  EXPECT_EQ(Incomplete(run), "run 4 is partial: 1 of 12 measurements failed");
  run.set_state(v1::RUN_STATE_FAILED);
  run.set_error("worker died");
  EXPECT_EQ(Incomplete(run), "run 4 failed: worker died");
  run.set_state(v1::RUN_STATE_RUNNING);
  EXPECT_EQ(Incomplete(run), "run 4 is still running");
  v1::GetRunResponse a = MadeUpRun(1), b = MadeUpRun(2);
  b.mutable_run()->set_state(v1::RUN_STATE_CANCELLED);
  EXPECT_THAT(Compare(a, b, 0.03).incomplete(), ::testing::ElementsAre("run 2 was cancelled"));
}

TEST(Compare, Threshold) {
  double f = 0;
  EXPECT_EQ(ParseThreshold("3%", &f), "");
  EXPECT_DOUBLE_EQ(f, 0.03);
  EXPECT_EQ(ParseThreshold("0.5", &f), "");
  EXPECT_DOUBLE_EQ(f, 0.005);
  EXPECT_NE(ParseThreshold("abc", &f), "");
  EXPECT_NE(ParseThreshold("-1%", &f), "");
  EXPECT_NE(ParseThreshold("", &f), "");
}

}  // namespace
}  // namespace ablation::client::report
