// `report --format md`: the model as GitHub-flavoured Markdown.
#include <set>
#include <string>
#include <vector>

#include "client/output/escape.h"
#include "client/output/format.h"
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

// The optional columns of a row table, each where some row of the section has its value: TFLOPS
// per GHz and share of the peak (after TFLOPS), the cycles change, the clock change and source
// of paired changes, the low-clock share.
struct OptionalColumns {
  bool per_ghz, peak, cycles, clock, low;
  explicit OptionalColumns(const v1::ReportSection& s)
      : per_ghz(AnyTflopsPerGhz(s)),
        peak(AnyPeakShare(s)),
        cycles(AnyCycles(s)),
        clock(AnyClockChange(s)),
        low(AnyLowClock(s)) {}
};

std::string TableHead(const std::vector<std::pair<std::string, std::string>>& columns) {
  std::string titles = "|", rule = "|";
  for (const auto& [title, align] : columns) {
    titles += " " + title + " |";
    rule += " " + align + " |";
  }
  return titles + "\n" + rule + "\n";
}

// The rungs, with the optional columns where the section has their values (OptionalColumns).
void AddTitles(std::vector<std::pair<std::string, std::string>>* columns,
               const std::vector<std::string>& titles, const char* align = "---:") {
  for (const std::string& t : titles) columns->push_back({t, align});
}

void AddCells(std::vector<std::string>* cells, const std::vector<std::string>& more) {
  for (const std::string& c : more) cells->push_back(MarkdownCell(c));
}

std::string LadderTable(const v1::ReportSection& s) {
  const OptionalColumns has(s);
  const SoloColumns solo(s);
  std::vector<std::pair<std::string, std::string>> columns = {
      {"rung", "---"}, {"what", "---"}, {"variant", "---"}, {"dtype", "---"}};
  AddTitles(&columns, solo.FrontTitles());
  columns.push_back({solo.WindowTflopsTitle(), "---:"});
  if (has.per_ghz) columns.push_back({"TF/GHz", "---:"});
  if (has.peak) columns.push_back({"% of peak", "---:"});
  columns.push_back({solo.ShareTitle(), "---:"});
  AddTitles(&columns, solo.ShareTitles());
  columns.insert(columns.end(), {{"vs", "---"}, {"change [95% CI]", "---:"}, {"noise", ":---:"}});
  if (has.cycles) columns.push_back({"cycles change [95% CI]", "---:"});
  if (has.clock) columns.insert(columns.end(), {{"clock change", "---:"}, {"source", "---"}});
  AddTitles(&columns, solo.ChangeTitles());
  if (has.low) columns.push_back({"low clock", "---:"});
  std::string md = TableHead(columns);
  std::string missing;  // named under the table, not tabled
  for (const v1::ReportRow& r : s.rows()) {
    if (r.status() == v1::ROW_STATUS_MISSING) {
      missing += (missing.empty() ? "" : ", ") + MarkdownCell(r.rung());
      continue;
    }
    const bool noise = r.has_change() && r.change().within_noise();
    std::vector<std::string> cells = {MarkdownCell(r.rung()), MarkdownCell(r.what()),
                                      Code(r.variant()), MarkdownCell(r.dtype())};
    AddCells(&cells, solo.Front(r));
    cells.push_back(TflopsText(r));
    if (has.per_ghz) cells.push_back(TflopsPerGhzText(r));
    if (has.peak) cells.push_back(PeakShareText(r));
    cells.push_back(MarkdownCell(ShareCell(r, solo.solo)));
    AddCells(&cells, solo.Shares(r));
    cells.insert(cells.end(), {MarkdownCell(VsText(r)), ChangeCell(r), noise ? "≈" : ""});
    if (has.cycles) cells.push_back(CyclesCell(r));
    if (has.clock) cells.insert(cells.end(), {ClockChangeCell(r), MarkdownCell(SourceCell(r))});
    AddCells(&cells, solo.Changes(r));
    if (has.low) cells.push_back(LowClockCell(r));
    md += Cells(cells);
  }
  if (!missing.empty()) md += "\nNot measured in this run: " + missing + ".\n";
  if (const std::string legend = solo.Legend(); !legend.empty())
    md += "\n" + MarkdownCell(legend) + "\n";
  return md;
}

