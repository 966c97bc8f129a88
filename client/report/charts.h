// The report's figures as inline SVG, each with its axes, units and legend, drawn from the model
// alone (report.proto): what a row does not have (a missing rung, an unmeasured shape) is left out
// of the figure and named beside it by the page, never drawn as a value.
#pragma once

#include <string>

#include "ablation/v1/ablation.pb.h"
#include "ablation/v1/report.pb.h"
#include "client/report/text.h"

namespace ablation::client::report {

// Horizontal TFLOPS bars of a ladder's measured rows on a TFLOPS axis from 0, each with the
// whisker of its 95% interval (tflops_interval) and its value; cuBLAS rows grey; the dtype's
// dense peak at the clock the rows ran at (the median of their peak_tflops) as a dashed line the
// axis reaches; a legend of the three.
std::string BarChart(const v1::ReportSection& section);

// A forest plot of the rows' changes, each labelled with its own comparison ("A3 vs A2"): the
// estimate (hollow: within noise) and its 95% interval on a % axis through 0, the run's noise
// floor as a band around 0, the change in words at the right. "" when no row has a change.
std::string ChangeChart(const v1::ReportSection& section, double floor);

// Per-shape sections: TFLOPS by rung and shape, coloured by TFLOPS on a white -> blue scale with
// its legend; and each rung's change against the rung it is compared with per shape, on a
// diverging scale centred on 0 (red: slower, blue: faster), "≈" within noise ("" when no rung is
// compared with another).
std::string TflopsHeatmap(const v1::ReportSection& section, const ShapeView& view);
std::string ChangeHeatmap(const v1::ReportSection& section, const ShapeView& view);

// Kernels of their own contract on their roofline (roofline_chart.cc): operations per byte
// against tera-operations per second, log-log; the memory roof (the measured bandwidth) up to the
// ridge and the compute roof at the rows' clock-adjusted peak; each measured row a point, named
// in the legend. "" when no row of the section has a roofline.
std::string RooflineChart(const v1::ReportSection& section);

// A series' history (`history --format html`): each run's median time as a point on a run axis
// (oldest first, labelled with run ids), the mean of each segment between change points as a line
// over it, and each change point as a dashed line before its first point with its change ("▲
// +10.0%" slower, "▼ -5.0%" faster) and p-value at the top; a point's tooltip names its run, date
// and values. `id` names the <svg>.
std::string HistoryChart(const v1::Series& series, const std::string& id);

}  // namespace ablation::client::report
