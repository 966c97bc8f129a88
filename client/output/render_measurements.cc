// The measurements table (render.h MeasurementsTable): the columns a set of rows uses, or every
// column for CSV, and each row's cells.
#include <algorithm>
#include <cmath>

#include "client/output/enum_words.h"
#include "client/output/render.h"

namespace ablation::client {
namespace {

// A number for people with its exact form for machines; "-" / empty when absent.
Cell Number(bool present, std::string text, double exact) {
  if (!present) return Cell(Dash(), "");
  return Cell(std::move(text), FormatExact(exact));
}

}  // namespace

namespace {

// Which optional columns a measurements table has: those its rows use (a table), or all of them
// (CSV: the same columns whatever the rows hold, with what identifies each row first, so that a
// script reads every file alike).
struct MeasurementColumns {
  bool every = false;
  bool verified = false, bytes = false, loads = false, regime = false, clock = false, peak = false,
       solo = false, library = false, round = false, roofline = false, dispatched = false;

  MeasurementColumns(const std::vector<v1::Measurement>& rows, bool every_column)
      : every(every_column) {
    auto any = [&](auto has) { return every || std::any_of(rows.begin(), rows.end(), has); };
    verified = any([](const v1::Measurement& m) { return !VerificationText(m).empty(); });
    // Rates only micro-benchmarks model (smem2reg): their columns appear when a row has them.
    bytes = any([](const v1::Measurement& m) { return m.bytes_per_second() > 0; });
    loads = any([](const v1::Measurement& m) { return m.fragment_loads_per_second() > 0; });
    // The regime and the clock beside every figure (rows stored before regimes have neither).
    regime = any([](const v1::Measurement& m) { return m.regime() != v1::REGIME_UNSPECIFIED; });
    clock = any([](const v1::Measurement& m) { return m.stats().has_median_sm_mhz(); });
    peak = any([](const v1::Measurement& m) { return m.has_peak_share(); });
    // The figures that do not depend on a row's neighbours (the variant alone at the cap), and
    // which rows' windows were shared: their TFLOPS are at a clock the neighbours set with them.
    solo = any([](const v1::Measurement& m) { return m.solo().solo_measured(); });
    library = any([](const v1::Measurement& m) { return m.has_library(); });
    // Kernels of their own contract: where each stands against its two roofs.
    roofline = any([](const v1::Measurement& m) { return m.has_roofline(); });
    // A variant that runs other entries' (a per-bucket rung): the entry each row ran.
    dispatched = any([](const v1::Measurement& m) { return !m.dispatched_to().empty(); });
    // A run of several rounds shows which round each row is (CSV has it among its first
    // columns).
    round = !every && std::any_of(rows.begin(), rows.end(),
                                  [](const v1::Measurement& m) { return m.round() > 0; });
  }

  std::vector<Column> Columns() const {
    std::vector<Column> c;
    if (every)
      c = {{"run_id", "run", Align::kRight},
           {"round", "round", Align::kRight},
           {"window", "window", Align::kRight},
           {"created_at", "created"}};
    c.insert(c.end(), {{"variant", "variant"}, {"dtype", "dtype"}, {"shape", "shape"}});
    if (round) c.push_back({"round", "round", Align::kRight});
    if (regime) c.push_back({"regime", "regime"});
    if (solo)
      c.insert(c.end(), {{"solo_tflops", "TFLOPS alone", Align::kRight},
                         {"solo_sm_mhz", "alone MHz", Align::kRight},
                         {"solo_joules_per_tflop", "J/TFLOP", Align::kRight},
                         {"solo_power_w", "W", Align::kRight},
                         {"window_members", "window", Align::kRight}});
    c.push_back({"median_ms", "median ms", Align::kRight});
    c.push_back({"noise_pct", "noise %", Align::kRight});
    c.push_back({"tflops", solo ? "window TFLOPS" : "TFLOPS", Align::kRight});
    if (clock)
      c.insert(c.end(),
               {{"sm_mhz", "SM MHz", Align::kRight}, {"tflops_per_ghz", "TF/GHz", Align::kRight}});
    if (peak) c.push_back({"peak_pct", "% peak", Align::kRight});
    if (bytes) c.push_back({"bytes_per_second", "GB/s", Align::kRight});
    if (loads) c.push_back({"fragment_loads_per_second", "Gloads/s", Align::kRight});
    if (roofline)
      c.insert(c.end(), {{"roofline_bytes_per_second", "GB/s", Align::kRight},
                         {"roofline_memory_pct", "% bandwidth", Align::kRight},
                         {"roofline_compute_pct", "% compute", Align::kRight},
                         {"roofline_bound", "bound"}});
    c.push_back({"samples", "samples", Align::kRight});
    c.push_back({"status", "status"});
    if (verified) c.push_back({"verification", "verified"});
    if (library) c.push_back({"library_config", "library algorithm"});
    c.push_back({"error", "error"});
    if (every) c.push_back({"user_build_id", "build", Align::kRight});
    if (dispatched) c.push_back({"dispatched_to", "ran"});
    return c;
  }