std::string AllTable(const v1::ReportSection& s) {
  if (s.rows().empty()) return "No measurements.\n";
  const OptionalColumns has(s);
  const SoloColumns solo(s);
  std::vector<std::pair<std::string, std::string>> columns = {
      {"#", "---:"}, {"variant", "---"}, {"dtype", "---"}, {"shape", "---"}};
  AddTitles(&columns, solo.FrontTitles());
  columns.push_back({solo.WindowTflopsTitle(), "---:"});
  if (has.per_ghz) columns.push_back({"TF/GHz", "---:"});
  if (has.peak) columns.push_back({"% of peak", "---:"});
  columns.push_back({solo.ShareTitle(), "---:"});
  AddTitles(&columns, solo.ShareTitles());
  columns.push_back({"rounds", "---:"});
  if (has.low) columns.push_back({"low clock", "---:"});
  columns.push_back({"status", "---"});
  std::string md = TableHead(columns);
  for (const v1::ReportRow& r : s.rows()) {
    std::vector<std::string> cells = {r.rung(), Code(r.variant()), MarkdownCell(r.dtype()),
                                      FormatShape(r.shape())};
    AddCells(&cells, solo.Front(r));
    cells.push_back(TflopsText(r));
    if (has.per_ghz) cells.push_back(TflopsPerGhzText(r));
    if (has.peak) cells.push_back(PeakShareText(r));
    cells.push_back(MarkdownCell(ShareCell(r, solo.solo)));
    AddCells(&cells, solo.Shares(r));
    cells.push_back(std::to_string(r.rounds()));
    if (has.low) cells.push_back(LowClockCell(r));
    cells.push_back(MarkdownCell(StatusAndError(r)));
    md += Cells(cells);
  }
  if (const std::string legend = solo.Legend(); !legend.empty())
    md += "\n" + MarkdownCell(legend) + "\n";
  return md;
}

