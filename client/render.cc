#include "client/render.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <ctime>

#include <google/protobuf/util/json_util.h>

namespace ablation::client {
namespace {

// Columns are measured in code points, so UTF-8 in error texts does not skew alignment.
std::size_t DisplayWidth(std::string_view text) {
  std::size_t width = 0;
  for (unsigned char c : text) width += (c & 0xC0) != 0x80;
  return width;
}

// A table cell is one line: newlines and tabs in error texts would break the columns.
std::string OneLine(std::string_view text) {
  std::string line;
  line.reserve(text.size());
  for (char c : text) {
    if (c == '\r') continue;
    line += (c == '\n' || c == '\t') ? ' ' : c;
  }
  return line;
}

std::string FormatScientific(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.3e", value);
  return buffer;
}

std::string FormatMs(double ms) { return FormatSignificant(ms, 4); }

std::string Dash() { return "-"; }

// A number for people with its exact form for machines; "-" / empty when absent.
Cell Number(bool present, std::string text, double exact) {
  if (!present) return Cell(Dash(), "");
  return Cell(std::move(text), FormatExact(exact));
}

std::string Int(std::int64_t value) { return std::to_string(value); }

std::string Duration(std::int64_t start_ms, std::int64_t end_ms) {
  if (start_ms <= 0 || end_ms <= 0 || end_ms < start_ms) return Dash();
  double seconds = static_cast<double>(end_ms - start_ms) / 1000.0;
  if (seconds < 120) return FormatSignificant(seconds, 3) + " s";
  if (seconds < 7200) return FormatFixed(seconds / 60, 1) + " min";
  return FormatFixed(seconds / 3600, 1) + " h";
}

std::string DeviceLabel(const v1::DeviceIdentity& device) {
  if (device.name().empty()) return Dash();
  return device.name() + " (GPU " + std::to_string(device.index()) + ")";
}

void AddField(Table& table, std::string key, std::string title, std::string value) {
  table.rows.push_back({Cell(std::move(title), std::move(key)), Cell(std::move(value))});
}

}  // namespace

// ---------------------------------------------------------------- generic renderers

std::string RenderText(const Table& table) {
  const std::size_t n = table.columns.size();
  std::vector<std::vector<std::string>> lines;
  lines.reserve(table.rows.size() + 1);
  std::vector<std::string> header;
  for (const Column& column : table.columns) header.push_back(column.title);
  lines.push_back(std::move(header));
  for (const auto& row : table.rows) {
    std::vector<std::string> line;
    for (std::size_t i = 0; i < n; ++i) line.push_back(i < row.size() ? OneLine(row[i].text) : "");
    lines.push_back(std::move(line));
  }
  std::vector<std::size_t> widths(n, 0);
  for (const auto& line : lines) {
    for (std::size_t i = 0; i < n; ++i) widths[i] = std::max(widths[i], DisplayWidth(line[i]));
  }
  std::string text;
  auto emit = [&](const std::vector<std::string>& line) {
    std::string out;
    for (std::size_t i = 0; i < n; ++i) {
      if (i > 0) out += "  ";
      std::string pad(widths[i] - DisplayWidth(line[i]), ' ');
      out += table.columns[i].align == Align::kRight ? pad + line[i] : line[i] + pad;
    }
    out.erase(out.find_last_not_of(' ') + 1);
    text += out;
    text += '\n';
  };
  emit(lines[0]);
  std::vector<std::string> rule;
  for (std::size_t i = 0; i < n; ++i) rule.emplace_back(widths[i], '-');
  emit(rule);
  for (std::size_t r = 1; r < lines.size(); ++r) emit(lines[r]);
  return text;
}

std::string RenderMarkdown(const Table& table) {
  auto escape = [](std::string_view value) {
    std::string out;
    for (char c : OneLine(value)) {
      if (c == '|') out += '\\';
      out += c;
    }
    return out;
  };
  std::string text = "|";
  for (const Column& column : table.columns) text += " " + escape(column.title) + " |";
  text += "\n|";
  for (const Column& column : table.columns) {
    text += column.align == Align::kRight ? " ---: |" : " --- |";
  }
  text += '\n';
  for (const auto& row : table.rows) {
    text += "|";
    for (std::size_t i = 0; i < table.columns.size(); ++i) {
      text += " " + (i < row.size() ? escape(row[i].text) : std::string()) + " |";
    }
    text += '\n';
  }
  return text;
}

std::string CsvField(std::string_view value) {
  if (value.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(value);
  std::string out = "\"";
  for (char c : value) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
  return out;
}

std::string RenderCsv(const Table& table) {
  std::string text;
  for (std::size_t i = 0; i < table.columns.size(); ++i) {
    if (i > 0) text += ',';
    text += CsvField(table.columns[i].key);
  }
  text += "\r\n";
  for (const auto& row : table.rows) {
    for (std::size_t i = 0; i < table.columns.size(); ++i) {
      if (i > 0) text += ',';
      if (i < row.size()) text += CsvField(row[i].Exact());
    }
    text += "\r\n";
  }
  return text;
}

std::string RenderTableAs(Format format, const Table& table) {
  switch (format) {
    case Format::kCsv:
      return RenderCsv(table);
    case Format::kMarkdown:
      return RenderMarkdown(table);
    case Format::kTable:
    case Format::kJson:
      break;
  }
  return RenderText(table);
}

// ---------------------------------------------------------------- JSON

std::string JsonObject(const google::protobuf::Message& message) {
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  options.always_print_primitive_fields = true;
  std::string json;
  auto status = google::protobuf::util::MessageToJsonString(message, &json, options);
  // Only messages with Any fields of unknown types fail, and this API has none.
  if (!status.ok()) return "null";
  return json;
}

std::string JsonArray(const std::vector<const google::protobuf::Message*>& messages) {
  if (messages.empty()) return "[]\n";
  // One object per line: valid JSON, and still readable with grep.
  std::string text = "[\n";
  for (std::size_t i = 0; i < messages.size(); ++i) {
    text += "  " + JsonObject(*messages[i]);
    text += i + 1 < messages.size() ? ",\n" : "\n";
  }
  text += "]\n";
  return text;
}

// ---------------------------------------------------------------- values

std::string FormatFixed(double value, int decimals) {
  if (!std::isfinite(value)) return FormatExact(value);
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", decimals, value);
  return buffer;
}

std::string FormatSignificant(double value, int digits) {
  if (!std::isfinite(value)) return FormatExact(value);
  if (value == 0) return "0";
  const int magnitude = static_cast<int>(std::floor(std::log10(std::fabs(value)))) + 1;
  int decimals = std::max(0, digits - magnitude);
  std::string text = FormatFixed(value, decimals);
  // Rounding can carry into one more integer digit (9.9996 -> 10.000): drop a decimal then.
  if (decimals > 0 && std::fabs(std::strtod(text.c_str(), nullptr)) >= std::pow(10.0, magnitude)) {
    text = FormatFixed(value, decimals - 1);
  }
  return text;
}

std::string FormatExact(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  char buffer[64];
  auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, value);
  return std::string(buffer, end);
}

std::string FormatShape(const v1::Shape& shape) {
  return Int(shape.m()) + "x" + Int(shape.n()) + "x" + Int(shape.k());
}

std::string FormatTimeMs(std::int64_t unix_ms) {
  if (unix_ms <= 0) return Dash();
  std::time_t seconds = static_cast<std::time_t>(unix_ms / 1000);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return buffer;
}

std::string FormatBytes(std::int64_t bytes) {
  if (bytes < 1024) return Int(bytes) + " B";
  const char* units[] = {"KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes) / 1024;
  int unit = 0;
  while (value >= 1024 && unit < 3) {
    value /= 1024;
    ++unit;
  }
  std::string number = value == std::floor(value) ? FormatFixed(value, 0) : FormatFixed(value, 1);
  return number + " " + units[unit];
}

std::string Join(const std::vector<std::string>& items, std::string_view separator) {
  std::string text;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i > 0) text += separator;
    text += items[i];
  }
  return text;
}

