// ablationd's metrics as a scraper reads them: the prometheus-cpp registry of
// server/metrics/registry.h written by prometheus-cpp's serializer (server/metrics/exposition.h).
// The format itself is the library's; pinned here is what the daemon relies on: every family with
// its HELP and TYPE, label values escaped, histograms cumulative up to +Inf, and HELP texts the
// serializer can write as they are (prometheus-cpp 1.0.1 does not escape them). The real
// Prometheus reads it in tests/metrics/prometheus_test.py.
#include <gtest/gtest.h>

#include <prometheus/gauge.h>
#include <prometheus/registry.h>

#include <sstream>
#include <string>

#include "server/metrics/exposition.h"
#include "server/metrics/registry.h"

namespace ablation::metrics {
namespace {

using metrics::DaemonMetrics;

// The lines of `text` that start with `prefix`.
std::vector<std::string> Lines(const std::string& text, const std::string& prefix) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (line.rfind(prefix, 0) == 0) out.push_back(line);
  return out;
}

TEST(ExpositionTest, EveryFamilyHasItsHelpAndType) {
  DaemonMetrics m;
  // Before any GPU: the families that have series from the start, and no others (prometheus-cpp
  // leaves a family without series out of the scrape).
  const std::string before = WriteText(m.registry());
  EXPECT_EQ(Lines(before, "# TYPE ").size(), 5u) << before;
  for (const char* name :
       {"ablationd_metric_series_evicted_total", "ablationd_build_info", "ablationd_runs_total",
        "ablationd_measurements_total", "ablationd_verifications_total"})
    EXPECT_EQ(Lines(before, std::string("# TYPE ") + name + " ").size(), 1u) << name;
  // A GPU, a locked run and a measurement: every family has a series.
  m.GpuAdopted(0, true, "GPU-1", "Test GPU");
  m.RunCreated(1, v1::RUN_KIND_ABLATION, 0);
  v1::DeviceIdentity device;
  device.set_uuid("GPU-1");
  m.RunStarted(1, device, true, 1980, 3201);
  v1::Measurement row;
  row.set_status(v1::MEASUREMENT_STATUS_OK);
  row.set_tflops(100);
  row.set_wall_seconds(1);
  m.Measured(1, row);
  const std::string text = WriteText(m.registry());
  for (const auto& [name, type] : std::vector<std::pair<std::string, std::string>>{
           {"ablationd_metric_series_evicted_total", "counter"},
           {"ablationd_build_info", "gauge"},
           {"ablationd_gpu_usable", "gauge"},
           {"ablationd_queue_length", "gauge"},
           {"ablationd_runs_running", "gauge"},
           {"ablationd_runs_total", "counter"},
           {"ablationd_measurements_total", "counter"},
           {"ablationd_verifications_total", "counter"},
           {"ablationd_worker_restarts_total", "counter"},
           {"ablationd_worker_hangs_total", "counter"},
           {"ablationd_worker_idle_deaths_total", "counter"},
           {"ablationd_measurement_wall_seconds", "histogram"},
           {"ablationd_clock_locked", "gauge"},
           {"ablationd_clock_lock_target_hertz", "gauge"},
           {"ablationd_latest_operations_per_second", "gauge"},
           {"ablationd_gpu_info", "gauge"}}) {
    EXPECT_EQ(Lines(text, "# TYPE " + name + " ").size(), 1u) << name;
    EXPECT_EQ(Lines(text, "# TYPE " + name + " " + type).size(), 1u) << name << "\n" << text;
    EXPECT_EQ(Lines(text, "# HELP " + name + " ").size(), 1u) << name;
  }
  EXPECT_EQ(Lines(text, "# TYPE ").size(), 16u) << text;
}

TEST(ExpositionTest, HelpTextsAreOneLineWithoutBackslashes) {
  // prometheus-cpp 1.0.1 writes HELP as it is: a line feed or a backslash in it would break the
  // format, so none may have one.
  DaemonMetrics m;
  for (const auto& family : m.registry().Collect()) {
    EXPECT_EQ(family.help.find('\n'), std::string::npos) << family.name;
    EXPECT_EQ(family.help.find('\\'), std::string::npos) << family.name;
  }
}

TEST(ExpositionTest, LabelValuesAreEscapedAndHistogramsCumulative) {
  DaemonMetrics m;
  m.GpuAdopted(0, true, "GPU-1", "NVIDIA \"H200\" \\ x\nnext");
  m.RunCreated(1, v1::RUN_KIND_ABLATION, 0);
  m.RunStarted(1, v1::DeviceIdentity(), false, 0, 0);
  for (double wall : {0.005, 0.05, 0.07, 3.0, 1000.0}) {
    v1::Measurement row;
    row.set_status(v1::MEASUREMENT_STATUS_OK);
    row.set_wall_seconds(wall);
    m.Measured(1, row);
  }
  const std::string text = WriteText(m.registry());
  EXPECT_NE(
      text.find("ablationd_gpu_info{gpu=\"0\",model_name=\"NVIDIA \\\"H200\\\" \\\\ x\\nnext\","
                "uuid=\"GPU-1\"} 1\n"),
      std::string::npos)
      << text;
  for (const char* line : {"ablationd_measurement_wall_seconds_bucket{gpu=\"0\",le=\"0.01\"} 1",
                           "ablationd_measurement_wall_seconds_bucket{gpu=\"0\",le=\"0.05\"} 2",
                           "ablationd_measurement_wall_seconds_bucket{gpu=\"0\",le=\"0.1\"} 3",
                           "ablationd_measurement_wall_seconds_bucket{gpu=\"0\",le=\"5\"} 4",
                           "ablationd_measurement_wall_seconds_bucket{gpu=\"0\",le=\"300\"} 4",
                           "ablationd_measurement_wall_seconds_bucket{gpu=\"0\",le=\"+Inf\"} 5",
                           "ablationd_measurement_wall_seconds_count{gpu=\"0\"} 5"})
    EXPECT_EQ(Lines(text, line).size(), 1u) << line << "\n" << text;
}

TEST(RegistryTest, ANameDefinedTwiceIsRefused) {
  // The daemon's registry throws rather than handing the family of that name to a second
  // definition (prometheus-cpp's default, which would hide the mistake).
  DaemonMetrics m;
  EXPECT_THROW(
      prometheus::BuildGauge().Name("ablationd_build_info").Help("again").Register(m.registry()),
      std::invalid_argument);
}

}  // namespace
}  // namespace ablation::metrics
