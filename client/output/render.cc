#include "client/output/render.h"

#include <algorithm>
#include <cmath>

#include "client/output/enum_words.h"

namespace ablation::client {
namespace {

std::string Duration(std::int64_t start_ms, std::int64_t end_ms) {
  if (start_ms <= 0 || end_ms <= 0 || end_ms < start_ms) return Dash();
  double seconds = static_cast<double>(end_ms - start_ms) / 1000.0;
  if (seconds < 120) return FormatSignificant(seconds, 3) + " s";
  if (seconds < 7200) return FormatFixed(seconds / 60, 1) + " min";
  return FormatFixed(seconds / 3600, 1) + " h";
}

std::string DeviceLabel(const v1::DeviceIdentity& device) {
  if (device.name().empty()) return Dash();
  return device.name() + " (GPU " + std::to_string(device.index()) + ")";
}

}  // namespace

std::string RegimeLabel(const v1::Measurement& m) {
  if (m.regime() == v1::REGIME_UNSPECIFIED) return "-";
  // A row whose regime's condition did not hold says so where its figure is.
  return EnumWord(m.regime()) + (m.conditioned() ? "" : " (not settled)");
}

std::string VerificationText(const v1::Measurement& m) {
  return m.verification().empty() ? EnumWord(m.verification_outcome()) : m.verification();
}

// ---------------------------------------------------------------- tables of messages

Table VariantsTable(const std::vector<v1::Variant>& variants) {
  Table table;
  table.columns = {{"name", "name"},
                   {"family", "family"},
                   {"dtypes", "dtypes"},
                   {"tile", "tile"},
                   {"threads", "threads", Align::kRight},
                   {"smem_bytes", "smem", Align::kRight}};
  // Asked with a shape: the build each variant runs there (or why it cannot run it), where any
  // variant listed has more than one build.
  const auto user_kernel = [](const v1::Variant& v) { return v.family().rfind("user.", 0) == 0; };
  bool builds = false, user = false;
  for (const v1::Variant& v : variants) {
    builds = builds || !v.build().empty() || !v.build_refused().empty();
    user = user || user_kernel(v);
  }
  // User kernels: their builds' registers and static shared memory (ptxas' report).
  if (user) {
    table.columns.push_back({"registers", "registers", Align::kRight});
    table.columns.push_back({"static_smem_bytes", "static smem", Align::kRight});
  }
  if (builds) table.columns.push_back({"build", "build at the shape"});
  for (const v1::Variant& v : variants) {
    std::vector<std::string> dtypes(v.dtypes().begin(), v.dtypes().end());
    // A library's kernel (cuBLAS picks its own) and a user kernel (its launch is the manifest's
    // expressions of the problem) have no one tile, block or shared memory: said so, not zeros.
    const bool library = v.family().rfind("cublas", 0) == 0;
    const bool known = v.tile_m() > 0 && v.tile_n() > 0 && v.tile_k() > 0;
    const std::string unknown = library ? "library" : "-";
    const Cell tile = known ? Cell(Int(v.tile_m()) + "x" + Int(v.tile_n()) + "x" + Int(v.tile_k()))
                            : Cell(unknown, "");
    const Cell threads = v.threads() > 0 ? Cell(Int(v.threads())) : Cell(unknown, "");
    // A user kernel whose launch is known (its threads) has its dynamic shared memory too, 0
    // included.
    const bool launch_known = known || (!library && v.threads() > 0);
    const Cell smem = v.smem_bytes() > 0 || launch_known
                          ? Cell(FormatBytes(v.smem_bytes()), Int(v.smem_bytes()))
                          : Cell(unknown, "");
    table.rows.push_back({v.name(), v.family(), Join(dtypes, ","), tile, threads, smem});
    if (user) {
      const bool mine = user_kernel(v);
      table.rows.back().push_back(mine && v.registers() > 0 ? Cell(Int(v.registers()))
                                                            : Cell("-", ""));
      table.rows.back().push_back(
          mine ? Cell(FormatBytes(v.static_smem_bytes()), Int(v.static_smem_bytes()))
               : Cell("-", ""));
    }
    if (builds) {
      table.rows.back().push_back(!v.build_refused().empty() ? "cannot run it: " + v.build_refused()
                                  : !v.build().empty()       ? v.build()
                                                             : "its one build");
    }
  }
  return table;
}

Table RunsTable(const std::vector<v1::Run>& runs) {
  Table table;
  table.columns = {{"id", "id", Align::kRight},
                   {"state", "state"},
                   {"kind", "kind"},
                   {"regime", "regime"},
                   {"device", "device"},
                   {"created", "created"},
                   {"duration", "duration", Align::kRight},
                   {"planned", "planned", Align::kRight},
                   {"ok", "ok", Align::kRight},
                   {"failed", "failed", Align::kRight},
                   {"tags", "tags"},
                   {"requested_by", "by"}};
  for (const v1::Run& r : runs) {
    std::vector<std::string> tags(r.tags().begin(), r.tags().end());
    const bool timed = r.started_at_ms() > 0 && r.finished_at_ms() >= r.started_at_ms();
    table.rows.push_back({Int(r.id()), EnumWord(r.state()), EnumWord(r.kind()),
                          Cell(r.regime() == v1::REGIME_UNSPECIFIED ? Dash() : EnumWord(r.regime()),
                               EnumWord(r.regime())),
                          Cell(DeviceLabel(r.device()), r.device().name()),
                          Cell(FormatTimeMs(r.created_at_ms()),
                               r.created_at_ms() > 0 ? FormatTimeMs(r.created_at_ms()) : ""),
                          Cell(Duration(r.started_at_ms(), r.finished_at_ms()),
                               timed ? Int(r.finished_at_ms() - r.started_at_ms()) : ""),
                          Int(r.planned()), Int(r.ok()), Int(r.failed()), Join(tags, ","),
                          r.requested_by()});
  }
  // The CSV columns: a duration in milliseconds, which its key says; a time as every CSV spells
  // one (created_at, ISO 8601 in UTC).
  table.columns[6].key = "duration_ms";
  table.columns[5].key = "created_at";
  return table;
}

Table VerifyTable(const std::vector<v1::VerifyResult>& results) {
  Table table;
  table.columns = {{"variant", "variant"},
                   {"dtype", "dtype"},
                   {"shape", "shape"},
                   {"against", "against"},
                   {"max_abs_error", "max abs err", Align::kRight},
                   {"max_rel_error", "max rel err", Align::kRight},
                   {"rel_frobenius_error", "rel frob err", Align::kRight},
                   {"tolerance", "tolerance", Align::kRight},
                   {"mismatches", "mismatches", Align::kRight},
                   {"nan_count", "NaN", Align::kRight},
                   {"unwritten_count", "unwritten", Align::kRight},
                   {"passed", "result"},
                   {"error", "error"}};
  for (const v1::VerifyResult& r : results) {
    auto sci = [](double v) { return Cell(FormatScientific(v), FormatExact(v)); };
    table.rows.push_back(
        {r.variant(), r.dtype(), FormatShape(r.shape()),
         ReferenceWord(r.reference(), r.reference_variant()), sci(r.max_abs_error()),
         sci(r.max_rel_error()), sci(r.rel_frobenius_error()), sci(r.tolerance()),
         Int(r.mismatches()), Int(r.nan_count()), Int(r.unwritten_count()),
         Cell(r.passed() ? "pass" : "FAIL", r.passed() ? "true" : "false"), r.error()});
  }
  return table;
}

Table DeviceTable(const v1::GetDeviceResponse& response) {
  Table table;
  table.columns = {{"field", "field"}, {"value", "value"}};
  const v1::DeviceIdentity& d = response.device();
  AddField(table, "available", "available", response.available() ? "yes" : "no");
  if (!response.available()) {
    AddField(table, "unavailable_reason", "reason", response.unavailable_reason());
  }
  AddField(table, "index", "index", Int(d.index()));
  if (!d.name().empty()) {
    AddField(table, "name", "name", d.name());
    AddField(table, "uuid", "uuid", d.uuid());
    AddField(table, "compute_capability", "compute capability", d.compute_capability());
    AddField(table, "sm_count", "SMs", Int(d.sm_count()));
    AddField(table, "memory_bytes", "memory", FormatBytes(d.memory_bytes()));
    AddField(table, "l2_bytes", "L2", FormatBytes(d.l2_bytes()));
    AddField(table, "smem_per_block_optin", "smem per block (opt-in)",
             FormatBytes(d.smem_per_block_optin()));
    AddField(table, "smem_per_sm", "smem per SM", FormatBytes(d.smem_per_sm()));
    AddField(table, "driver_version", "driver", d.driver_version());
    AddField(table, "cuda_runtime_version", "CUDA runtime", d.cuda_runtime_version());
    AddField(table, "cublas_version", "cuBLAS", d.cublas_version());
  }
  AddField(table, "device_count", "devices", Int(response.device_count()));
  AddField(table, "queued_runs", "queued runs", Int(response.queued_runs()));
  AddField(table, "running_run_id", "running run",
           response.running_run_id() > 0 ? Int(response.running_run_id()) : Dash());
  const v1::Telemetry& t = response.live();
  if (t.available()) {
    // A reading NVML did not give is unset: "-", never a made-up 0.
    auto reading = [](bool present, double value, int decimals, const char* unit) {
      return present ? FormatFixed(value, decimals) + unit : Dash();
    };
    AddField(table, "sm_clock_mhz", "SM clock",
             reading(t.has_sm_clock_mhz_mean(), t.sm_clock_mhz_mean(), 0, " MHz"));
    AddField(table, "mem_clock_mhz", "memory clock",
             reading(t.has_mem_clock_mhz_mean(), t.mem_clock_mhz_mean(), 0, " MHz"));
    AddField(table, "power_w", "power", reading(t.has_power_w_mean(), t.power_w_mean(), 1, " W"));
    AddField(table, "temperature_c", "temperature",
             reading(t.has_temperature_c_mean(), t.temperature_c_mean(), 0, " C"));
    std::vector<std::string> reasons(t.throttle_reasons().begin(), t.throttle_reasons().end());
    AddField(table, "throttle_reasons", "clock events",
             reasons.empty() ? "none" : Join(reasons, ","));
  } else if (!t.unavailable_reason().empty()) {
    AddField(table, "telemetry", "telemetry", "unavailable: " + t.unavailable_reason());
  }
  auto clock_range = [](const auto& clocks) {
    if (clocks.empty()) return Dash();
    auto [lo, hi] = std::minmax_element(clocks.begin(), clocks.end());
    return Int(clocks.size()) + " clocks, " + Int(*lo) + ".." + Int(*hi) + " MHz";
  };
  if (!response.supported_sm_clocks_mhz().empty()) {
    AddField(table, "supported_sm_clocks_mhz", "lockable SM clocks",
             clock_range(response.supported_sm_clocks_mhz()));
  }
  if (!response.supported_mem_clocks_mhz().empty()) {
    AddField(table, "supported_mem_clocks_mhz", "lockable memory clocks",
             clock_range(response.supported_mem_clocks_mhz()));
  }
  return table;
}

namespace {

// "71.2 s for 66.0 s of sampled GPU time (1.079x); setup 0.4 s, warm-up 2.1 s, sampling 67.2 s,
// verification 0.0 s; 386 of 387 on resident inputs". "" where no row says (before schema v10).
std::string CostText(const v1::Run& run, const std::vector<v1::Measurement>& measurements) {
  double gpu = 0, setup = 0, warmup = 0, sampling = 0, verify = 0, settle = 0, cool = 0;
  int with_cost = 0, reused = 0;
  for (const v1::Measurement& m : measurements) {
    gpu += m.stats().total_seconds();
    if (!m.cost().has_worker_seconds()) continue;
    ++with_cost;
    setup += m.cost().setup_seconds();
    warmup += m.cost().warmup_seconds();
    sampling += m.cost().sampling_seconds();
    verify += m.cost().verify_seconds();
    settle += m.cost().settle_seconds();
    cool += m.cost().cool_seconds();
    reused += m.cost().inputs_reused() ? 1 : 0;
  }
  if (with_cost == 0) return "";
  std::string text;
  if (run.finished_at_ms() > 0 && run.started_at_ms() > 0 && gpu > 0) {
    const double run_s = double(run.finished_at_ms() - run.started_at_ms()) / 1e3;
    text = FormatFixed(run_s, 1) + " s for " + FormatFixed(gpu, 1) + " s of sampled GPU time (" +
           FormatFixed(run_s / gpu, 3) + "x); ";
  }
  if (settle > 0 || cool > 0) {
    text += "settling " + FormatFixed(settle, 1) + " s, cooling " + FormatFixed(cool, 1) + " s, ";
  }
  return text + "setup " + FormatFixed(setup, 1) + " s, warm-up " + FormatFixed(warmup, 1) +
         " s, sampling " + FormatFixed(sampling, 1) + " s, verification " + FormatFixed(verify, 1) +
         " s; " + Int(reused) + " of " + Int(int64_t(with_cost)) + " on resident inputs";
}

}  // namespace

std::string RunHeader(const v1::Run& run) { return RunHeader(run, {}); }

std::string RunHeader(const v1::Run& run, const std::vector<v1::Measurement>& measurements) {
  std::vector<std::pair<std::string, std::string>> fields;
  const std::string kind = EnumWord(run.kind());
  fields.emplace_back("run", Int(run.id()) + (kind.empty() ? "" : " (" + kind + ")"));
  fields.emplace_back("state", EnumWord(run.state()));
  const v1::DeviceIdentity& d = run.device();
  std::string device = DeviceLabel(d);
  if (!d.name().empty()) {
    device += ", sm " + d.compute_capability() + ", " + Int(d.sm_count()) + " SMs, driver " +
              d.driver_version() + ", CUDA " + d.cuda_runtime_version();
    if (!d.cublas_version().empty()) device += ", cuBLAS " + d.cublas_version();
  }
  fields.emplace_back("device", device);
  if (!d.uuid().empty()) fields.emplace_back("uuid", d.uuid());
  if (!run.daemon_version().empty()) {
    fields.emplace_back(
        "daemon",
        run.daemon_version() + (run.git_revision().empty() ? "" : " (" + run.git_revision() + ")"));
  }
  if (!run.requested_by().empty()) fields.emplace_back("requested by", run.requested_by());
  std::vector<std::string> tags(run.tags().begin(), run.tags().end());
  fields.emplace_back("tags", tags.empty() ? Dash() : Join(tags, ", "));
  fields.emplace_back("created", FormatTimeMs(run.created_at_ms()));
  fields.emplace_back("started", FormatTimeMs(run.started_at_ms()));
  std::string finished = FormatTimeMs(run.finished_at_ms());
  if (run.finished_at_ms() > 0 && run.started_at_ms() > 0) {
    finished += " (took " + Duration(run.started_at_ms(), run.finished_at_ms()) + ")";
  }
  fields.emplace_back("finished", finished);
  fields.emplace_back("measurements", Int(run.planned()) + " planned, " + Int(run.ok()) + " ok, " +
                                          Int(run.failed()) + " failed");
  if (!run.clock_policy().empty()) fields.emplace_back("clocks", run.clock_policy());
  if (run.regime() != v1::REGIME_UNSPECIFIED) {
    fields.emplace_back("regime",
                        EnumWord(run.regime()) +
                            (run.paired() ? " (items of a shape paired)" : " (each item alone)"));
  }
  if (std::string cost = CostText(run, measurements); !cost.empty()) {
    fields.emplace_back("cost", cost);
  }
  if (!run.error().empty()) fields.emplace_back("error", OneLine(run.error()));
  std::size_t width = 0;
  for (const auto& [key, value] : fields) width = std::max(width, key.size());
  std::string text;
  for (const auto& [key, value] : fields) {
    text += key + std::string(width - key.size() + 2, ' ') + value + "\n";
  }
  return text;
}

// ---------------------------------------------------------------- progress

std::string ProgressLine(const v1::RunEvent& event, int measurements_seen, int total) {
  switch (event.event_case()) {
    case v1::RunEvent::kQueued: {
      const auto& q = event.queued();
      std::string line = "run " + Int(q.run_id()) + " queued";
      if (q.position() == 0) return line + ": next to start";
      return line + ": " + Int(q.position()) + (q.position() == 1 ? " run" : " runs") + " ahead";
    }
    case v1::RunEvent::kStarted: {
      const auto& s = event.started();
      return "run " + Int(s.run_id()) + " started on " + DeviceLabel(s.device()) + ": " +
             Int(s.total()) + (s.total() == 1 ? " measurement" : " measurements") + " planned";
    }
    case v1::RunEvent::kMeasurement: {
      const auto& m = event.measurement();
      std::string line = "[" + Int(measurements_seen);
      if (total > 0) line += "/" + Int(total);
      line += "] " + m.variant() + " " + m.dtype() + " " + FormatShape(m.shape()) + ": ";
      if (m.status() == v1::MEASUREMENT_STATUS_OK) {
        // Alone at the cap first (the sustained figure); a window's figure says whose clock.
        if (m.solo().solo_measured()) {
          line += "alone " + FormatFixed(m.solo().solo_tflops(), 1) + " TFLOPS";
          if (m.solo().has_solo_sm_mhz())
            line += " at " + FormatFixed(m.solo().solo_sm_mhz(), 0) + " MHz";
          if (m.solo().has_solo_joules_per_tflop())
            line += ", " + FormatFixed(m.solo().solo_joules_per_tflop(), 3) + " J/TFLOP";
          line += "; ";
        }
        line += FormatMs(m.stats().median_ms()) + " ms, ";
        if (m.tflops() > 0 || m.bytes_per_second() <= 0) {
          line += FormatFixed(m.tflops(), 1) + " TFLOPS";
          if (m.window_members() > 1) {
            line += " in a window shared by " + Int(m.window_members());
            if (m.stats().has_median_sm_mhz())
              line += " at " + FormatFixed(m.stats().median_sm_mhz(), 0) + " MHz";
          }
          line += ", ";
        }
        if (m.bytes_per_second() > 0) {
          line += FormatFixed(m.bytes_per_second() / 1e9, 1) + " GB/s, ";
        }
        if (m.fragment_loads_per_second() > 0) {
          line += FormatFixed(m.fragment_loads_per_second() / 1e9, 2) + " Gloads/s, ";
        }
        line += "noise " + FormatFixed(m.stats().noise() * 100, 2) + "%, " +
                Int(m.stats().samples()) + " samples";
        if (!VerificationText(m).empty()) line += ", verification " + VerificationText(m);
        return line;
      }
      line += m.status() == v1::MEASUREMENT_STATUS_FAILED ? "FAILED" : EnumWord(m.status());
      if (!m.error().empty()) line += ": " + OneLine(m.error());
      return line;
    }
    case v1::RunEvent::kFinished: {
      const auto& f = event.finished();
      return "run " + Int(f.run_id()) + " " + EnumWord(f.state()) + ": " + Int(f.ok()) + " ok, " +
             Int(f.failed()) + " failed";
    }
    case v1::RunEvent::kFailed: {
      const auto& f = event.failed();
      return "run " + Int(f.run_id()) + " failed: " + OneLine(f.reason());
    }
    case v1::RunEvent::EVENT_NOT_SET:
      break;
  }
  return {};
}

}  // namespace ablation::client
