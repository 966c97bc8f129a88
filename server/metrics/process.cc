#include "server/metrics/process.h"

#include <sys/resource.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace ablation::metrics {
namespace {

std::string ReadLine(const char* path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

/// The system's boot time in seconds since the epoch (/proc/stat's btime), 0 when unknown.
double BootTime() {
  std::ifstream in("/proc/stat");
  std::string key;
  double value = 0;
  while (in >> key) {
    if (key == "btime") {
      in >> value;
      return value;
    }
    in.ignore(1 << 20, '\n');
  }
  return 0;
}

prometheus::MetricFamily One(const char* name, const char* help, prometheus::MetricType type,
                             double value) {
  prometheus::MetricFamily f;
  f.name = name;
  f.help = help;
  f.type = type;
  prometheus::ClientMetric m;
  if (type == prometheus::MetricType::Counter) {
    m.counter.value = value;
  } else {
    m.gauge.value = value;
  }
  f.metric.push_back(m);
  return f;
}

}  // namespace

bool ParseProcStat(const std::string& line, ProcStat* out) {
  // "pid (comm) state ppid ...": comm may hold spaces and parentheses, so the fields start after
  // the last ')'. Field 3 (state) is the first after it; utime is field 14, stime 15, starttime
  // 22, vsize 23, rss 24 (proc(5)).
  const std::size_t close = line.rfind(')');
  if (close == std::string::npos) return false;
  std::istringstream in(line.substr(close + 1));
  std::string field;
  std::vector<std::string> fields;
  while (in >> field) fields.push_back(field);
  if (fields.size() < 22) return false;  // fields[0] is field 3
  try {
    out->user_ticks = std::stod(fields[14 - 3]);
    out->system_ticks = std::stod(fields[15 - 3]);
    out->start_ticks = std::stod(fields[22 - 3]);
    out->virtual_bytes = std::stod(fields[23 - 3]);
    out->resident_pages = std::stod(fields[24 - 3]);
  } catch (const std::exception&) {
    return false;
  }
  return true;
}

std::vector<prometheus::MetricFamily> ProcessCollector::Collect() const {
  using prometheus::MetricType;
  std::vector<prometheus::MetricFamily> out;
  ProcStat stat;
  if (ParseProcStat(ReadLine("/proc/self/stat"), &stat)) {
    const double ticks = double(sysconf(_SC_CLK_TCK));
    const double page = double(sysconf(_SC_PAGESIZE));
    out.push_back(One("process_cpu_seconds_total", "User and system CPU time spent in seconds.",
                      MetricType::Counter, (stat.user_ticks + stat.system_ticks) / ticks));
    out.push_back(One("process_resident_memory_bytes", "Resident memory size in bytes.",
                      MetricType::Gauge, stat.resident_pages * page));
    out.push_back(One("process_virtual_memory_bytes", "Virtual memory size in bytes.",
                      MetricType::Gauge, stat.virtual_bytes));
    if (const double boot = BootTime(); boot > 0) {
      out.push_back(One("process_start_time_seconds",
                        "Start time of the process since unix epoch in seconds.", MetricType::Gauge,
                        boot + stat.start_ticks / ticks));
    }
  }
  std::error_code ec;
  double fds = 0;
  for (auto it = std::filesystem::directory_iterator("/proc/self/fd", ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    ++fds;
  }
  if (!ec) {
    out.push_back(
        One("process_open_fds", "Number of open file descriptors.", MetricType::Gauge, fds));
  }
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) == 0) {
    out.push_back(One("process_max_fds", "Maximum number of open file descriptors.",
                      MetricType::Gauge, double(limit.rlim_cur)));
  }
  return out;
}

std::vector<prometheus::MetricFamily> Collectables::Collect() const {
  std::vector<prometheus::MetricFamily> out;
  for (const prometheus::Collectable* part : parts_) {
    std::vector<prometheus::MetricFamily> some = part->Collect();
    out.insert(out.end(), std::make_move_iterator(some.begin()),
               std::make_move_iterator(some.end()));
  }
  return out;
}

}  // namespace ablation::metrics
