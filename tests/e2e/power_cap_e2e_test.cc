// Figures that do not depend on what a kernel was measured beside, proved against a GPU at its
// power cap: the fake worker's controller and the stand-in NVML's energy counter
// (tests/support/fake_power.h), through the real daemon. At the cap the clock follows the power
// of what runs, so a kernel's figure in a window shared with lighter kernels is higher than its
// figure alone, and with heavier ones lower; its solo span is the same whatever its neighbours.
// A kernel that needs more power per cycle than cuBLAS runs at a lower clock alone than in a
// window shared with cuBLAS: its at-cap ratio is below its paired one by the model's factor.
#include <signal.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include "client/report/compare.h"
#include "client/report/report.h"
#include "db/records.h"
#include "db/store.h"
#include "tests/e2e/harness.h"
#include "tests/support/fake_power.h"

namespace ablation::testing {
namespace {

using ::testing::HasSubstr;

constexpr const char* kCublas = "cublas_bf16";
constexpr const char* kLight1 = "abl_L0_R1_bl0_s1_sw1";
constexpr const char* kLight2 = "abl_L1_R1_bl0_s3_sw1";
constexpr const char* kHeavy1 = "abl_L1_R1_bl0_s4_sw1";
constexpr const char* kHeavy2 = "abl_L1_R1_bl1_s4_sw1";
constexpr const char* kFast = "abl_L1_R1_bl0_s2_sw1";  // 5% fewer cycles than cuBLAS, more power

// The model (fake_power.h): a 700 W cap over 140 W of static power, a controller that follows the
// power over 0.2 s of GPU time (the H200 reaches its cap within 0.1 s); dynamic draws at the
// maximum clock. Alone, cuBLAS settles at 1980 * sqrt(560 / 1000) = 1481.7 MHz.
constexpr double kCapW = 700, kStaticW = 140;
constexpr double kCublasDraw = 1000, kLightDraw = 300, kHeavyDraw = 1400, kFastDraw = 1150;
constexpr double kFastSpeedup = 1.05;

double ModelClock(double draw) {
  return std::min(fake::kFakeMaxSmMhz, fake::kFakeMaxSmMhz * std::sqrt((kCapW - kStaticW) / draw));
}

class PowerCap : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = MakeTempDir();
    ASSERT_FALSE(dir_.empty());
    std::map<std::string, std::string> env = {
        {"ABLATION_FAKE_POWER_CAP", "700:140:0.2"},
        {"ABLATION_FAKE_DRAW", std::string(kCublas) + "=1000," + kLight1 + "=300," + kLight2 +
                                   "=300," + kHeavy1 + "=1400," + kHeavy2 + "=1400," + kFast +
                                   "=1150"},
        {"ABLATION_FAKE_SPEEDUP", std::string(kFast) + "=1.05"},
        {"ABLATION_FAKE_GPU_STATE", dir_ + "/board"},
        {"ABLATION_FAKE_TUNE_LOG", dir_ + "/tunings"}};
    daemon_ = std::make_unique<Daemon>(dir_, FAKE_WORKER_PATH, env);
    daemon_->set_extra_args({"--nvml-library", FAKE_NVML_PATH});
    ASSERT_EQ(daemon_->Start(), "");
  }
  void TearDown() override {
    if (daemon_) daemon_->Stop(SIGTERM);
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }

  /// Runs `variants` at 1024^3 in the sustained regime and returns the run's rows by variant.
  std::map<std::string, v1::Measurement> Run(const std::vector<std::string>& variants,
                                             bool unpaired = false) {
    v1::RunRequest req;
    for (const auto& v : variants) req.add_variants(v);
    auto* s = req.add_shapes();
    s->set_m(1024);
    s->set_n(1024);
    s->set_k(1024);
    req.set_regime(v1::REGIME_SUSTAINED);
    req.set_unpaired(unpaired);
    auto stub = daemon_->Stub();
    grpc::ClientContext ctx;
    auto reader = stub->RunAblation(&ctx, req);
    v1::RunEvent ev;
    int64_t run_id = 0;
    while (reader->Read(&ev))
      if (ev.has_finished()) run_id = ev.finished().run_id();
    const grpc::Status st = reader->Finish();
    EXPECT_TRUE(st.ok()) << st.error_message();
    std::map<std::string, v1::Measurement> rows;
    for (const auto& m :
         db::Store::OpenReadOnly(daemon_->db_path())->MeasurementsOfRun(run_id, false)) {
      EXPECT_EQ(m.status(), v1::MEASUREMENT_STATUS_OK) << m.variant() << ": " << m.error();
      rows[m.variant()] = m;
    }
    return rows;
  }

