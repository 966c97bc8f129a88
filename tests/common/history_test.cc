#include "common/history/history.h"

#include <gtest/gtest.h>

namespace ablation::history {
namespace {

SeriesRow Row(const std::string& fingerprint, int64_t run, double median,
              const std::string& variant = "abl_a") {
  SeriesRow r;
  r.fingerprint = fingerprint;
  r.variant = variant;
  r.dtype = "bf16";
  r.regime = "sustained";
  r.m = r.n = r.k = 4096;
  r.device_name = "NVIDIA H200";
  r.device_uuid = "GPU-1";
  r.run_id = run;
  r.measurement_id = run * 10;
  r.time_ms = run * 1000;
  r.median_ms = median;
  r.noise = 0.001;
  r.tflops = 100 / median;
  return r;
}

TEST(BuildHistory, OneSeriesPerFingerprintOnePointPerRunWithItsChangePoint) {
  std::vector<SeriesRow> rows;
  for (int run = 1; run <= 8; ++run) rows.push_back(Row("fp-a", run, 1.0));
  for (int run = 9; run <= 16; ++run) rows.push_back(Row("fp-a", run, 1.05));
  rows.push_back(Row("fp-a", 16, 1.07));  // a second round of run 16: one point, their median
  rows.push_back(Row("fp-a", 16, 1.03));
  rows.push_back(Row("fp-b", 3, 2.0));  // another fingerprint: never mixed in
  const v1::HistoryResponse h = BuildHistory(rows);
  ASSERT_EQ(h.series_size(), 2);
  const v1::Series& a = h.series(0);
  EXPECT_EQ(a.hardware_fingerprint(), "fp-a");
  EXPECT_EQ(a.regime(), v1::REGIME_SUSTAINED);
  EXPECT_EQ(a.shape().m(), 4096);
  ASSERT_EQ(a.points_size(), 16);
  EXPECT_DOUBLE_EQ(a.points(15).median_ms(), 1.05);
  EXPECT_EQ(a.points(15).run_id(), 16);
  ASSERT_EQ(a.change_points_size(), 1);
  EXPECT_EQ(a.change_points(0).index(), 8);
  EXPECT_NEAR(a.change_points(0).relative_change(), 0.05, 1e-9);
  EXPECT_TRUE(a.points(8).change_point());
  EXPECT_FALSE(a.points(7).change_point());
  EXPECT_FALSE(a.newest().candidate());
  EXPECT_EQ(a.newest().baseline_points(), 7);  // the nights since the change, before the newest
  const v1::Series& b = h.series(1);
  EXPECT_EQ(b.hardware_fingerprint(), "fp-b");
  EXPECT_EQ(b.points_size(), 1);
  EXPECT_EQ(b.change_points_size(), 0);
  EXPECT_DOUBLE_EQ(h.min_relative_change(), 0.01);
}

// Rows of another L2 mode are another series, named by its mode: a night with the L2 hot is not
// a 30% speed-up of the cold series (no change point, no candidate in either).
TEST(BuildHistory, EachL2ModeIsASeriesOfItsOwn) {
  std::vector<SeriesRow> rows;
  for (int run = 1; run <= 8; ++run) rows.push_back(Row("fp-a", run, 1.0));
  for (SeriesRow& r : rows) r.l2 = "cold_rotated";
  SeriesRow hot = Row("fp-a", 9, 0.7);
  hot.l2 = "hot";
  rows.push_back(hot);
  const v1::HistoryResponse h = BuildHistory(rows);
  ASSERT_EQ(h.series_size(), 2);
  EXPECT_EQ(h.series(0).l2(), v1::L2_MODE_COLD_ROTATED);
  EXPECT_EQ(h.series(0).points_size(), 8);
  EXPECT_EQ(h.series(0).change_points_size(), 0);
  EXPECT_FALSE(h.series(0).newest().candidate());
  EXPECT_EQ(h.series(1).l2(), v1::L2_MODE_HOT);
  EXPECT_EQ(h.series(1).points_size(), 1);
  // Rows that name no mode (stored before the column, or a fleet's) are a series unspecified.
  rows.back().l2 = "";
  EXPECT_EQ(BuildHistory(rows).series(1).l2(), v1::L2_MODE_UNSPECIFIED);
}

TEST(BuildHistory, NewestNightOutsideTheSpreadIsACandidate) {
  std::vector<SeriesRow> rows;
  for (int run = 1; run <= 10; ++run) rows.push_back(Row("fp", run, 1.0 + 0.001 * (run % 2)));
  rows.push_back(Row("fp", 11, 1.08));
  const v1::HistoryResponse h = BuildHistory(rows);
  ASSERT_EQ(h.series_size(), 1);
  const v1::NewestShift& n = h.series(0).newest();
  EXPECT_TRUE(n.candidate());
  EXPECT_NEAR(n.relative_change(), 0.08 / 1.0005, 0.001);
  EXPECT_EQ(n.baseline_points(), 10);
  EXPECT_TRUE(BuildHistory({}).series().empty());
}

// A fleet's rows: two daemons of one fingerprint are two series, each naming its daemon, even
// where their run ids are the same; the second node's runs, 4% apart from the first's (the chips'
// spread), are neither a change point nor a candidate of the first node's series.
TEST(BuildHistory, TwoDaemonsOfOneFingerprintAreTwoSeriesSideBySide) {
  std::vector<SeriesRow> rows;
  for (int run = 1; run <= 10; ++run) {
    SeriesRow r = Row("fp", run, run % 2 ? 1.0 : 1.001);
    r.node = "gpu-a/1111aaaa";
    rows.push_back(r);
  }
  for (int run = 1; run <= 3; ++run) {
    SeriesRow r = Row("fp", run, 1.04);
    r.node = "gpu-b/2222bbbb";
    r.time_ms = 11 * 86'400'000LL + run;  // after all of gpu-a's
    rows.push_back(r);
  }
  const v1::HistoryResponse h = BuildHistory(rows);
  ASSERT_EQ(h.series_size(), 2);
  for (const v1::Series& s : h.series()) {
    const std::string& node = s.points(0).node();
    EXPECT_EQ(s.change_points_size(), 0) << node;
    EXPECT_FALSE(s.newest().candidate()) << node;
    for (const v1::HistoryPoint& p : s.points()) EXPECT_EQ(p.node(), node);
  }
  EXPECT_EQ(h.series(0).points(0).node(), "gpu-a/1111aaaa");
  EXPECT_EQ(h.series(0).points_size(), 10);
  EXPECT_EQ(h.series(1).points(0).node(), "gpu-b/2222bbbb");
  ASSERT_EQ(h.series(1).points_size(), 3);
  EXPECT_EQ(h.series(1).points(0).run_id(), 1);
  // One daemon's store has no node: one series, as before.
  for (SeriesRow& r : rows) r.node.clear();
  EXPECT_EQ(BuildHistory(rows).series_size(), 1);
}

}  // namespace
}  // namespace ablation::history