// ---------------------------------------------------------------- tables of messages

Table VariantsTable(const std::vector<v1::Variant>& variants) {
  Table table;
  table.columns = {{"name", "name"},
                   {"family", "family"},
                   {"dtypes", "dtypes"},
                   {"tile", "tile"},
                   {"threads", "threads", Align::kRight},
                   {"smem_bytes", "smem", Align::kRight}};
  for (const v1::Variant& v : variants) {
    std::vector<std::string> dtypes(v.dtypes().begin(), v.dtypes().end());
    std::string tile = Int(v.tile_m()) + "x" + Int(v.tile_n()) + "x" + Int(v.tile_k());
    table.rows.push_back({v.name(), v.family(), Join(dtypes, ","), tile, Int(v.threads()),
                          Cell(FormatBytes(v.smem_bytes()), Int(v.smem_bytes()))});
  }
  return table;
}

Table MeasurementsTable(const std::vector<v1::Measurement>& measurements) {
  const bool any_verified =
      std::any_of(measurements.begin(), measurements.end(),
                  [](const v1::Measurement& m) { return !m.verification().empty(); });
  // Rates only micro-benchmarks model (smem2reg): their columns appear when a row has them.
  const bool any_bytes =
      std::any_of(measurements.begin(), measurements.end(),
                  [](const v1::Measurement& m) { return m.bytes_per_second() > 0; });
  const bool any_loads =
      std::any_of(measurements.begin(), measurements.end(),
                  [](const v1::Measurement& m) { return m.fragment_loads_per_second() > 0; });
  Table table;
  table.columns = {{"variant", "variant"},
                   {"dtype", "dtype"},
                   {"shape", "shape"},
                   {"median_ms", "median ms", Align::kRight},
                   {"noise_pct", "noise %", Align::kRight},
                   {"tflops", "TFLOPS", Align::kRight}};
  if (any_bytes) table.columns.push_back({"bytes_per_second", "GB/s", Align::kRight});
  if (any_loads) table.columns.push_back({"fragment_loads_per_second", "Gloads/s", Align::kRight});
  table.columns.push_back({"samples", "samples", Align::kRight});
  table.columns.push_back({"status", "status"});
  if (any_verified) table.columns.push_back({"verification", "verified"});
  table.columns.push_back({"error", "error"});
  for (const v1::Measurement& m : measurements) {
    const bool timed = m.stats().samples() > 0;
    std::vector<Cell> row = {
        m.variant(),
        m.dtype(),
        FormatShape(m.shape()),
        Number(timed, FormatMs(m.stats().median_ms()), m.stats().median_ms()),
        Number(timed, FormatFixed(m.stats().noise() * 100, 2), m.stats().noise() * 100),
        Number(timed && m.tflops() > 0, FormatFixed(m.tflops(), 1), m.tflops())};
    if (any_bytes) {
      const double v = m.bytes_per_second();
      row.push_back(Number(timed && v > 0, FormatFixed(v / 1e9, 1), v));
    }
    if (any_loads) {
      const double v = m.fragment_loads_per_second();
      row.push_back(Number(timed && v > 0, FormatFixed(v / 1e9, 2), v));
    }
    row.push_back(Number(timed, Int(m.stats().samples()), m.stats().samples()));
    row.emplace_back(m.status());
    if (any_verified) row.emplace_back(m.verification());
    row.emplace_back(m.error());
    table.rows.push_back(std::move(row));
  }
  return table;
}