  /// The run (with its samples) as the client reads it.
  v1::GetRunResponse GetRun(int64_t run_id) {
    v1::GetRunRequest req;
    req.set_run_id(run_id);
    req.set_include_samples(true);
    v1::GetRunResponse out;
    grpc::ClientContext ctx;
    EXPECT_TRUE(daemon_->Stub()->GetRun(&ctx, req, &out).ok());
    return out;
  }

  std::string dir_;
  std::unique_ptr<Daemon> daemon_;
};

TEST_F(PowerCap, CublasAloneIsTheSameWhateverItsNeighboursWhileItsSharedFigureFollowsThem) {
  auto alone = Run({kCublas});
  auto light = Run({kCublas, kLight1, kLight2});
  auto heavy = Run({kCublas, kHeavy1, kHeavy2});
  const v1::Measurement& a = alone[kCublas];
  const v1::Measurement& l = light[kCublas];
  const v1::Measurement& h = heavy[kCublas];
  for (const v1::Measurement* m : {&a, &l, &h}) {
    ASSERT_TRUE(m->solo().solo_measured()) << m->solo().solo_note();
    EXPECT_TRUE(m->solo().solo_conditioned()) << m->solo().solo_note();
    EXPECT_NEAR(m->solo().solo_sm_mhz(), ModelClock(kCublasDraw), 0.004 * ModelClock(kCublasDraw));
  }
  // Alone: the window is its solo span.
  EXPECT_EQ(a.window_members(), 1);
  EXPECT_DOUBLE_EQ(a.solo().solo_tflops(), a.tflops());
  EXPECT_THAT(a.solo().solo_note(), HasSubstr("measured alone in its window"));
  // The solo figure agrees within 0.5% in all three runs.
  for (const v1::Measurement* m : {&l, &h})
    EXPECT_NEAR(m->solo().solo_tflops() / a.solo().solo_tflops(), 1, 0.005)
        << "solo " << m->solo().solo_tflops() << " against alone " << a.solo().solo_tflops();
  // The shared windows: beside light rungs the cap does not bind (mean draw 533 W: the maximum
  // clock), beside heavy ones it binds harder (mean draw 1267 W).
  EXPECT_EQ(l.window_members(), 3);
  EXPECT_EQ(h.window_members(), 3);
  const double light_clock = ModelClock((kCublasDraw + 2 * kLightDraw) / 3);
  const double heavy_clock = ModelClock((kCublasDraw + 2 * kHeavyDraw) / 3);
  EXPECT_NEAR(l.stats().median_sm_mhz(), light_clock, 0.005 * light_clock);
  EXPECT_NEAR(h.stats().median_sm_mhz(), heavy_clock, 0.005 * heavy_clock);
  EXPECT_GT(l.tflops(), 1.3 * a.solo().solo_tflops()) << "shared with light rungs: faster";
  EXPECT_LT(h.tflops(), 0.92 * a.solo().solo_tflops()) << "shared with heavy rungs: slower";
  EXPECT_NEAR(l.tflops() / h.tflops(), light_clock / heavy_clock,
              0.005 * light_clock / heavy_clock);

  // compare reads the solo figures: cuBLAS beside light rungs against beside heavy ones is the
  // same kernel at the cap (its windows' figures are 40% apart).
  const v1::Comparison c = client::report::Compare(GetRun(l.run_id()), GetRun(h.run_id()), 0.03);
  bool compared = false;
  for (const v1::ComparisonRow& row : c.rows()) {
    if (row.variant() != kCublas) continue;
    compared = true;
    EXPECT_EQ(row.figures(), "solo");
    EXPECT_NEAR(row.time_change().estimate(), 0, 0.005);
    EXPECT_FALSE(row.regression()) << row.verdict();
  }
  EXPECT_TRUE(compared);
  // history: one series of solo points, which agree within 0.5%.
  v1::HistoryRequest hr;
  hr.set_variant_glob(kCublas);
  v1::HistoryResponse history;
  grpc::ClientContext ctx;
  ASSERT_TRUE(daemon_->Stub()->GetHistory(&ctx, hr, &history).ok());
  ASSERT_EQ(history.series_size(), 1);
  EXPECT_EQ(history.series(0).figures(), "solo");
  ASSERT_EQ(history.series(0).points_size(), 3);
  for (const v1::HistoryPoint& p : history.series(0).points())
    EXPECT_NEAR(p.tflops() / a.solo().solo_tflops(), 1, 0.005);
  EXPECT_EQ(history.series(0).change_points_size(), 0);
}