  // The variant alone at the cap, and who shared its window: "alone", or "shared by 3".
  static void AddSolo(const v1::Measurement& m, std::vector<Cell>* row) {
    const v1::SoloFigures& s = m.solo();
    const bool solo = s.solo_measured();
    row->push_back(Number(solo, FormatFixed(s.solo_tflops(), 1), s.solo_tflops()));
    row->push_back(
        Number(solo && s.has_solo_sm_mhz(), FormatFixed(s.solo_sm_mhz(), 0), s.solo_sm_mhz()));
    row->push_back(Number(solo && s.has_solo_joules_per_tflop(),
                          FormatFixed(s.solo_joules_per_tflop(), 3), s.solo_joules_per_tflop()));
    row->push_back(
        Number(solo && s.has_solo_power_w(), FormatFixed(s.solo_power_w(), 0), s.solo_power_w()));
    row->push_back(Cell(m.window_members() > 1    ? "shared by " + Int(m.window_members())
                        : m.window_members() == 1 ? "alone"
                                                  : Dash(),
                        Int(m.window_members())));
  }

  // The window's time, noise, TFLOPS, clock, peak share and rates.
  void AddWindow(const v1::Measurement& m, std::vector<Cell>* row) const {
    const bool timed = m.stats().samples() > 0;
    row->push_back(Number(timed, FormatMs(m.stats().median_ms()), m.stats().median_ms()));
    row->push_back(Number(timed, FormatFixed(m.stats().noise() * 100, 2), m.stats().noise() * 100));
    row->push_back(Number(timed && m.tflops() > 0, FormatFixed(m.tflops(), 1), m.tflops()));
    if (clock) {
      const double mhz = m.stats().median_sm_mhz();
      row->push_back(Number(timed && m.stats().has_median_sm_mhz(), FormatFixed(mhz, 0), mhz));
      row->push_back(
          Number(m.has_tflops_per_ghz(), FormatFixed(m.tflops_per_ghz(), 1), m.tflops_per_ghz()));
    }
    if (peak)
      row->push_back(
          Number(m.has_peak_share(), FormatFixed(100 * m.peak_share(), 1), 100 * m.peak_share()));
    if (bytes) {
      const double v = m.bytes_per_second();
      row->push_back(Number(timed && v > 0, FormatFixed(v / 1e9, 1), v));
    }
    if (loads) {
      const double v = m.fragment_loads_per_second();
      row->push_back(Number(timed && v > 0, FormatFixed(v / 1e9, 2), v));
    }
    if (roofline) AddRoofline(m, row);
    row->push_back(Number(timed, Int(m.stats().samples()), m.stats().samples()));
  }

  // Its GB/s by its work model, its shares of the measured bandwidth and of the compute roof
  // its work model names ("fp32" CUDA cores or the dtype's tensor cores), and the nearer roof.
  static void AddRoofline(const v1::Measurement& m, std::vector<Cell>* row) {
    const v1::Roofline& r = m.roofline();
    const double gbps = r.roofline_bytes_per_second();
    row->push_back(Number(r.has_roofline_bytes_per_second(), FormatFixed(gbps / 1e9, 1), gbps));
    row->push_back(Number(r.has_roofline_memory_share(),
                          FormatFixed(100 * r.roofline_memory_share(), 1),
                          100 * r.roofline_memory_share()));
    row->push_back(Number(
        r.has_roofline_compute_share(),
        FormatFixed(100 * r.roofline_compute_share(), 1) + " (" + r.roofline_compute_roof() + ")",
        100 * r.roofline_compute_share()));
    row->push_back(Cell(r.roofline_bound().empty() ? Dash() : r.roofline_bound()));
  }

  std::vector<Cell> Row(const v1::Measurement& m) const {
    std::vector<Cell> row;
    if (every)
      row = {Cell(Int(m.run_id()), Int(m.run_id())), Cell(Int(m.round()), Int(m.round())),
             Cell(Int(m.window()), Int(m.window())), Cell(FormatTimeMs(m.created_at_ms()))};
    row.insert(row.end(), {Cell(m.variant()), Cell(m.dtype()), Cell(FormatShape(m.shape()))});
    if (round) row.push_back(Cell(Int(m.round()), Int(m.round())));
    if (regime) row.emplace_back(RegimeLabel(m));
    if (solo) AddSolo(m, &row);
    AddWindow(m, &row);
    row.emplace_back(EnumWord(m.status()));
    if (verified) row.emplace_back(VerificationText(m));
    if (library) {
      const v1::LibraryAlgo& a = m.library();
      row.emplace_back(a.library_pick().empty()     ? a.library_config()
                       : a.library_config().empty() ? a.library_pick()
                                                    : a.library_pick() + ": " + a.library_config());
    }
    row.emplace_back(m.error());
    if (every) row.push_back(Cell(Int(m.user_build_id()), Int(m.user_build_id())));
    if (dispatched) row.emplace_back(m.dispatched_to().empty() ? Dash() : m.dispatched_to());
    return row;
  }
};

}  // namespace

Table MeasurementsTable(const std::vector<v1::Measurement>& measurements, bool every_column) {
  const MeasurementColumns columns(measurements, every_column);
  Table table;
  table.columns = columns.Columns();
  for (const v1::Measurement& m : measurements) table.rows.push_back(columns.Row(m));
  return table;
}

}  // namespace ablation::client
