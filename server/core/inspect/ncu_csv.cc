#include "server/core/inspect/ncu_csv.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "common/text.h"

namespace ablation::core {
namespace {

/// "==ERROR== text" -> "text" when the line carries `marker`.
bool Message(std::string_view line, std::string_view marker, std::string* text) {
  if (line.substr(0, marker.size()) != marker) return false;
  *text = std::string(common::TrimSpace(line.substr(marker.size())));
  return true;
}

int IndexOf(const std::vector<std::string>& header, std::string_view name) {
  for (size_t i = 0; i < header.size(); ++i)
    if (header[i] == name) return int(i);
  return -1;
}

std::string At(const std::vector<std::string>& row, int i) {
  return i >= 0 && size_t(i) < row.size() ? row[size_t(i)] : "";
}

}  // namespace

std::vector<std::string> SplitCsvRecord(std::string_view line) {
  std::vector<std::string> fields;
  std::string field;
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        field += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      fields.push_back(std::move(field));
      field.clear();
    } else if (c != '\r' && c != '\n') {
      field += c;
    }
  }
  fields.push_back(std::move(field));
  return fields;
}

std::optional<double> ParseNcuNumber(std::string_view text) {
  std::string digits;
  for (char c : common::TrimSpace(text))
    if (c != ',') digits += c;
  if (digits.empty()) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(digits.c_str(), &end);
  if (end != digits.c_str() + digits.size() || errno == ERANGE || !std::isfinite(v))
    return std::nullopt;
  return v;
}

NcuOutput ParseNcuCsv(std::string_view text) {
  NcuOutput out;
  std::vector<std::string> header;
  bool units_pending = false;
  std::vector<std::string> units;
  // The details layout: one record per metric, gathered into its launch by id.
  int detail_name = -1, detail_unit = -1, detail_value = -1;
  std::map<std::string, size_t> launch_by_id;
  for (size_t b = 0; b < text.size();) {
    size_t e = text.find('\n', b);
    if (e == std::string_view::npos) e = text.size();
    const std::string_view line = common::TrimSpace(text.substr(b, e - b));
    b = e + 1;
    std::string message;
    if (Message(line, "==ERROR==", &message)) {
      out.errors.push_back(message);
      continue;
    }
    if (Message(line, "==WARNING==", &message)) {
      out.warnings.push_back(message);
      continue;
    }
    // Only CSV records start with a quote: ==PROF== lines and the program's own output do not.
    if (line.empty() || line.front() != '"') continue;
    std::vector<std::string> row = SplitCsvRecord(line);
    if (header.empty() || (!row.empty() && row[0] == "ID")) {
      if (row.empty() || row[0] != "ID") continue;
      header = std::move(row);
      units.clear();
      units_pending = true;
      detail_name = IndexOf(header, "Metric Name");
      detail_unit = IndexOf(header, "Metric Unit");
      detail_value = IndexOf(header, "Metric Value");
      continue;
    }
    if (units_pending && !row.empty() && row[0].empty()) {
      units = std::move(row);  // the raw page's second row: every launch field empty
      units_pending = false;
      continue;
    }
    units_pending = false;
    const std::string id = At(row, 0);
    auto found = launch_by_id.find(id);
    if (found == launch_by_id.end() || detail_name < 0) {
      NcuLaunch launch;
      launch.id = id;
      launch.kernel_name = At(row, IndexOf(header, "Kernel Name"));
      launch.cc = At(row, IndexOf(header, "CC"));
      launch_by_id[id] = out.launches.size();
      out.launches.push_back(std::move(launch));
      found = launch_by_id.find(id);
    }
    NcuLaunch& launch = out.launches[found->second];
    if (detail_name >= 0 && detail_value >= 0) {
      launch.metrics[At(row, detail_name)] = {At(row, detail_unit), At(row, detail_value)};
      continue;
    }
    // Raw page: a metric column is one whose name has ncu's "unit__counter" form.
    for (size_t i = 0; i < header.size() && i < row.size(); ++i)
      if (header[i].find("__") != std::string::npos)
        launch.metrics[header[i]] = {At(units, int(i)), row[i]};
  }
  return out;
}

}  // namespace ablation::core
