// The process's own metrics in the names every Prometheus client library gives them
// (process_cpu_seconds_total, process_resident_memory_bytes, process_virtual_memory_bytes,
// process_open_fds, process_max_fds, process_start_time_seconds), read from /proc at each scrape.
// Written here because Debian's prometheus-cpp (1.0.1, core library) has no process collector,
// and neither has upstream's: the Go and Python clients read the same /proc files.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <prometheus/collectable.h>
#include <prometheus/metric_family.h>

namespace ablation::metrics {

/// /proc/self of this process at Collect().
class ProcessCollector : public prometheus::Collectable {
 public:
  std::vector<prometheus::MetricFamily> Collect() const override;
};

/// Several collectables served as one (the daemon's registry and the process collector).
class Collectables : public prometheus::Collectable {
 public:
  explicit Collectables(std::vector<const prometheus::Collectable*> parts)
      : parts_(std::move(parts)) {}
  std::vector<prometheus::MetricFamily> Collect() const override;

 private:
  std::vector<const prometheus::Collectable*> parts_;
};

/// The fields of a /proc/PID/stat line that the collector reads, or false when it does not parse
/// (exposed for the test, which feeds it lines with spaces and parentheses in the command name).
struct ProcStat {
  double user_ticks = 0, system_ticks = 0, start_ticks = 0;
  double virtual_bytes = 0, resident_pages = 0;
};
bool ParseProcStat(const std::string& line, ProcStat* out);

}  // namespace ablation::metrics