// The paired changes of a per-shape section in parts, rung x shape: the cycles change (the work),
// the clock change (power) and which of them moved the time.
std::string PairedParts(const v1::ReportSection& s, const ShapeView& view,
                        const std::string& header) {
  const int columns = s.shapes_size();
  auto at = [&](int r, int c) -> const v1::ReportRow& { return s.rows(r * columns + c); };
  std::string md = "Paired changes in cycles and clock (source):\n\n" + header;
  for (int r : view.rungs) {
    if (at(r, 0).against().empty()) continue;
    md += "| " + MarkdownCell(at(r, 0).rung()) + " |";
    for (int c : view.columns) {
      const v1::ReportRow& row = at(r, c);
      std::string cell = "-";
      if (row.has_clock_change()) {
        cell = "cycles " +
               (row.has_cycles_change() ? SignedPercent(row.cycles_change().estimate()) + "%"
                                        : std::string("-")) +
               ", clock " + ClockChangeCell(row);
        if (!row.change_source().empty()) cell += " (" + row.change_source() + ")";
      }
      md += " " + MarkdownCell(cell) + " |";
    }
    md += "\n";
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
  const SoloColumns solo(s);
  std::string md = std::string(solo.solo ? "TFLOPS alone at the cap (share of cuBLAS)"
                                         : "TFLOPS (share of cuBLAS)") +
                   ":\n\n" + header;
  for (int r : view.rungs) {
    md += "| " + MarkdownCell(at(r, 0).rung()) + " " + Code(at(r, 0).variant()) + " |";
    for (int c : view.columns) {
      const v1::ReportRow& row = at(r, c);
      std::string cell = Measured(row) && row.has_solo() ? Fixed(row.solo().tflops(), 1)
                         : solo.solo && Measured(row)    ? TflopsText(row) + " (window)"
                                                         : TflopsText(row);
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
      if (row.change().basis() == v1::CHANGE_BASIS_SAMPLES ||
          row.change().basis() == v1::CHANGE_BASIS_PAIRED_CYCLES)
        cell += kOneRoundMark;
      if (row.change().paired()) cell += kPairedMark;
      if (row.has_change() && row.change().within_noise()) cell += " ≈";
      md += " " + cell + " |";
    }
    md += "\n";
  }
  if (AnyClockChange(s)) md += "\n" + PairedParts(s, view, header);
  if (const std::string line = LeftOutLine(view); !line.empty()) md += "\n" + line + "\n";
  return md;
}

// A grid as a table after `title`, the variant column (1) as code.
std::string GridTable(const std::string& title, const Grid& grid) {
  std::string md = "\n" + title + ":\n\n|";
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
  return md;
}

// Each rung's geometric mean share of the cuBLAS baselines (ShareSummaryGrid), where there is one.
std::string ShareSummaryTable(const v1::ReportSection& s) {
  const Grid grid = ShareSummaryGrid(s);
  if (grid.titles.empty()) return "";
  return GridTable(
      "Geometric mean of each rung's share of cuBLAS over the shapes (how many in brackets)", grid);
}

// How the rows ran and their counters (ConditionsGrid), where there is any of it.
std::string ConditionsTable(const v1::ReportSection& s) {
  const Grid grid = ConditionsGrid(s);
  if (grid.titles.empty()) return "";
  std::string md = GridTable("How each row ran", grid);
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

// The items of `s` whose rounds are apart (RoundsApartLines): the note, then a line an item.
std::string ApartList(const v1::ReportSection& s) {
  const std::vector<std::string> apart = RoundsApartLines(s, &Code);
  if (apart.empty()) return "";
  std::string md = "\n" + apart[0] + "\n\n";
  for (std::size_t i = 1; i < apart.size(); ++i) md += "- " + apart[i] + "\n";
  return md;
}

// Section `s` as the report's section `number`: its title, scope, table, legends, rounds-apart
// list, conditions and reading notes.
std::string SectionMarkdown(const v1::ReportSection& s, int number) {
  std::string md =
      "\n## " + std::to_string(number) + ". " + s.title() + "\n\n_" + s.scope() + "_\n\n";
  switch (s.layout()) {
    case v1::SECTION_LAYOUT_SHAPES:
      md += ShapesTable(s) + ShareSummaryTable(s);
      break;
    case v1::SECTION_LAYOUT_ALL:
      md += AllTable(s);
      break;
    default:
      md += LadderTable(s);
      break;
  }
  if (AnyOneRound(s)) md += "\n" + OneRoundLegends(s) + "\n";
  md += ApartList(s) + ConditionsTable(s);
  if (!s.notes().empty()) {
    md += "\nReading notes:\n\n";
    for (const std::string& note : s.notes()) md += "- " + note + "\n";
  }
  return md;
}

std::string MethodSection(const v1::Report& report) {
  return "\n## How the figures were computed\n\n" + MethodText(report) + "\n";
}

// An item of a row: its variant, dtype and shape.
std::string ItemOf(const v1::ReportRow& r) {
  return r.variant() + " " + r.dtype() + " " + FormatShape(r.shape());
}

}  // namespace

std::string RenderReportMarkdown(const v1::Report& report) {
  // How every figure was computed is the last section: the first page holds the figures.
  std::string md = "# Ablation report: run " + std::to_string(report.run().id()) + "\n\n" +
                   RunSummary(report.run()) + "\n\n" + Header(report) + "\n" + kMethodPointer +
                   "\n";
  if (const std::string line = UnmeasuredLine(report); !line.empty()) md += "\n" + line + "\n";
  int number = 0;
  for (const v1::ReportSection& s : report.sections())
    if (Drawn(report, s)) md += SectionMarkdown(s, ++number);
  return md + MethodSection(report);
}

std::string RenderAnswerMarkdown(const v1::Report& report) {
  std::string md;
  bool ladder = false;          // a section of rungs or shapes drawn
  std::set<std::string> named;  // items a drawn section of the answer lists as apart already
  const v1::ReportSection* all = nullptr;
  int number = 0;
  for (const v1::ReportSection& s : report.sections()) {
    if (!Drawn(report, s)) continue;
    ++number;
    if (s.layout() == v1::SECTION_LAYOUT_ALL) {
      all = &s;
      continue;
    }
    md += SectionMarkdown(s, number);
    ladder = true;
    for (const v1::ReportRow& r : s.rows())
      if (r.has_rounds_apart()) named.insert(ItemOf(r));
  }
  if (all != nullptr) {
    v1::ReportSection rest;  // the table of all measurements' items apart that no section named
    for (const v1::ReportRow& r : all->rows())
      if (r.has_rounds_apart() && !named.contains(ItemOf(r))) *rest.add_rows() = r;
    md += ApartList(rest);
  }
  return ladder ? md + MethodSection(report) : md;
}

}  // namespace ablation::client::report