TEST_F(PowerCap, AVariantThatNeedsMorePowerLosesAtTheCapWhatThePairHidesAndItsEnergyIsTheModels) {
  auto rows = Run({kCublas, kFast});
  const v1::Measurement& c = rows[kCublas];
  const v1::Measurement& f = rows[kFast];
  // Paired: both at the window's clock, the ratio is the work's (5% fewer cycles).
  EXPECT_NEAR(f.tflops() / c.tflops(), kFastSpeedup, 0.001);
  EXPECT_NEAR(c.stats().median_cycles() / f.stats().median_cycles(), kFastSpeedup, 0.001);
  // Alone at the cap each runs at its own clock: the faster kernel needs 15% more power per
  // cycle, so it runs sqrt(1000 / 1150) slower, and its at-cap ratio is the model's.
  ASSERT_TRUE(c.solo().solo_measured() && f.solo().solo_measured());
  const double at_cap = f.solo().solo_tflops() / c.solo().solo_tflops();
  const double predicted = kFastSpeedup * ModelClock(kFastDraw) / ModelClock(kCublasDraw);
  EXPECT_NEAR(at_cap, predicted, 0.002 * predicted) << "paired " << f.tflops() / c.tflops();
  EXPECT_LT(at_cap, 1.0) << "ahead in the pair, behind at the cap";
  EXPECT_NEAR(f.solo().solo_sm_mhz() / c.solo().solo_sm_mhz(),
              ModelClock(kFastDraw) / ModelClock(kCublasDraw), 0.004);
  // Energy per operation: at the cap the board draws 700 W, so a TFLOP costs 700 W / TFLOPS
  // joules; from NVML's energy counter over the solo span, within 1%.
  for (const v1::Measurement* m : {&c, &f}) {
    const v1::SoloFigures& s = m->solo();
    ASSERT_TRUE(s.has_solo_energy_j()) << s.solo_note();
    EXPECT_NEAR(s.solo_power_w(), kCapW, 0.01 * kCapW) << m->variant();
    const double flops = 2.0 * 1024 * 1024 * 1024;
    const double seconds = flops / (s.solo_tflops() * 1e12);  // at the span's median
    const double model_j_per_tflop = kCapW * seconds / (flops / 1e12);
    EXPECT_NEAR(s.solo_joules_per_tflop(), model_j_per_tflop, 0.01 * model_j_per_tflop)
        << m->variant();
    // And from the model's clock alone (cycles at the maximum clock over the settled clock).
    const double cycles = m->solo().solo_median_cycles();
    const double clock = ModelClock(m->variant() == kFast ? kFastDraw : kCublasDraw);
    const double model_from_clock = kCapW * (cycles / (clock * 1e6)) / (flops / 1e12);
    EXPECT_NEAR(s.solo_joules_per_tflop(), model_from_clock, 0.01 * model_from_clock);
    EXPECT_GT(s.solo_launches(), 1000);
    EXPECT_NEAR(s.solo_busy_share(), 1, 1e-9) << "the fake has no gaps between launches";
  }
  EXPECT_LT(c.solo().solo_joules_per_tflop(), f.solo().solo_joules_per_tflop())
      << "the faster kernel spends more energy per operation";

  // The report: its share of cuBLAS is the at-cap ratio, from the solo figures, and beside them the
  // window's TFLOPS are labelled as a shared window's.
  std::vector<v1::Variant> variants(2);
  variants[0].set_name(kCublas);
  variants[0].set_family("cublas");
  variants[0].add_dtypes("bf16");
  variants[1].set_name(kFast);
  variants[1].set_family("ablation");
  const v1::Report report = client::report::BuildReport(GetRun(c.run_id()), {}, variants);
  const v1::ReportSection& all = report.sections(report.sections_size() - 1);
  bool found = false;
  for (const v1::ReportRow& row : all.rows()) {
    if (row.variant() != kFast) continue;
    found = true;
    EXPECT_EQ(row.share_basis(), "solo");
    EXPECT_TRUE(row.shared_window());
    EXPECT_NEAR(row.cublas_share(), predicted, 0.002 * predicted);
    // In the window the clock follows the pair's mean draw (each weighted by its time: cuBLAS's
    // launches take 5% longer), above the faster kernel's own clock at the cap.
    const double pair_draw = (kCublasDraw * kFastSpeedup + kFastDraw) / (kFastSpeedup + 1);
    EXPECT_NEAR(row.tflops() / row.solo().tflops(), ModelClock(pair_draw) / ModelClock(kFastDraw),
                0.003)
        << "the window's figure, above the solo one";
    EXPECT_NEAR(row.solo().joules_per_tflop(), f.solo().solo_joules_per_tflop(), 1e-9);
  }
  EXPECT_TRUE(found);
  EXPECT_THAT(report.method().solo(), HasSubstr("solo span"));
}