Table RunsTable(const std::vector<v1::Run>& runs) {
  Table table;
  table.columns = {{"id", "id", Align::kRight},
                   {"state", "state"},
                   {"kind", "kind"},
                   {"device", "device"},
                   {"created", "created"},
                   {"duration", "duration", Align::kRight},
                   {"planned", "planned", Align::kRight},
                   {"ok", "ok", Align::kRight},
                   {"failed", "failed", Align::kRight},
                   {"tags", "tags"},
                   {"requested_by", "by"}};
  for (const v1::Run& r : runs) {
    std::vector<std::string> tags(r.tags().begin(), r.tags().end());
    const bool timed = r.started_at_ms() > 0 && r.finished_at_ms() >= r.started_at_ms();
    table.rows.push_back(
        {Int(r.id()), r.state(), r.kind(), Cell(DeviceLabel(r.device()), r.device().name()),
         Cell(FormatTimeMs(r.created_at_ms()), r.created_at_ms() > 0 ? Int(r.created_at_ms()) : ""),
         Cell(Duration(r.started_at_ms(), r.finished_at_ms()),
              timed ? Int(r.finished_at_ms() - r.started_at_ms()) : ""),
         Int(r.planned()), Int(r.ok()), Int(r.failed()), Join(tags, ","), r.requested_by()});
  }
  // The CSV column holds milliseconds, which its key should say.
  table.columns[5].key = "duration_ms";
  table.columns[4].key = "created_at_ms";
  return table;
}

