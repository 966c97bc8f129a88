// `report`: the result tables of the ablation plan built from one stored run (GetRun with its raw
// samples), and their renderings. Pure functions of proto messages, unit-tested without a daemon.
//
// Tables (seed 001 §3 and seed 000 step 6): architecture (SIMT vs TF32 vs cuBLAS), ladder A
// (ld.shared vs ldmatrix), ladder B (sync vs cp.async, stages, register double buffer), shape
// sensitivity (ladder B x shapes) and pipelining (baseline / LDG / cp.async per dtype and tile),
// then every measurement of the run. Each row: TFLOPS, share of the cuBLAS of the same dtype and
// shape in the same run, and the speed change against its previous rung with a 95% bootstrap
// interval (stats.h); a row the run did not measure is "missing", never filled in.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ablation/v1/ablation.pb.h"
#include "client/report/stats.h"

namespace ablation::client::report {

struct ReportRow {
  std::string label;    ///< rung: "A1", "B3", "cuBLAS"; pipelining: "baseline", "LDG", ...
  std::string what;     ///< the rung in words: "ld.shared, B as [k][n]"
  std::string variant;  ///< canonical name; for a missing rung the name or pattern expected
  std::string dtype;
  ablation::v1::Shape shape;
  std::string status;  ///< "ok", "failed" (error in `error`) or "missing"
  std::string error;
  double tflops = 0;
  double median_ms = 0;
  int samples = 0;
  std::string cublas_variant;          ///< the cuBLAS of this dtype
  std::optional<double> cublas_share;  ///< tflops / cuBLAS tflops, same dtype, shape and run
  std::string vs;                      ///< label of the rung the change is against
  std::string vs_variant;
  std::optional<Change> change;  ///< speed change against `vs`
  bool measured() const { return status == "ok"; }
};

struct ReportTable {
  std::string id;  ///< "arch", "ladder_a", "ladder_b", "shapes", "pipelining", "all"
  std::string title;
  std::string scope;               ///< "bf16, 4096x4096x4096"
  std::vector<std::string> notes;  ///< reading notes of the plan
  std::vector<ReportRow> rows;
  /// shapes table only: its axes, for the matrix and the heatmap.
  std::vector<std::string> row_keys;    ///< variants, in ladder order
  std::vector<std::string> row_labels;  ///< "B0".., "cuBLAS"
  std::vector<ablation::v1::Shape> column_shapes;
  int measured() const;
};

struct Report {
  ablation::v1::Run run;
  std::vector<ReportTable> tables;
};

/// Builds the tables from a run and its measurements (samples included when the CI is wanted).
Report BuildReport(const ablation::v1::GetRunResponse& run);

std::string RenderReportMarkdown(const Report& report);
/// One CSV of every row of every table (long format, a `table` column first).
std::string RenderReportCsv(const Report& report);
std::string RenderReportJson(const Report& report);
/// One self-contained HTML file: inline CSS, tables, SVG bar charts and the shape heatmap; no
/// scripts, no network.
std::string RenderReportHtml(const Report& report);

// Pieces shared by the renderers (and tests).
std::string FormatChange(const Change& change);  ///< "+12.3% [+11.9, +12.7]"
std::string ShapeText(const ablation::v1::Shape& shape);
std::string HtmlEscape(const std::string& text);
std::string JsonString(const std::string& text);

}  // namespace ablation::client::report