TEST_F(PowerCap, TheBestCublasAlgorithmIsChosenOnceStoredAndNamed) {
  auto first = Run({kCublas, "cublas_bf16_best"});
  const v1::Measurement& h = first[kCublas];
  const v1::Measurement& b = first["cublas_bf16_best"];
  EXPECT_EQ(h.library().library_pick(), "heuristic");
  EXPECT_EQ(h.library().library_algo_id(), 20);
  EXPECT_EQ(h.library().library_rank(), 0);
  EXPECT_EQ(b.library().library_pick(), "best of 8 timed");
  EXPECT_EQ(b.library().library_algo_id(), 22) << "the fastest of the fake's candidates";
  EXPECT_EQ(b.library().library_rank(), 2);
  EXPECT_EQ(b.library().library_tile(), "256x128");
  EXPECT_THAT(b.library().library_config(), HasSubstr("algo 22, tile 256x128, stages 64x4"));
  EXPECT_NEAR(b.tflops() / h.tflops(), 1.06, 0.001);
  // Kept in the store with what was timed, once per device, library version and problem.
  {
    auto store = db::Store::OpenReadOnly(daemon_->db_path());
    db::LibraryChoiceRecord key;
    key.device_uuid = "GPU-00000000-0000-0000-0000-000000000000";
    key.library_version = "13.1.0";
    key.variant = "cublas_bf16_best";
    key.dtype = "bf16";
    key.m = key.n = key.k = 1024;
    const auto kept = store->FindLibraryChoice(key);
    ASSERT_TRUE(kept.has_value());
    EXPECT_EQ(kept->algo.size(), 64u);
    EXPECT_EQ(kept->algo[1], 2);
  }
  // A later run, even by a new daemon, launches the stored choice without timing again.
  daemon_->Stop(SIGTERM);
  ASSERT_EQ(daemon_->Start(), "");
  auto second = Run({"cublas_bf16_best"});
  EXPECT_EQ(second["cublas_bf16_best"].library().library_algo_id(), 22);
  std::ifstream log(dir_ + "/tunings");
  std::vector<std::string> lines;
  for (std::string line; std::getline(log, line);) lines.push_back(line);
  EXPECT_EQ(lines, std::vector<std::string>{"tuned cublas_bf16_best bf16 1024x1024x1024"});
}

TEST_F(PowerCap, RowsOfABurstOrARunWithoutSoloSpansSayWhyTheyHaveNone) {
  v1::RunRequest req;
  req.add_variants(kCublas);
  req.add_variants(kLight1);
  auto* s = req.add_shapes();
  s->set_m(1024);
  s->set_n(1024);
  s->set_k(1024);
  req.mutable_timing()->set_no_solo(true);
  auto stub = daemon_->Stub();
  grpc::ClientContext ctx;
  auto reader = stub->RunAblation(&ctx, req);
  v1::RunEvent ev;
  int solo_rows = 0, rows = 0;
  while (reader->Read(&ev)) {
    if (!ev.has_measurement()) continue;
    ++rows;
    solo_rows += ev.measurement().solo().solo_measured() ? 1 : 0;
    EXPECT_THAT(ev.measurement().solo().solo_note(), HasSubstr("the run asked for none"));
  }
  EXPECT_TRUE(reader->Finish().ok());
  EXPECT_EQ(rows, 2);
  EXPECT_EQ(solo_rows, 0);
  // Burst: cooled before each short window, which ends before the cap engages.
  v1::RunRequest burst = req;
  burst.mutable_timing()->set_no_solo(false);
  burst.set_regime(v1::REGIME_BURST);
  grpc::ClientContext burst_ctx;
  auto burst_reader = stub->RunAblation(&burst_ctx, burst);
  rows = 0;
  while (burst_reader->Read(&ev)) {
    if (!ev.has_measurement()) continue;
    ++rows;
    EXPECT_FALSE(ev.measurement().solo().solo_measured());
    EXPECT_THAT(ev.measurement().solo().solo_note(), HasSubstr("burst: no solo span"));
  }
  EXPECT_TRUE(burst_reader->Finish().ok());
  EXPECT_EQ(rows, 2);
}

}  // namespace
}  // namespace ablation::testing