Table VerifyTable(const std::vector<v1::VerifyResult>& results) {
  Table table;
  table.columns = {{"variant", "variant"},
                   {"dtype", "dtype"},
                   {"shape", "shape"},
                   {"against", "against"},
                   {"max_abs_error", "max abs err", Align::kRight},
                   {"max_rel_error", "max rel err", Align::kRight},
                   {"rel_frobenius_error", "rel frob err", Align::kRight},
                   {"tolerance", "tolerance", Align::kRight},
                   {"mismatches", "mismatches", Align::kRight},
                   {"nan_count", "NaN", Align::kRight},
                   {"unwritten_count", "unwritten", Align::kRight},
                   {"passed", "result"},
                   {"error", "error"}};
  for (const v1::VerifyResult& r : results) {
    auto sci = [](double v) { return Cell(FormatScientific(v), FormatExact(v)); };
    table.rows.push_back(
        {r.variant(), r.dtype(), FormatShape(r.shape()), r.against(), sci(r.max_abs_error()),
         sci(r.max_rel_error()), sci(r.rel_frobenius_error()), sci(r.tolerance()),
         Int(r.mismatches()), Int(r.nan_count()), Int(r.unwritten_count()),
         Cell(r.passed() ? "pass" : "FAIL", r.passed() ? "true" : "false"), r.error()});
  }
  return table;
}

Table DeviceTable(const v1::GetDeviceResponse& response) {
  Table table;
  table.columns = {{"field", "field"}, {"value", "value"}};
  const v1::DeviceIdentity& d = response.device();
  AddField(table, "available", "available", response.available() ? "yes" : "no");
  if (!response.available()) {
    AddField(table, "unavailable_reason", "reason", response.unavailable_reason());
  }
  AddField(table, "index", "index", Int(d.index()));
  if (!d.name().empty()) {
    AddField(table, "name", "name", d.name());
    AddField(table, "uuid", "uuid", d.uuid());
    AddField(table, "compute_capability", "compute capability", d.compute_capability());
    AddField(table, "sm_count", "SMs", Int(d.sm_count()));
    AddField(table, "memory_bytes", "memory", FormatBytes(d.memory_bytes()));
    AddField(table, "l2_bytes", "L2", FormatBytes(d.l2_bytes()));
    AddField(table, "smem_per_block_optin", "smem per block (opt-in)",
             FormatBytes(d.smem_per_block_optin()));
    AddField(table, "smem_per_sm", "smem per SM", FormatBytes(d.smem_per_sm()));
    AddField(table, "driver_version", "driver", d.driver_version());
    AddField(table, "cuda_runtime_version", "CUDA runtime", d.cuda_runtime_version());
    AddField(table, "cublas_version", "cuBLAS", d.cublas_version());
  }
  AddField(table, "device_count", "devices", Int(response.device_count()));
  AddField(table, "queued_runs", "queued runs", Int(response.queued_runs()));
  AddField(table, "running_run_id", "running run",
           response.running_run_id() > 0 ? Int(response.running_run_id()) : Dash());
  const v1::Telemetry& t = response.live();
  if (t.available()) {
    AddField(table, "sm_clock_mhz", "SM clock", FormatFixed(t.sm_clock_mhz_mean(), 0) + " MHz");
    AddField(table, "mem_clock_mhz", "memory clock",
             FormatFixed(t.mem_clock_mhz_mean(), 0) + " MHz");
    AddField(table, "power_w", "power", FormatFixed(t.power_w_mean(), 1) + " W");
    AddField(table, "temperature_c", "temperature", FormatFixed(t.temperature_c_mean(), 0) + " C");
    std::vector<std::string> reasons(t.throttle_reasons().begin(), t.throttle_reasons().end());
    AddField(table, "throttle_reasons", "clock events",
             reasons.empty() ? "none" : Join(reasons, ","));
  } else if (!t.unavailable_reason().empty()) {
    AddField(table, "telemetry", "telemetry", "unavailable: " + t.unavailable_reason());
  }
  auto clock_range = [](const auto& clocks) {
    if (clocks.empty()) return Dash();
    auto [lo, hi] = std::minmax_element(clocks.begin(), clocks.end());
    return Int(clocks.size()) + " clocks, " + Int(*lo) + ".." + Int(*hi) + " MHz";
  };
  if (!response.supported_sm_clocks_mhz().empty()) {
    AddField(table, "supported_sm_clocks_mhz", "lockable SM clocks",
             clock_range(response.supported_sm_clocks_mhz()));
  }
  if (!response.supported_mem_clocks_mhz().empty()) {
    AddField(table, "supported_mem_clocks_mhz", "lockable memory clocks",
             clock_range(response.supported_mem_clocks_mhz()));
  }
  return table;
}

