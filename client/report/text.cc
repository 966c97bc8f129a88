#include "client/report/text.h"

#include <algorithm>
#include <cstdio>
#include <set>

#include "client/output/enum_words.h"
#include "client/output/format.h"
#include "client/report/stats.h"

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
  if (c.basis() == v1::CHANGE_BASIS_SAMPLES || c.basis() == v1::CHANGE_BASIS_PAIRED_CYCLES)
    text += kOneRoundMark;
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

std::string ShareCell(const v1::ReportRow& row, bool solo_section) {
  const std::string text = ShareText(row);
  return solo_section && row.share_basis() == "window" ? text + " (window)" : text;
}

SoloColumns::SoloColumns(const v1::ReportSection& s) {
  for (const v1::ReportRow& r : s.rows()) {
    solo = solo || r.has_solo();
    best = best || r.has_cublas_best_share();
    at_cap = at_cap || r.has_at_cap_change();
  }
}

std::vector<std::string> SoloColumns::FrontTitles() const {
  if (!solo) return {};
  return {"TFLOPS alone (at cap)", "J/TFLOP (W)"};
}

std::vector<std::string> SoloColumns::Front(const v1::ReportRow& r) const {
  if (!solo) return {};
  if (!Measured(r) || !r.has_solo()) return {"-", "-"};
  const v1::SoloSummary& s = r.solo();
  std::string tflops = Fixed(s.tflops(), 1);
  if (s.has_tflops_interval())
    tflops += " [" + Fixed(s.tflops_interval().low(), 1) + ", " +
              Fixed(s.tflops_interval().high(), 1) + "]";
  if (s.has_sm_mhz()) tflops += " @ " + Fixed(s.sm_mhz(), 0) + " MHz";
  if (!s.conditioned()) tflops += " (not settled)";
  std::string energy = s.has_joules_per_tflop() ? Fixed(s.joules_per_tflop(), 3) : "-";
  if (s.has_power_w()) energy += " (" + Fixed(s.power_w(), 0) + " W)";
  return {tflops, energy};
}

std::vector<std::string> SoloColumns::ShareTitles() const {
  if (!best) return {};
  return {"share of cuBLAS (best)"};
}

std::vector<std::string> SoloColumns::Shares(const v1::ReportRow& r) const {
  if (!best) return {};
  if (!Measured(r) || !r.has_cublas_best_share()) return {"-"};
  const std::string text = Percent(r.cublas_best_share());
  return {solo && r.share_basis() == "window" ? text + " (window)" : text};
}

std::vector<std::string> SoloColumns::ChangeTitles() const {
  if (!at_cap) return {};
  return {"at-cap change [95% CI]", "decided by (solo clock)"};
}

std::vector<std::string> SoloColumns::Changes(const v1::ReportRow& r) const {
  if (!at_cap) return {};
  if (!r.has_at_cap_change()) return {"-", "-"};
  // Which of work and power decided it ("" within noise), with the solo clocks' change.
  std::string decided = "-";
  if (r.has_at_cap_clock_change())
    decided = (r.at_cap_source().empty() ? "" : r.at_cap_source() + " ") + "(" +
              SignedPercent(r.at_cap_clock_change()) + "%)";
  return {ChangeText(r.at_cap_change()) + (r.at_cap_change().within_noise() ? " ≈" : ""), decided};
}

std::string SoloColumns::WindowTflopsTitle() const { return solo ? "TFLOPS in window" : "TFLOPS"; }

std::string SoloColumns::ShareTitle() const {
  return best ? "share of cuBLAS (heuristic)" : "share of cuBLAS";
}

std::string SoloColumns::Legend() const {
  if (!solo) return "";
  return "TFLOPS alone (at cap): the variant by itself until its clock and power settled, its "
         "own power setting its clock (95% interval, clock); J/TFLOP (W): NVML's energy over "
         "that span per 10^12 operations (its mean board power). TFLOPS in window: at the "
         "clock of its window, which the variants interleaved there set together. Shares are "
         "from the solo figures unless marked (window)" +
         std::string(at_cap ? "; the at-cap change compares the solo figures, the change beside "
                              "it the paired window's (the work)."
                            : ".");
}

