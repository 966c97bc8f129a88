// The registry (server/metrics/registry.h) and its text exposition (server/metrics/exposition.h):
// what a scraper reads must parse, so escaping, number formatting, cumulative buckets and the
// series cap are pinned here; tests/metrics/prometheus_test.py has the real Prometheus read it.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "server/metrics/exposition.h"
#include "server/metrics/registry.h"

namespace ablation::metrics {
namespace {

using core::metrics::Registry;

TEST(ExpositionTest, EscapesHelpAndLabelValuesAsTheFormatSays) {
  EXPECT_EQ(EscapeHelp("a\\b\nc \"q\""), "a\\\\b\\nc \"q\"");  // quotes stay in HELP
  EXPECT_EQ(EscapeLabelValue("a\\b\nc \"q\""), "a\\\\b\\nc \\\"q\\\"");
  EXPECT_EQ(EscapeLabelValue("plain_ascii-0.9 x"), "plain_ascii-0.9 x");
  EXPECT_EQ(EscapeLabelValue("µs"), "µs");  // UTF-8 passes through
}

TEST(ExpositionTest, FormatsNumbersSoThatTheyReadBackTheSame) {
  EXPECT_EQ(FormatValue(0), "0");
  EXPECT_EQ(FormatValue(12), "12");
  EXPECT_EQ(FormatValue(-2.5), "-2.5");
  EXPECT_EQ(FormatValue(0.1), "0.1");
  EXPECT_EQ(std::stod(FormatValue(1.0 / 3)), 1.0 / 3);
  EXPECT_EQ(std::stod(FormatValue(1e300)), 1e300);
  EXPECT_EQ(FormatValue(std::numeric_limits<double>::infinity()), "+Inf");
  EXPECT_EQ(FormatValue(-std::numeric_limits<double>::infinity()), "-Inf");
  EXPECT_EQ(FormatValue(std::nan("")), "NaN");
}

TEST(ExpositionTest, WritesHelpTypeAndSamplesPerFamily) {
  Registry r;
  auto& c = r.AddCounter("x_events_total", "Events.\nSecond line \\ slash", {"kind"});
  c.Inc({"a\"b"}, 2);
  c.Inc({"a\"b"});
  auto& g = r.AddGauge("x_level", "Level", {});
  g.Set({}, 1.5);
  EXPECT_EQ(WriteText(r.Collect()),
            "# HELP x_events_total Events.\\nSecond line \\\\ slash\n"
            "# TYPE x_events_total counter\n"
            "x_events_total{kind=\"a\\\"b\"} 3\n"
            "# HELP x_level Level\n"
            "# TYPE x_level gauge\n"
            "x_level 1.5\n");
}

TEST(ExpositionTest, HistogramBucketsAreCumulativeAndEndInInf) {
  Registry r;
  auto& h = r.AddHistogram("x_seconds", "Time", {"gpu"}, {0.5, 1, 5});
  for (double v : {0.1, 0.5, 0.7, 3.0, 9.0}) h.Observe({"0"}, v);
  EXPECT_EQ(WriteText(r.Collect()),
            "# HELP x_seconds Time\n"
            "# TYPE x_seconds histogram\n"
            "x_seconds_bucket{gpu=\"0\",le=\"0.5\"} 2\n"  // a value equal to a bound is in it
            "x_seconds_bucket{gpu=\"0\",le=\"1\"} 3\n"
            "x_seconds_bucket{gpu=\"0\",le=\"5\"} 4\n"
            "x_seconds_bucket{gpu=\"0\",le=\"+Inf\"} 5\n"
            "x_seconds_sum{gpu=\"0\"} 13.3\n"
            "x_seconds_count{gpu=\"0\"} 5\n");
}

TEST(ExpositionTest, AFamilyWithoutSeriesStillHasItsHelpAndType) {
  Registry r;
  r.AddGauge("x_empty", "Nothing yet", {"gpu"});
  EXPECT_EQ(WriteText(r.Collect()), "# HELP x_empty Nothing yet\n# TYPE x_empty gauge\n");
}

TEST(RegistryTest, RefusesNamesPrometheusWouldNot) {
  Registry r;
  EXPECT_THROW(r.AddGauge("1abc", "h", {}), std::invalid_argument);
  EXPECT_THROW(r.AddGauge("a-b", "h", {}), std::invalid_argument);
  EXPECT_THROW(r.AddGauge("ok", "h", {"__reserved"}), std::invalid_argument);
  EXPECT_THROW(r.AddGauge("ok2", "h", {"a:b"}), std::invalid_argument);  // colons: names only
  EXPECT_THROW(r.AddHistogram("h1", "h", {"le"}, {1}), std::invalid_argument);
  EXPECT_THROW(r.AddHistogram("h2", "h", {}, {2, 1}), std::invalid_argument);
  r.AddGauge("ns:ok_name", "h", {"gpu"});
  EXPECT_THROW(r.AddCounter("ns:ok_name", "h", {}), std::invalid_argument);  // twice
  try {
    r.AddGauge("a-b", "h", {});
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("'a-b'"), std::string::npos) << e.what();
  }
}

TEST(RegistryTest, ALabelCountThatDiffersIsRefusedNamingTheMetric) {
  Registry r;
  auto& g = r.AddGauge("x_g", "h", {"a", "b"});
  try {
    g.Set({"1"}, 1);
    FAIL() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("x_g takes 2 label values, not 1"), std::string::npos);
  }
}

TEST(RegistryTest, CountersOnlyGoUpAndTouchMakesAZeroSeries) {
  Registry r;
  auto& c = r.AddCounter("x_total", "h", {"s"});
  c.Touch({"idle"});
  c.Inc({"busy"}, 2);
  c.Inc({"busy"}, -5);
  EXPECT_EQ(c.Value({"busy"}), 2);
  EXPECT_EQ(c.Value({"idle"}), 0);
  EXPECT_EQ(c.series_count(), 2u);
}

TEST(RegistryTest, ACapDropsTheLeastRecentlyUpdatedSeriesAndCountsIt) {
  Registry r;
  auto& evicted = r.AddCounter("x_evicted_total", "h", {"metric"});
  auto& g = r.AddGauge("x_latest", "h", {"k"});
  g.LimitSeries(3, &evicted);
  g.Set({"a"}, 1);
  g.Set({"b"}, 2);
  g.Set({"c"}, 3);
  g.Set({"a"}, 10);  // a is now the freshest; b the stalest
  g.Set({"d"}, 4);
  EXPECT_EQ(g.series_count(), 3u);
  EXPECT_EQ(g.Value({"b"}), 0);  // gone
  EXPECT_EQ(g.Value({"a"}), 10);
  EXPECT_EQ(g.Value({"d"}), 4);
  EXPECT_EQ(evicted.Value({"x_latest"}), 1);
  g.Set({"d"}, 5);  // an existing series never evicts
  EXPECT_EQ(evicted.Value({"x_latest"}), 1);
}

TEST(RegistryTest, RemoveDropsOneSeries) {
  Registry r;
  auto& g = r.AddGauge("x_g", "h", {"gpu"});
  g.Set({"0"}, 1);
  g.Set({"1"}, 1);
  g.Remove({"1"});
  g.Remove({"9"});
  EXPECT_EQ(g.series_count(), 1u);
}

}  // namespace
}  // namespace ablation::metrics