std::string RunHeader(const v1::Run& run) {
  std::vector<std::pair<std::string, std::string>> fields;
  fields.emplace_back("run", Int(run.id()) + (run.kind().empty() ? "" : " (" + run.kind() + ")"));
  fields.emplace_back("state", run.state());
  const v1::DeviceIdentity& d = run.device();
  std::string device = DeviceLabel(d);
  if (!d.name().empty()) {
    device += ", sm " + d.compute_capability() + ", " + Int(d.sm_count()) + " SMs, driver " +
              d.driver_version() + ", CUDA " + d.cuda_runtime_version();
    if (!d.cublas_version().empty()) device += ", cuBLAS " + d.cublas_version();
  }
  fields.emplace_back("device", device);
  if (!d.uuid().empty()) fields.emplace_back("uuid", d.uuid());
  if (!run.daemon_version().empty()) {
    fields.emplace_back(
        "daemon",
        run.daemon_version() + (run.git_revision().empty() ? "" : " (" + run.git_revision() + ")"));
  }
  if (!run.requested_by().empty()) fields.emplace_back("requested by", run.requested_by());
  std::vector<std::string> tags(run.tags().begin(), run.tags().end());
  fields.emplace_back("tags", tags.empty() ? Dash() : Join(tags, ", "));
  fields.emplace_back("created", FormatTimeMs(run.created_at_ms()));
  fields.emplace_back("started", FormatTimeMs(run.started_at_ms()));
  std::string finished = FormatTimeMs(run.finished_at_ms());
  if (run.finished_at_ms() > 0 && run.started_at_ms() > 0) {
    finished += " (took " + Duration(run.started_at_ms(), run.finished_at_ms()) + ")";
  }
  fields.emplace_back("finished", finished);
  fields.emplace_back("measurements", Int(run.planned()) + " planned, " + Int(run.ok()) + " ok, " +
                                          Int(run.failed()) + " failed");
  if (!run.clock_policy().empty()) fields.emplace_back("clocks", run.clock_policy());
  if (!run.error().empty()) fields.emplace_back("error", OneLine(run.error()));
  std::size_t width = 0;
  for (const auto& [key, value] : fields) width = std::max(width, key.size());
  std::string text;
  for (const auto& [key, value] : fields) {
    text += key + std::string(width - key.size() + 2, ' ') + value + "\n";
  }
  return text;
}

// ---------------------------------------------------------------- progress