std::string VsText(const v1::ReportRow& row) { return row.vs().empty() ? "-" : row.vs(); }

std::string ChangeCell(const v1::ReportRow& row) {
  if (!row.has_change()) return "-";
  return ChangeText(row.change()) + (row.change().paired() ? kPairedMark : "");
}

std::string CyclesCell(const v1::ReportRow& row) {
  if (!row.has_cycles_change()) return "-";
  return ChangeText(row.cycles_change()) + (row.cycles_change().within_noise() ? " ≈" : "");
}

std::string LowClockCell(const v1::ReportRow& row) {
  return row.has_low_clock_share() ? Percent(row.low_clock_share(), 0) : "-";
}

std::string ClockChangeCell(const v1::ReportRow& row) {
  return row.has_clock_change() ? SignedPercent(row.clock_change()) + "%" : "-";
}

std::string SourceCell(const v1::ReportRow& row) {
  return row.has_clock_change() ? row.change_source() : "-";
}

std::string TflopsPerGhzText(const v1::ReportRow& row) {
  return Measured(row) && row.has_tflops_per_ghz() ? Fixed(row.tflops_per_ghz(), 1) : "-";
}

std::string PeakShareText(const v1::ReportRow& row) {
  return Measured(row) && row.has_peak_share() ? Percent(row.peak_share()) : "-";
}

std::string RegimeText(const v1::ReportRun& run) {
  const std::string regime = EnumWord(run.regime());
  if (regime.empty()) return "";
  return regime + (run.paired() ? ", paired" : ", unpaired");
}

namespace {

bool AnyRow(const v1::ReportSection& section, bool (*has)(const v1::ReportRow&)) {
  return std::any_of(section.rows().begin(), section.rows().end(), has);
}

}  // namespace

bool AnyCycles(const v1::ReportSection& s) {
  return AnyRow(s, [](const v1::ReportRow& r) { return r.has_cycles_change(); });
}

bool AnyLowClock(const v1::ReportSection& s) {
  return AnyRow(s, [](const v1::ReportRow& r) { return r.has_low_clock_share(); });
}

namespace {

bool OfBasis(const v1::ReportRow& r, v1::ChangeBasis basis) {
  return r.change().basis() == basis || r.cycles_change().basis() == basis;
}

bool FromSamples(const v1::ReportRow& r) { return OfBasis(r, v1::CHANGE_BASIS_SAMPLES); }
bool FromOneWindow(const v1::ReportRow& r) { return OfBasis(r, v1::CHANGE_BASIS_PAIRED_CYCLES); }

}  // namespace

bool AnyOneRound(const v1::ReportSection& s) {
  return AnyRow(s, FromSamples) || AnyRow(s, FromOneWindow);
}

bool AnyClockChange(const v1::ReportSection& s) {
  return AnyRow(s, [](const v1::ReportRow& r) { return r.has_clock_change(); });
}

bool AnyTflopsPerGhz(const v1::ReportSection& s) {
  return AnyRow(s, [](const v1::ReportRow& r) { return Measured(r) && r.has_tflops_per_ghz(); });
}

bool AnyPeakShare(const v1::ReportSection& s) {
  return AnyRow(s, [](const v1::ReportRow& r) { return Measured(r) && r.has_peak_share(); });
}

std::string OneRoundLegend() { return std::string(kOneRoundMark) + " " + kOneRoundNote + "."; }

std::string OneRoundLegends(const v1::ReportSection& s) {
  std::string legend = AnyRow(s, FromSamples) ? OneRoundLegend() : "";
  if (AnyRow(s, FromOneWindow))
    legend +=
        (legend.empty() ? "" : " ") + std::string(kOneRoundMark) + " " + kPairedOneRoundNote + ".";
  return legend;
}

