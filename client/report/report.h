// `report`: the result tables of one stored run as one model, ablation.v1.Report
// (proto/ablation/v1/report.proto), and its printers, which only format that model. Pure
// functions of proto messages, unit-tested without a daemon.
//
// What the tables are comes from the daemon: every preset with rungs (ListPresets,
// deploy/presets.toml) is a section, its rungs its rows, each compared with the rung the preset
// names, with the preset's title, scope and reading notes; ListVariants gives each variant's tile
// and the cuBLAS of each dtype. Then every measurement of the run. Each row: TFLOPS, share of
// the cuBLAS of the same dtype and shape in the same run, and the speed change against the rung
// it is compared with, with a 95% bootstrap interval from the raw samples (stats.h); a row the
// run did not measure is missing, never filled in.
#pragma once

#include <string>
#include <vector>

#include "ablation/v1/ablation.pb.h"
#include "ablation/v1/report.pb.h"

namespace ablation::client::report {

inline constexpr int kReportSchemaVersion = 1;

// The report of `run` (GetRun with the samples, for the intervals) from the daemon's presets and
// variants.
ablation::v1::Report BuildReport(const ablation::v1::GetRunResponse& run,
                                 const std::vector<ablation::v1::Preset>& presets,
                                 const std::vector<ablation::v1::Variant>& variants);

std::string RenderReportMarkdown(const ablation::v1::Report& report);
// What a run answers at the end of `run` and `sweep`: the report's sections of rungs and shapes
// as RenderReportMarkdown draws them (numbered as there), then the items of the table of all
// measurements whose rounds are apart where no such section names them (so that a run outside
// any ladder still says when its figures mix levels), then how the figures were computed when
// a section was drawn; not the header, nor the table of all measurements, which the command has
// just printed. "" when there is none of it.
std::string RenderAnswerMarkdown(const ablation::v1::Report& report);
// One CSV of every row of every section (long format, a `table` column first).
std::string RenderReportCsv(const ablation::v1::Report& report);
// The model in protobuf's JSON mapping.
std::string RenderReportJson(const ablation::v1::Report& report);
// One self-contained HTML file: inline CSS, tables, SVG bar charts and the shape heatmap; no
// scripts, no network.
std::string RenderReportHtml(const ablation::v1::Report& report);
// `history --format html`: one self-contained page of the series GetHistory answered, each with
// its chart (change points marked, charts.h HistoryChart) and its table of points; `what` is the
// request in words (the page's title).
std::string RenderHistoryHtml(const ablation::v1::HistoryResponse& history,
                              const std::string& what);

}  // namespace ablation::client::report