std::string ProgressLine(const v1::RunEvent& event, int measurements_seen, int total) {
  switch (event.event_case()) {
    case v1::RunEvent::kQueued: {
      const auto& q = event.queued();
      std::string line = "run " + Int(q.run_id()) + " queued";
      if (q.position() == 0) return line + ": next to start";
      return line + ": " + Int(q.position()) + (q.position() == 1 ? " run" : " runs") + " ahead";
    }
    case v1::RunEvent::kStarted: {
      const auto& s = event.started();
      return "run " + Int(s.run_id()) + " started on " + DeviceLabel(s.device()) + ": " +
             Int(s.total()) + (s.total() == 1 ? " measurement" : " measurements") + " planned";
    }
    case v1::RunEvent::kMeasurement: {
      const auto& m = event.measurement();
      std::string line = "[" + Int(measurements_seen);
      if (total > 0) line += "/" + Int(total);
      line += "] " + m.variant() + " " + m.dtype() + " " + FormatShape(m.shape()) + ": ";
      if (m.status() == "ok") {
        line += FormatMs(m.stats().median_ms()) + " ms, ";
        if (m.tflops() > 0 || m.bytes_per_second() <= 0) {
          line += FormatFixed(m.tflops(), 1) + " TFLOPS, ";
        }
        if (m.bytes_per_second() > 0) {
          line += FormatFixed(m.bytes_per_second() / 1e9, 1) + " GB/s, ";
        }
        if (m.fragment_loads_per_second() > 0) {
          line += FormatFixed(m.fragment_loads_per_second() / 1e9, 2) + " Gloads/s, ";
        }
        line += "noise " + FormatFixed(m.stats().noise() * 100, 2) + "%, " +
                Int(m.stats().samples()) + " samples";
        if (!m.verification().empty()) line += ", verification " + m.verification();
        return line;
      }
      line += m.status() == "failed" ? "FAILED" : m.status();
      if (!m.error().empty()) line += ": " + OneLine(m.error());
      return line;
    }
    case v1::RunEvent::kFinished: {
      const auto& f = event.finished();
      return "run " + Int(f.run_id()) + " " + f.state() + ": " + Int(f.ok()) + " ok, " +
             Int(f.failed()) + " failed";
    }
    case v1::RunEvent::kFailed: {
      const auto& f = event.failed();
      return "run " + Int(f.run_id()) + " failed: " + OneLine(f.reason());
    }
    case v1::RunEvent::EVENT_NOT_SET:
      break;
  }
  return {};
}

// ---------------------------------------------------------------- advise and sass

namespace {

std::string TileLabel(const v1::AdviseRequest& r) {
  return std::to_string(r.bm()) + "x" + std::to_string(r.bn()) + "x" + std::to_string(r.bk()) +
         " " + r.dtype();
}

std::string Hex4(std::int64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%04llx", static_cast<long long>(v));
  return buf;
}

}  // namespace

Table AdviceTable(const v1::AdviseRequest& request, const v1::AdviseResponse& r) {
  Table table;
  table.columns = {{"field", "field"}, {"value", "value"}};
  const v1::SmemBudget& s = r.smem();
  AddField(table, "tile", "tile", TileLabel(request));
  AddField(table, "arch", "arch", r.arch() + " (" + r.arch_gpus() + ")");
  table.rows.push_back({Cell("compute/load ratio", "ratio"),
                        Cell(FormatFixed(r.ratio(), 1) + " FLOP/byte", FormatExact(r.ratio()))});
  AddField(table, "rule", "rule", r.rule());
  AddField(table, "rule_reason", "why", r.rule_reason());
  AddField(table, "single_bytes", "single buffer",
           FormatBytes(s.single_bytes()) + " (A " + FormatBytes(s.a_bytes()) + " + B " +
               FormatBytes(s.b_bytes()) + ")");
  AddField(table, "double_bytes", "double buffer", FormatBytes(s.double_bytes()));
  AddField(table, "smem_per_sm", "smem per SM", FormatBytes(s.smem_per_sm()));
  AddField(table, "smem_per_block_max", "smem per block (max)", FormatBytes(s.smem_per_block_max()));
  AddField(table, "cliff_bytes", "cliff (2 blocks/SM)", FormatBytes(s.cliff_bytes()));
  AddField(table, "blocks_per_sm_single", "blocks/SM single", Int(s.blocks_per_sm_single()));
  AddField(table, "blocks_per_sm_double", "blocks/SM double", Int(s.blocks_per_sm_double()));
  AddField(table, "smem_verdict", "smem verdict", s.verdict());
  const v1::MeasuredAdvice& m = r.measured();
  AddField(table, "measured", "measured", m.summary());
  if (!m.note().empty()) AddField(table, "measured_note", "note", m.note());
  for (const auto& p : m.points())
    AddField(table, "measured." + p.variant(), p.variant(),
             FormatFixed(p.tflops(), 2) + " TFLOPS at " + FormatShape(p.shape()) + " (run " +
                 Int(p.run_id()) + ")");
  return table;
}