std::vector<std::string> RoundsApartLines(const v1::ReportSection& s,
                                          std::string (*code)(const std::string&)) {
  std::vector<std::string> lines;
  for (const v1::ReportRow& r : s.rows()) {
    if (!Measured(r) || !r.has_rounds_apart()) continue;
    const v1::RoundsApart& a = r.rounds_apart();
    std::string levels;
    for (double t : a.round_tflops()) levels += (levels.empty() ? "" : " / ") + Fixed(t, 1);
    lines.push_back(r.rung() + " " + code(r.variant()) + " " + r.dtype() + " " +
                    FormatShape(r.shape()) + ": rounds at " + levels + " TFLOPS, " +
                    Percent(a.spread()) + " apart " +
                    (a.basis() == "cycles" ? "on SM cycles" : "in time") +
                    " where a round's own spread is " + Percent(a.within()));
  }
  if (!lines.empty()) lines.insert(lines.begin(), kRoundsApartNote);
  return lines;
}

std::string MethodText(const v1::Report& report) {
  const v1::ReportMethod& m = report.method();
  const int rounds = report.run().rounds();
  std::string text =
      "Change: speed against the previous rung, median(previous) / median(this) - 1, each over "
      "all its rounds' samples, with a 95% interval from ";
  text += rounds >= 2 ? "a bootstrap over the run's " + std::to_string(rounds) +
                            " rounds, paired (both rows take the same rounds)"
                      : "the samples of the run's one round (" + OneRoundLegend() + ")";
  text += ", at most " + std::to_string(m.resamples()) + " draws, fixed seed. Noise floor: ";
  text += rounds >= 2 ? Percent(m.floor(), 2) : "unknown (one round)";
  if (rounds >= 2 && m.cycles_floor() > 0) text += " (cycles " + Percent(m.cycles_floor(), 2) + ")";
  text +=
      ", the median over the run's items of the spread of their per-round medians, (max - min) / "
      "median. ≈ marks a change within noise: its interval contains 0, or it is smaller than the "
      "floor. Cycles change: the same on SM cycles per sample, which a clock change does not "
      "move. Low clock: the share of samples below the low-clock fraction of the maximum SM "
      "clock. Share: TFLOPS / TFLOPS of the cuBLAS of the same dtype and shape in this run.";
  if (!m.tflops_interval().empty()) text += " TFLOPS interval: " + m.tflops_interval() + ".";
  if (!m.paired().empty()) {
    text += " Paired: " + m.paired() + ". Paired floor: ";
    text += m.paired_floor() > 0 ? Percent(m.paired_floor(), 2) : "unknown (under 2 rounds)";
    if (m.paired_cycles_floor() > 0)
      text += " (cycles " + Percent(m.paired_cycles_floor(), 2) + ")";
    text += ".";
  }
  if (!report.run().inputs().empty()) text += " Inputs: " + report.run().inputs() + ".";
  if (!m.conditions().empty()) text += " How each row ran: " + m.conditions() + ".";
  if (!report.run().counters_tool().empty() && !m.counters().empty())
    text += " Counters (" + report.run().counters_tool() + "): " + m.counters() + ".";
  return text;
}

std::string StatusAndError(const v1::ReportRow& row) {
  std::string text = StatusWord(row) + (row.error().empty() ? "" : ": " + row.error());
  if (Measured(row) && row.failed_rounds() > 0)
    text += " (" + std::to_string(row.failed_rounds()) + " of " +
            std::to_string(row.rounds() + row.failed_rounds()) + " rounds not measured)";
  return text;
}

