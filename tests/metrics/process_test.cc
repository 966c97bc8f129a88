// The process collector: /proc/self read at each scrape, in the names of the Prometheus clients.
#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>
#include <map>
#include <string>

#include <prometheus/counter.h>
#include <prometheus/registry.h>

#include "server/metrics/exposition.h"
#include "server/metrics/process.h"

namespace ablation::metrics {
namespace {

std::map<std::string, double> Values(const prometheus::Collectable& c) {
  std::map<std::string, double> out;
  for (const prometheus::MetricFamily& f : c.Collect()) {
    if (f.metric.empty()) continue;
    out[f.name] = f.type == prometheus::MetricType::Counter ? f.metric[0].counter.value
                                                            : f.metric[0].gauge.value;
  }
  return out;
}

TEST(ProcessCollector, ReadsThisProcess) {
  std::map<std::string, double> v = Values(ProcessCollector());
  ASSERT_EQ(v.count("process_resident_memory_bytes"), 1u);
  EXPECT_GT(v["process_resident_memory_bytes"], 1 << 20);  // a gtest binary holds more than 1 MiB
  EXPECT_GE(v["process_virtual_memory_bytes"], v["process_resident_memory_bytes"]);
  EXPECT_GE(v["process_cpu_seconds_total"], 0);
  EXPECT_GE(v["process_open_fds"], 3);  // stdin, stdout, stderr at least
  EXPECT_GE(v["process_max_fds"], v["process_open_fds"]);
  const double now =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  ASSERT_EQ(v.count("process_start_time_seconds"), 1u);
  EXPECT_LE(v["process_start_time_seconds"], now + 1);
  EXPECT_GT(v["process_start_time_seconds"], now - 3600) << "this test started within the hour";
  // An open descriptor is counted.
  const double before = v["process_open_fds"];
  const int fd = dup(1);
  ASSERT_GE(fd, 0);
  EXPECT_EQ(Values(ProcessCollector())["process_open_fds"], before + 1);
  close(fd);
}

TEST(ProcessCollector, ParsesACommandNameWithSpacesAndParentheses) {
  const std::string line =
      "4242 (a (weird) name) S 1 4242 4242 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 3 0 12345 "
      "104857600 2560 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 3 0 0 0 0 0";
  ProcStat s;
  ASSERT_TRUE(ParseProcStat(line, &s));
  EXPECT_EQ(s.user_ticks, 250);
  EXPECT_EQ(s.system_ticks, 50);
  EXPECT_EQ(s.start_ticks, 12345);
  EXPECT_EQ(s.virtual_bytes, 104857600);
  EXPECT_EQ(s.resident_pages, 2560);
  EXPECT_FALSE(ParseProcStat("4242 no parenthesis", &s));
  EXPECT_FALSE(ParseProcStat("4242 (short) S 1 2 3", &s));
}

TEST(ProcessCollector, ServedBesideTheRegistryInTheTextFormat) {
  prometheus::Registry registry;
  prometheus::BuildCounter()
      .Name("ablationd_test_total")
      .Help("A test counter.")
      .Register(registry)
      .Add({})
      .Increment(2);
  const ProcessCollector process;
  const Collectables both({&registry, &process});
  const std::string text = WriteText(both);
  EXPECT_NE(text.find("ablationd_test_total 2"), std::string::npos) << text;
  EXPECT_NE(text.find("# TYPE process_cpu_seconds_total counter"), std::string::npos) << text;
  EXPECT_NE(text.find("# TYPE process_resident_memory_bytes gauge"), std::string::npos) << text;
}

}  // namespace
}  // namespace ablation::metrics
