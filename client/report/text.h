// Pieces of text the report's printers share: numbers, statuses, the run in one line.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "ablation/v1/report.pb.h"

namespace ablation::client::report {

namespace v1 = ::ablation::v1;

std::string Fixed(double value, int decimals);
std::string Percent(double fraction, int decimals = 1);  // 0.4762 -> "47.6%"
std::string SignedPercent(double fraction);              // 0.1214 -> "+12.1" (no -0.0)
// "+12.1% [+11.9, +12.7]"; a change from one round (its samples, or one paired window's cycles)
// is marked "†" (kOneRoundMark).
std::string ChangeText(const v1::Change& change);
inline constexpr const char* kOneRoundMark = "†";
// After a paired change in the tables.
inline constexpr const char* kPairedMark = " paired";
std::string StatusWord(const v1::ReportRow& row);    // "ok", "failed", "missing"
bool Measured(const v1::ReportRow& row);             // status ok
std::string TflopsText(const v1::ReportRow& row);    // "343.6", "missing", "failed"
std::string ShareText(const v1::ReportRow& row);     // "47.6%", "no cublas_bf16", "-"
std::string VsText(const v1::ReportRow& row);        // "A2", "-"
std::string ChangeCell(const v1::ReportRow& row);    // ChangeText (+ kPairedMark) or "-"
std::string CyclesCell(const v1::ReportRow& row);    // ChangeText, " ≈" within noise, or "-"
std::string LowClockCell(const v1::ReportRow& row);  // "12%", "-"

// The line a report opens with in place of its methods, which are its last section.
inline constexpr const char* kMethodPointer =
    "Changes are against the rung before, each with its 95% interval; \u2248 marks one within "
    "noise. How every figure was computed, its noise floors and what each column means: the "
    "last section, \"How the figures were computed\".";

std::string ClockChangeCell(const v1::ReportRow& row);   // "-2.0%", "-"
std::string SourceCell(const v1::ReportRow& row);        // "clock (power)", "" within noise, "-"
std::string TflopsPerGhzText(const v1::ReportRow& row);  // "351.2", "-"
std::string PeakShareText(const v1::ReportRow& row);     // "71.3%", "-"
// The columns of the figures that do not depend on a row's neighbours, where the section has
// them, in one order for every printer: before the window's TFLOPS, the variant alone at the cap
// (TFLOPS, energy per 10^12 operations, board power); after the share of cuBLAS, the share of
// cuBLAS's best algorithm; after the cycles change, the at-cap change and what decided it.
struct SoloColumns {
  bool solo = false, best = false, at_cap = false;
  explicit SoloColumns(const v1::ReportSection& section);
  std::vector<std::string> FrontTitles() const;
  std::vector<std::string> Front(const v1::ReportRow& row) const;
  std::vector<std::string> ShareTitles() const;
  std::vector<std::string> Shares(const v1::ReportRow& row) const;
  std::vector<std::string> ChangeTitles() const;
  std::vector<std::string> Changes(const v1::ReportRow& row) const;
  // "TFLOPS", or "TFLOPS in window" where the section has solo figures: a window's figure is at
  // the clock its neighbours set with it.
  std::string WindowTflopsTitle() const;
  // "share of cuBLAS", or "share of cuBLAS (heuristic)" beside the best's.
  std::string ShareTitle() const;
  // What the columns mean, a sentence for under the table; "" without solo figures.
  std::string Legend() const;
};
// A share with its basis where it is not the section's: "98.1%", "98.1% (window)".
std::string ShareCell(const v1::ReportRow& row, bool solo_section);
// "sustained, paired", "burst, unpaired"; "" for a run without a regime (stored before them).
std::string RegimeText(const v1::ReportRun& run);
// Whether any row of the section has a cycles change, a low-clock share, a one-round change: the
// tables show those columns and the legend only then, so a run without clock data reads as before.
bool AnyCycles(const v1::ReportSection& section);
bool AnyLowClock(const v1::ReportSection& section);
bool AnyOneRound(const v1::ReportSection& section);
// Whether any row has a clock change (a paired change), TFLOPS per GHz, a share of the peak.
bool AnyClockChange(const v1::ReportSection& section);
bool AnyTflopsPerGhz(const v1::ReportSection& section);
bool AnyPeakShare(const v1::ReportSection& section);
// "† one round: interval from samples, drift not included."
std::string OneRoundLegend();
// The legend of the section's one-round changes: OneRoundLegend() for those from samples, "†
// one round: interval from the window's cycles, drift not included." for paired ones; "" for none.
std::string OneRoundLegends(const v1::ReportSection& section);
// Rows whose rounds are apart (ReportRow.rounds_apart; stats.h, Levels): the sentence that says
// what that means, then one line an item: "S12 `sm90_s12_buckets` bf16 16x4096x14336: rounds at
// 35.1 / 40.6 TFLOPS, 14.5% apart on SM cycles where a round's own spread is 1.1%". Empty when no
// row is apart. `code` wraps the variant's name (markdown: backquotes).
inline constexpr const char* kRoundsApartNote =
    "Rounds apart: these items' rounds sit on different levels, far beyond the spread within a "
    "round, so each figure above is a mix of levels that one window does not show (a kernel that "
    "settles on one of a few speeds a window). Measure them again in more separate windows (more "
    "rounds, another run, another process) before trusting one figure or one change of theirs.";
std::vector<std::string> RoundsApartLines(const v1::ReportSection& section,
                                          std::string (*code)(const std::string&));
// The paragraph under the title: what change, interval, floor, ≈, cycles, low clock and share are.
std::string MethodText(const v1::Report& report);
// "failed: illegal address", "ok (1 of 3 rounds failed)"
std::string StatusAndError(const v1::ReportRow& row);
// "run 7 (succeeded) on NVIDIA H200, sm 9.0, driver 550.54, cuBLAS 12.4; clocks observe; tags a".
std::string RunSummary(const v1::ReportRun& run);
// "Not measured in this run" applies: a section of rungs every one of which is missing (a failed
// row is shown, with its error).
bool Unmeasured(const v1::ReportSection& section);
// The preset the run swept when it is one of the report's sections (report.run().preset()),
// else "".
std::string SweptSection(const v1::Report& report);
// Whether a section is drawn: not when it is Unmeasured, nor, in a run that swept one section's
// preset, when it is another's that the run measured only through the rows it shares with the
// swept one (at most half of its variants); one it measured mostly (the swept ladder across
// shapes) is drawn.
bool Drawn(const v1::Report& report, const v1::ReportSection& section);
// The sections not drawn, in one line: "This run swept the preset ladder-a; not drawn, as it
// measured them only through the rows they share with it: Architecture (2 of 12 rows), ...",
// then "Not measured in this run, so not shown: Architecture (`ablation-client sweep --preset
// arch`), ..."; "" when every section is drawn.
std::string UnmeasuredLine(const v1::Report& report);

// The header of a report: label and value, a line each (run, date, device, driver, CUDA, cuBLAS,
// clocks, rounds, tags, daemon, counters); only what the run has.
std::vector<std::pair<std::string, std::string>> HeaderFields(const v1::Report& report);

// What a per-shape section draws: the shapes (columns) and the rungs with a measured cell; the
// others are left out and named (LeftOutLine).
struct ShapeView {
  std::vector<int> columns;  // indices into shapes
  std::vector<int> rungs;    // rung r is rows [r * shapes, (r + 1) * shapes)
  std::vector<std::string> columns_left;
  std::vector<std::string> rungs_left;
};
ShapeView MeasuredCells(const v1::ReportSection& section);
// "Not measured in this run: at 512x512x256, 512x512x512; B1, B6." or "".
std::string LeftOutLine(const ShapeView& view);
// The rows of a ladder left out of its charts and table: "Not measured in this run: B1, B6.",
// and "Failed, so not drawn: B3." (a failed row stays in the table, with its error); or "".
std::string NotDrawn(const v1::ReportSection& section);
// "A3 vs A2": a row's comparison, with the dtype and tile of a per-tile row ("cp.async vs
// baseline (fp16, tile 128x128x32)").
std::string ComparisonLabel(const v1::ReportRow& row);

// How the section's measured rows ran and what their counters say, as a grid of text: rung,
// variant (and shape), then only the columns some row has a value in (SM clock mean / min, power,
// temperature, throttled share, occupancy, the section's counters with the stall reasons as the
// top stalls, the shared-load ratio, the micro-benchmark). No titles: nothing to show.
struct Grid {
  std::vector<std::string> titles;
  std::vector<bool> numeric;  // right-aligned
  std::vector<std::vector<std::string>> rows;
};
Grid ConditionsGrid(const v1::ReportSection& section);
// A per-shape section's rungs against the cuBLAS baselines over its shapes: the geometric mean
// of each rung's shares as its rows carry them (of the heuristic's cuBLAS, and of the best of
// cuBLASLt's timed candidates where the rows have that share), over every shape, those of
// M <= 128 and those of N <= 128 (decode-sized rows and their transposes; a group only where it
// is not every shape), each with the shapes it counts. No titles: nothing to show (another
// layout, fewer than two shapes, no share).
Grid ShareSummaryGrid(const v1::ReportSection& section);
// "LDS inst: smsp__sass_inst_executed_op_shared_ld.sum; ...": each counter column's metric as the
// architecture's tool read it, "" when the section shows no counters.
std::string CountersLegend(const v1::ReportSection& section);

}  // namespace ablation::client::report