std::string RunSummary(const v1::ReportRun& run) {
  std::string text = "run " + std::to_string(run.id()) + " (" + EnumWord(run.state()) + ")";
  const v1::DeviceIdentity& d = run.device();
  if (!d.name().empty()) text += " on " + d.name();
  if (!d.compute_capability().empty()) text += ", sm " + d.compute_capability();
  if (!d.driver_version().empty()) text += ", driver " + d.driver_version();
  if (!d.cublas_version().empty()) text += ", cuBLAS " + d.cublas_version();
  if (!run.clock_policy().empty()) text += "; clocks " + run.clock_policy();
  if (const std::string regime = RegimeText(run); !regime.empty()) text += "; regime " + regime;
  if (run.tags_size() > 0) {
    text += "; tags";
    for (const auto& tag : run.tags()) text += " " + tag;
  }
  return text;
}

bool Unmeasured(const v1::ReportSection& section) {
  // Every row missing: a failed row is a result (its error is shown), not an unmeasured one. The
  // cuBLAS reference rows do not count: a run of one ladder measures the cuBLAS every section
  // compares with, which does not make the other sections measured.
  if (section.layout() == v1::SECTION_LAYOUT_ALL || section.rows_size() == 0) return false;
  bool any_rung = false;
  for (const v1::ReportRow& row : section.rows()) {
    if (row.baseline()) continue;
    any_rung = true;
    if (row.status() != v1::ROW_STATUS_MISSING) return false;
  }
  return any_rung || section.missing() == section.rows_size();
}

std::string SweptSection(const v1::Report& report) {
  const std::string& preset = report.run().preset();
  if (preset.empty()) return "";
  for (const v1::ReportSection& s : report.sections())
    if (s.id() == preset && s.layout() != v1::SECTION_LAYOUT_ALL) return preset;
  return "";
}

bool Drawn(const v1::Report& report, const v1::ReportSection& section) {
  if (Unmeasured(section)) return false;
  const std::string swept = SweptSection(report);
  if (swept.empty() || section.id() == swept || section.layout() == v1::SECTION_LAYOUT_ALL)
    return true;
  // Another section the run measured mostly (ladder B across shapes, for a sweep of ladder-b at
  // several shapes: 8 of its 9 variants) is drawn; one it touched only through the rows it shares
  // with the swept ladder (ladder B, for a sweep of ladder-a: 2 of 8) is not.
  std::set<std::string> named, measured;
  for (const v1::ReportRow& row : section.rows()) {
    named.insert(row.variant());
    if (row.status() != v1::ROW_STATUS_MISSING) measured.insert(row.variant());
  }
  return 2 * measured.size() > named.size();
}

std::string UnmeasuredLine(const v1::Report& report) {
  std::string unmeasured, other;
  for (const v1::ReportSection& s : report.sections()) {
    if (Unmeasured(s)) {
      unmeasured += (unmeasured.empty() ? "" : ", ") + s.title() +
                    " (`ablation-client sweep --preset " + s.id() + "`)";
    } else if (!Drawn(report, s)) {
      int measured = 0;
      for (const v1::ReportRow& row : s.rows()) measured += row.status() != v1::ROW_STATUS_MISSING;
      other += (other.empty() ? "" : ", ") + s.title() + " (" + std::to_string(measured) + " of " +
               std::to_string(s.rows_size()) + " rows)";
    }
  }
  std::string line;
  if (!other.empty())
    line = "This run swept the preset " + SweptSection(report) +
           "; not drawn, as it measured them only through the rows they share with it: " + other +
           ".";
  if (!unmeasured.empty())
    line += (line.empty() ? "" : " ") + std::string("Not measured in this run, so not shown: ") +
            unmeasured + ".";
  return line;
}

