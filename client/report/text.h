// Pieces of text the report's printers share: numbers, statuses, the run in one line.
#pragma once

#include <string>

#include "ablation/v1/report.pb.h"

namespace ablation::client::report {

namespace v1 = ::ablation::v1;

std::string Fixed(double value, int decimals);
std::string Percent(double fraction, int decimals = 1);  // 0.4762 -> "47.6%"
std::string SignedPercent(double fraction);              // 0.1214 -> "+12.1" (no -0.0)
// "+12.1% [+11.9, +12.7]"; a change from one round's samples is marked "†" (kOneRoundMark).
std::string ChangeText(const v1::Change& change);
inline constexpr const char* kOneRoundMark = "†";
std::string StatusWord(const v1::ReportRow& row);    // "ok", "failed", "missing"
bool Measured(const v1::ReportRow& row);             // status ok
std::string TflopsText(const v1::ReportRow& row);    // "343.6", "missing", "failed"
std::string ShareText(const v1::ReportRow& row);     // "47.6%", "no cublas_bf16", "-"
std::string VsText(const v1::ReportRow& row);        // "A2", "-"
std::string ChangeCell(const v1::ReportRow& row);    // ChangeText or "-"
std::string CyclesCell(const v1::ReportRow& row);    // ChangeText, " ≈" within noise, or "-"
std::string LowClockCell(const v1::ReportRow& row);  // "12%", "-"
// Whether any row of the section has a cycles change, a low-clock share, a one-round change: the
// tables show those columns and the legend only then, so a run without clock data reads as before.
bool AnyCycles(const v1::ReportSection& section);
bool AnyLowClock(const v1::ReportSection& section);
bool AnyOneRound(const v1::ReportSection& section);
// "† one round: interval from samples, drift not included."
std::string OneRoundLegend();
// The paragraph under the title: what change, interval, floor, ≈, cycles, low clock and share are.
std::string MethodText(const v1::Report& report);
// "failed: illegal address", "ok (1 of 3 rounds failed)"
std::string StatusAndError(const v1::ReportRow& row);
// "run 7 (succeeded) on NVIDIA H200, sm 9.0, driver 550.54, cuBLAS 12.4; clocks observe; tags a".
std::string RunSummary(const v1::ReportRun& run);
// "Not measured in this run" applies: a section of rungs with none measured.
bool Unmeasured(const v1::ReportSection& section);

}  // namespace ablation::client::report
