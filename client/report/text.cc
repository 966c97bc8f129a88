#include "client/report/text.h"

#include <cstdio>

#include "client/enum_words.h"

namespace ablation::client::report {

std::string Fixed(double value, int decimals) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", decimals, value);
  return buffer;
}

std::string Percent(double fraction, int decimals) { return Fixed(fraction * 100, decimals) + "%"; }

std::string SignedPercent(double fraction) {
  std::string text = Fixed(fraction * 100, 1);
  if (text == "-0.0") text = "0.0";
  return text[0] == '-' ? text : "+" + text;
}

std::string ChangeText(const v1::Change& c) {
  std::string text = SignedPercent(c.estimate()) + "%";
  if (c.has_interval())
    text +=
        " [" + SignedPercent(c.interval().low()) + ", " + SignedPercent(c.interval().high()) + "]";
  return text;
}

std::string StatusWord(const v1::ReportRow& row) { return EnumWord(row.status()); }

bool Measured(const v1::ReportRow& row) { return row.status() == v1::ROW_STATUS_OK; }

std::string TflopsText(const v1::ReportRow& row) {
  return Measured(row) ? Fixed(row.tflops(), 1) : StatusWord(row);
}

std::string ShareText(const v1::ReportRow& row) {
  if (!Measured(row)) return "-";
  if (!row.has_cublas_share())
    return "no " + (row.cublas_variant().empty() ? "cuBLAS" : row.cublas_variant());
  return Percent(row.cublas_share());
}

std::string VsText(const v1::ReportRow& row) { return row.vs().empty() ? "-" : row.vs(); }

std::string ChangeCell(const v1::ReportRow& row) {
  return row.has_change() ? ChangeText(row.change()) : "-";
}

std::string StatusAndError(const v1::ReportRow& row) {
  return StatusWord(row) + (row.error().empty() ? "" : ": " + row.error());
}

std::string RunSummary(const v1::ReportRun& run) {
  std::string text = "run " + std::to_string(run.id()) + " (" + EnumWord(run.state()) + ")";
  const v1::DeviceIdentity& d = run.device();
  if (!d.name().empty()) text += " on " + d.name();
  if (!d.compute_capability().empty()) text += ", sm " + d.compute_capability();
  if (!d.driver_version().empty()) text += ", driver " + d.driver_version();
  if (!d.cublas_version().empty()) text += ", cuBLAS " + d.cublas_version();
  if (!run.clock_policy().empty()) text += "; clocks " + run.clock_policy();
  if (run.tags_size() > 0) {
    text += "; tags";
    for (const auto& tag : run.tags()) text += " " + tag;
  }
  return text;
}

bool Unmeasured(const v1::ReportSection& section) {
  return section.layout() != v1::SECTION_LAYOUT_ALL && section.measured() == 0 &&
         section.rows_size() > 0;
}

}  // namespace ablation::client::report