std::vector<std::pair<std::string, std::string>> HeaderFields(const v1::Report& report) {
  const v1::ReportRun& run = report.run();
  const v1::DeviceIdentity& d = run.device();
  std::vector<std::pair<std::string, std::string>> out;
  auto add = [&](const std::string& label, const std::string& value) {
    if (!value.empty()) out.emplace_back(label, value);
  };
  const std::string state = EnumWord(run.state());
  add("run", std::to_string(run.id()) + (state.empty() ? "" : " (" + state + ")"));
  if (run.started_at_ms() > 0) {
    std::string date = FormatTimeMs(run.started_at_ms());
    if (run.finished_at_ms() > run.started_at_ms())
      date += ", " + Fixed(double(run.finished_at_ms() - run.started_at_ms()) / 1000, 0) + " s";
    add("date", date);
  }
  std::string device = d.name();
  if (!d.compute_capability().empty()) device += ", sm " + d.compute_capability();
  if (d.sm_count() > 0) device += ", " + std::to_string(d.sm_count()) + " SMs";
  if (d.memory_bytes() > 0) device += ", " + FormatBytes(d.memory_bytes());
  if (!d.uuid().empty()) device += " (" + d.uuid() + ")";
  add("device", device);
  add("driver", d.driver_version());
  add("CUDA runtime", d.cuda_runtime_version());
  add("cuBLAS", d.cublas_version());
  add("clocks", run.clock_policy());
  add("regime", RegimeText(run));
  if (run.rounds() > 0)
    add("rounds",
        std::to_string(run.rounds()) +
            (run.order_seed() != 0 ? " (order seed " + std::to_string(run.order_seed()) + ")"
                                   : ""));
  add("inputs", run.inputs());
  std::string tags;
  for (const auto& tag : run.tags()) tags += (tags.empty() ? "" : ", ") + tag;
  add("tags", tags);
  add("daemon",
      run.daemon_version() + (run.git_revision().empty() ? "" : " (" + run.git_revision() + ")"));
  add("counters", run.counters_tool());
  return out;
}

ShapeView MeasuredCells(const v1::ReportSection& s) {
  ShapeView view;
  const int columns = s.shapes_size();
  const int rungs = columns == 0 ? 0 : s.rows_size() / columns;
  auto measured = [&](int r, int c) { return Measured(s.rows(r * columns + c)); };
  for (int c = 0; c < columns; ++c) {
    bool any = false;
    for (int r = 0; r < rungs && !any; ++r) any = measured(r, c);
    if (any) {
      view.columns.push_back(c);
    } else {
      view.columns_left.push_back(FormatShape(s.shapes(c)));
    }
  }
  for (int r = 0; r < rungs; ++r) {
    bool any = false;
    for (int c = 0; c < columns && !any; ++c) any = measured(r, c);
    if (any) {
      view.rungs.push_back(r);
    } else {
      view.rungs_left.push_back(s.rows(r * columns).rung());
    }
  }
  return view;
}

std::string LeftOutLine(const ShapeView& view) {
  auto join = [](const std::vector<std::string>& v) {
    std::string out;
    for (const auto& x : v) out += (out.empty() ? "" : ", ") + x;
    return out;
  };
  std::string line;
  if (!view.columns_left.empty()) line += "at " + join(view.columns_left);
  if (!view.rungs_left.empty()) line += (line.empty() ? "" : "; ") + join(view.rungs_left);
  return line.empty() ? "" : "Not measured in this run: " + line + ".";
}

std::string NotDrawn(const v1::ReportSection& s) {
  std::string missing, failed;
  for (const v1::ReportRow& r : s.rows()) {
    if (Measured(r)) continue;
    std::string& list = r.status() == v1::ROW_STATUS_MISSING ? missing : failed;
    list += (list.empty() ? "" : ", ") + r.rung();
  }
  std::string out;
  if (!missing.empty()) out = "Not measured in this run: " + missing + ".";
  if (!failed.empty()) out += (out.empty() ? "" : " ") + ("Failed, so not drawn: " + failed + ".");
  return out;
}

std::string ComparisonLabel(const v1::ReportRow& row) {
  std::string label = row.rung() + " vs " + row.vs();
  const std::size_t colon = row.what().find(": ");
  if (row.what().find(", tile ") < colon && colon != std::string::npos)
    label += " (" + row.what().substr(0, colon) + ")";
  return label;
}

}  // namespace ablation::client::report
