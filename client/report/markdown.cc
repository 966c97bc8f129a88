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

std::string LadderTable(const v1::ReportSection& s) {
  std::string md =
      "| rung | what | variant | dtype | TFLOPS | share of cuBLAS | vs | change [95% CI] | noise "
      "|\n"
      "| --- | --- | --- | --- | ---: | ---: | --- | ---: | :---: |\n";
  for (const v1::ReportRow& r : s.rows()) {
    const bool noise = r.has_change() && r.change().within_noise();
    md += Cells({MarkdownCell(r.rung()), MarkdownCell(r.what()), Code(r.variant()),
                 MarkdownCell(r.dtype()), TflopsText(r), ShareText(r), MarkdownCell(VsText(r)),
                 ChangeCell(r), noise ? "≈" : ""});
  }
  return md;
}

std::string AllTable(const v1::ReportSection& s) {
  if (s.rows().empty()) return "No measurements.\n";
  std::string md =
      "| # | variant | dtype | shape | TFLOPS | share of cuBLAS | status |\n"
      "| ---: | --- | --- | --- | ---: | ---: | --- |\n";
  for (const v1::ReportRow& r : s.rows())
    md += Cells({r.rung(), Code(r.variant()), MarkdownCell(r.dtype()), FormatShape(r.shape()),
                 TflopsText(r), ShareText(r), MarkdownCell(StatusAndError(r))});
  return md;
}

// The rung x shape matrices: TFLOPS (share), then the change against the rung compared with.
std::string ShapesTable(const v1::ReportSection& s) {
  const int columns = s.shapes_size();
  const int rungs = columns == 0 ? 0 : s.rows_size() / columns;
  auto at = [&](int r, int c) -> const v1::ReportRow& { return s.rows(r * columns + c); };
  std::string header = "| rung |";
  std::string rule = "| --- |";
  for (const v1::Shape& shape : s.shapes()) {
    header += " " + FormatShape(shape) + " |";
    rule += " ---: |";
  }
  header += "\n" + rule + "\n";
  std::string md = "TFLOPS (share of cuBLAS):\n\n" + header;
  for (int r = 0; r < rungs; ++r) {
    md += "| " + MarkdownCell(at(r, 0).rung()) + " " + Code(at(r, 0).variant()) + " |";
    for (int c = 0; c < columns; ++c) {
      const v1::ReportRow& row = at(r, c);
      std::string cell = TflopsText(row);
      if (Measured(row) && row.has_cublas_share() && !row.baseline())
        cell += " (" + Percent(row.cublas_share(), 0) + ")";
      md += " " + cell + " |";
    }
    md += "\n";
  }
  md += "\nChange against the previous rung at the same shape (≈: within noise):\n\n" + header;
  for (int r = 0; r < rungs; ++r) {
    if (at(r, 0).against().empty()) continue;  // compared with nothing
    std::string vs;
    for (int c = 0; c < columns && vs.empty(); ++c) vs = at(r, c).vs();
    md +=
        "| " + MarkdownCell(at(r, 0).rung()) + (vs.empty() ? "" : " vs " + MarkdownCell(vs)) + " |";
    for (int c = 0; c < columns; ++c) {
      const v1::ReportRow& row = at(r, c);
      std::string cell = row.has_change() ? SignedPercent(row.change().estimate()) + "%" : "-";
      if (row.has_change() && row.change().within_noise()) cell += " ≈";
      md += " " + cell + " |";
    }
    md += "\n";
  }
  return md;
}

}  // namespace

std::string RenderReportMarkdown(const v1::Report& report) {
  std::string md = "# Ablation report: run " + std::to_string(report.run().id()) + "\n\n" +
                   RunSummary(report.run()) + "\n\n" +
                   "Change: speed against the previous rung, median(previous) / median(this) - 1, "
                   "with a 95% bootstrap interval from the raw samples (" +
                   std::to_string(report.method().resamples()) +
                   " resamples, fixed seed); ≈ marks an interval that contains 0 (within noise). "
                   "Share: TFLOPS / TFLOPS of the cuBLAS of the same dtype and shape in this "
                   "run.\n";
  int number = 0;
  for (const v1::ReportSection& s : report.sections()) {
    md += "\n## " + std::to_string(++number) + ". " + s.title() + "\n\n_" + s.scope() + "_\n\n";
    if (Unmeasured(s)) {
      md += "Not measured in this run: all " + std::to_string(s.rows_size()) +
            " rows missing (`ablation-client sweep --preset " + s.id() + "` measures them).\n";
      continue;
    }
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
    if (!s.notes().empty()) {
      md += "\nReading notes:\n\n";
      for (const std::string& note : s.notes()) md += "- " + note + "\n";
    }
  }
  return md;
}

}  // namespace ablation::client::report
