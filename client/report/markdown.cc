// `report --format md`: the model as GitHub-flavoured Markdown.
#include "client/escape.h"
#include "client/format.h"
#include "client/report/report.h"
#include "client/report/text.h"

namespace ablation::client::report {
namespace {

std::string Code(const std::string& text) { return "`" + MarkdownCell(text) + "`"; }

std::string Cells(const std::vector<std::string>& cells) {
  std::string line = "|";
  for (const std::string& cell : cells) line += " " + cell + " |";
  return line + "\n";
}

// The rungs: the cycles change and low-clock columns where the run has clock data.
std::string LadderTable(const v1::ReportSection& s) {
  const bool cycles = AnyCycles(s), low = AnyLowClock(s);
  std::string md =
      "| rung | what | variant | dtype | TFLOPS | share of cuBLAS | vs | change [95% CI] | noise "
      "|" +
      std::string(cycles ? " cycles change [95% CI] |" : "") + (low ? " low clock |" : "") +
      "\n| --- | --- | --- | --- | ---: | ---: | --- | ---: | :---: |" + (cycles ? " ---: |" : "") +
      (low ? " ---: |" : "") + "\n";
  for (const v1::ReportRow& r : s.rows()) {
    const bool noise = r.has_change() && r.change().within_noise();
    std::vector<std::string> cells = {
        MarkdownCell(r.rung()),  MarkdownCell(r.what()), Code(r.variant()),
        MarkdownCell(r.dtype()), TflopsText(r),          ShareText(r),
        MarkdownCell(VsText(r)), ChangeCell(r),          noise ? "≈" : ""};
    if (cycles) cells.push_back(CyclesCell(r));
    if (low) cells.push_back(LowClockCell(r));
    md += Cells(cells);
  }
  return md;
}

std::string AllTable(const v1::ReportSection& s) {
  if (s.rows().empty()) return "No measurements.\n";
  const bool low = AnyLowClock(s);
  std::string md = "| # | variant | dtype | shape | TFLOPS | share of cuBLAS | rounds |" +
                   std::string(low ? " low clock |" : "") + " status |\n" +
                   "| ---: | --- | --- | --- | ---: | ---: | ---: |" + (low ? " ---: |" : "") +
                   " --- |\n";
  for (const v1::ReportRow& r : s.rows()) {
    std::vector<std::string> cells = {
        r.rung(),      Code(r.variant()), MarkdownCell(r.dtype()),   FormatShape(r.shape()),
        TflopsText(r), ShareText(r),      std::to_string(r.rounds())};
    if (low) cells.push_back(LowClockCell(r));
    cells.push_back(MarkdownCell(StatusAndError(r)));
    md += Cells(cells);
  }
  return md;
}

// The rung x shape matrices over the shapes and rungs with a measured cell (ShapeView): TFLOPS
// (share), then the change against the rung compared with; what is left out in one line.
std::string ShapesTable(const v1::ReportSection& s) {
  const int columns = s.shapes_size();
  const ShapeView view = MeasuredCells(s);
  auto at = [&](int r, int c) -> const v1::ReportRow& { return s.rows(r * columns + c); };
  std::string header = "| rung |";
  std::string rule = "| --- |";
  for (int c : view.columns) {
    header += " " + FormatShape(s.shapes(c)) + " |";
    rule += " ---: |";
  }
  header += "\n" + rule + "\n";
  std::string md = "TFLOPS (share of cuBLAS):\n\n" + header;
  for (int r : view.rungs) {
    md += "| " + MarkdownCell(at(r, 0).rung()) + " " + Code(at(r, 0).variant()) + " |";
    for (int c : view.columns) {
      const v1::ReportRow& row = at(r, c);
      std::string cell = TflopsText(row);
      if (Measured(row) && row.has_cublas_share() && !row.baseline())
        cell += " (" + Percent(row.cublas_share(), 0) + ")";
      md += " " + cell + " |";
    }
    md += "\n";
  }
  md += "\nChange against the previous rung at the same shape (≈: within noise):\n\n" + header;
  for (int r : view.rungs) {
    if (at(r, 0).against().empty()) continue;  // compared with nothing
    std::string vs;
    for (int c = 0; c < columns && vs.empty(); ++c) vs = at(r, c).vs();
    md +=
        "| " + MarkdownCell(at(r, 0).rung()) + (vs.empty() ? "" : " vs " + MarkdownCell(vs)) + " |";
    for (int c : view.columns) {
      const v1::ReportRow& row = at(r, c);
      std::string cell = row.has_change() ? SignedPercent(row.change().estimate()) + "%" : "-";
      if (row.change().basis() == v1::CHANGE_BASIS_SAMPLES) cell += kOneRoundMark;
      if (row.has_change() && row.change().within_noise()) cell += " ≈";
      md += " " + cell + " |";
    }
    md += "\n";
  }
  if (const std::string line = LeftOutLine(view); !line.empty()) md += "\n" + line + "\n";
  return md;
}

// How the rows ran and their counters (ConditionsGrid), where there is any of it.
std::string ConditionsTable(const v1::ReportSection& s) {
  const Grid grid = ConditionsGrid(s);
  if (grid.titles.empty()) return "";
  std::string md = "\nHow each row ran:\n\n|";
  std::string rule = "|";
  for (std::size_t i = 0; i < grid.titles.size(); ++i) {
    md += " " + MarkdownCell(grid.titles[i]) + " |";
    rule += grid.numeric[i] ? " ---: |" : " --- |";
  }
  md += "\n" + rule + "\n";
  for (const auto& row : grid.rows) {
    std::vector<std::string> cells;
    for (std::size_t i = 0; i < row.size(); ++i)
      cells.push_back(i == 1 ? Code(row[i]) : MarkdownCell(row[i]));
    md += Cells(cells);
  }
  if (const std::string legend = CountersLegend(s); !legend.empty())
    md += "\nCounters: " + MarkdownCell(legend) + ".\n";
  return md;
}

std::string Header(const v1::Report& report) {
  std::string md;
  for (const auto& [label, value] : HeaderFields(report))
    md += "- " + label + ": " + MarkdownCell(value) + "\n";
  return md;
}

}  // namespace

std::string RenderReportMarkdown(const v1::Report& report) {
  std::string md = "# Ablation report: run " + std::to_string(report.run().id()) + "\n\n" +
                   RunSummary(report.run()) + "\n\n" + Header(report) + "\n" + MethodText(report) +
                   "\n";
  if (const std::string line = UnmeasuredLine(report); !line.empty()) md += "\n" + line + "\n";
  int number = 0;
  for (const v1::ReportSection& s : report.sections()) {
    if (Unmeasured(s)) continue;
    md += "\n## " + std::to_string(++number) + ". " + s.title() + "\n\n_" + s.scope() + "_\n\n";
    switch (s.layout()) {
      case v1::SECTION_LAYOUT_SHAPES:
        md += ShapesTable(s);
        break;
      case v1::SECTION_LAYOUT_ALL:
        md += AllTable(s);
        break;
      default:
        md += LadderTable(s);
        break;
    }
    if (AnyOneRound(s)) md += "\n" + OneRoundLegend() + "\n";
    md += ConditionsTable(s);
    if (!s.notes().empty()) {
      md += "\nReading notes:\n\n";
      for (const std::string& note : s.notes()) md += "- " + note + "\n";
    }
  }
  return md;
}

}  // namespace ablation::client::report