std::string RenderAdvice(const v1::AdviseRequest& request, const v1::AdviseResponse& r) {
  return "advice for " + TileLabel(request) + " on " + r.arch() + "\n" +
         RenderText(AdviceTable(request, r));
}

Table SassFamilyTable(const v1::SassResponse& response) {
  Table table;
  table.columns = {{"variant", "variant"},
                   {"dtype", "dtype"},
                   {"verdict", "verdict"},
                   {"compute", "compute/iter", Align::kRight},
                   {"loads", "loads", Align::kRight},
                   {"overlapping_loads", "overlapping", Align::kRight},
                   {"barrier_after_compute", "barrier after"},
                   {"local", "LDL/STL", Align::kRight},
                   {"error", "error"}};
  std::vector<const v1::SassKernel*> kernels = {&response.kernel()};
  for (const auto& k : response.family()) kernels.push_back(&k);
  for (const v1::SassKernel* k : kernels) {
    const bool ok = k->error().empty() && k->loop_found();
    table.rows.push_back(
        {k->variant(), k->dtype(), k->verdict(),
         ok ? Cell(Int(k->compute_per_iteration()) + " " + k->compute_opcode(),
                   Int(k->compute_per_iteration()))
            : Cell(Dash(), ""),
         ok ? Cell(Int(k->loads()) + " " + k->load_opcode(), Int(k->loads())) : Cell(Dash(), ""),
         ok ? Cell(Int(k->overlapping_loads())) : Cell(Dash(), ""),
         ok ? Cell(k->barrier_after_compute() ? "yes" : "no") : Cell(Dash(), ""),
         k->error().empty() ? Cell(Int(k->local_loads() + k->local_stores())) : Cell(Dash(), ""),
         k->error().empty() ? Cell(Dash(), "") : Cell(k->error())});
  }
  return table;
}

std::string RenderSass(const v1::SassResponse& r) {
  const v1::SassKernel& k = r.kernel();
  std::string out = k.variant() + " " + k.dtype() + " " + r.arch() + ": ";
  std::string verdict = k.verdict();
  for (char& c : verdict) c = char(std::toupper(static_cast<unsigned char>(c)));
  out += verdict + "\n";
  out += "  kernel  " + k.symbol() + "\n";
  out += "  from    " + r.binary() + " (" + r.tool() + ")\n";
  if (!k.error().empty()) return out + "  error   " + k.error() + "\n";
  if (!k.loop_found()) return out + "  " + k.summary() + "\n";
  std::size_t width = 0;
  for (const auto& c : k.checks()) width = std::max(width, c.name().size());
  for (const auto& c : k.checks()) {
    out += std::string("  ") + (c.passed() ? "[ok]   " : "[FAIL] ") + c.name() +
           std::string(width - c.name().size() + 2, ' ') + c.detail() + "\n";
  }
  if (!r.family().empty()) {
    out += "\nfamily:\n";
    std::string text = RenderText(SassFamilyTable(r));
    std::size_t start = 0;
    while (start < text.size()) {
      std::size_t nl = text.find('\n', start);
      if (nl == std::string::npos) nl = text.size();
      out += "  " + text.substr(start, nl - start) + "\n";
      start = nl + 1;
    }
  }
  out += "\nmain loop " + Hex4(k.loop_start()) + ".." + Hex4(k.loop_end()) + " (" +
         Int(k.loop_instructions()) + " instructions); LOAD> = a load that reaches " +
         k.compute_opcode() + " with no BAR.SYNC between:\n";
  for (const auto& l : k.excerpt()) {
    std::string marker = l.marker();
    marker.resize(std::max<std::size_t>(marker.size(), 6), ' ');
    out += "  " + (l.offset() >= 0 ? Hex4(l.offset()) : std::string("    ")) + "  " + marker +
           "  " + l.text() + "\n";
  }
  return out;
}

}  // namespace ablation::client
