// `report --format csv | json`: every row of every section in one long CSV, or the model itself.
#include "client/output/enum_words.h"
#include "client/output/escape.h"
#include "client/output/format.h"
#include "client/output/json.h"
#include "client/report/report.h"
#include "client/report/text.h"

namespace ablation::client::report {

std::string RenderReportCsv(const v1::Report& report) {
  std::string csv =
      "table,label,what,variant,dtype,m,n,k,status,tflops,median_ms,samples,cublas_variant,"
      "cublas_share,vs,vs_variant,change,change_ci_low,change_ci_high,within_noise,error,"
      "rounds,failed_rounds,change_basis,change_floor,cycles_change,cycles_ci_low,cycles_ci_high,"
      "cycles_within_noise,median_cycles,low_clock_share,round_spread,tflops_ci_low,"
      "tflops_ci_high,sm_clock_mhz_mean,sm_clock_mhz_min,power_w_mean,throttled_share,"
      "theoretical_occupancy,shared_load_ratio,counters,change_paired,clock_change,change_source,"
      "regime,tflops_per_ghz,peak_share,shared_window,solo_tflops,solo_tflops_ci_low,"
      "solo_tflops_ci_high,solo_sm_mhz,solo_joules_per_tflop,solo_power_w,solo_rounds,"
      "share_basis,cublas_best_variant,cublas_best_share,at_cap_change,at_cap_ci_low,"
      "at_cap_ci_high,at_cap_within_noise,at_cap_clock_change,at_cap_source,library_pick,"
      "library_config\r\n";
  auto exact = [](bool present, double v) { return present ? FormatExact(v) : std::string(); };
  auto flag = [](bool present, bool v) { return present ? (v ? "true" : "false") : ""; };
  for (const v1::ReportSection& s : report.sections()) {
    for (const v1::ReportRow& r : s.rows()) {
      const bool ci = r.has_change() && r.change().has_interval();
      const bool cycles = r.has_cycles_change();
      const v1::RunConditions& rc = r.conditions();
      std::string counters;  // "metric=value;...", in the stored unit
      for (const v1::Counter& c : r.counters())
        if (c.has_value())
          counters += (counters.empty() ? "" : ";") + c.metric() + "=" + FormatExact(c.value());
      const v1::Change& cc = r.cycles_change();
      const std::vector<std::string> fields = {
          s.id(),
          r.rung(),
          r.what(),
          r.variant(),
          r.dtype(),
          std::to_string(r.shape().m()),
          std::to_string(r.shape().n()),
          std::to_string(r.shape().k()),
          StatusWord(r),
          exact(r.has_tflops(), r.tflops()),
          exact(r.has_median_ms(), r.median_ms()),
          r.has_samples() ? std::to_string(r.samples()) : "",
          r.cublas_variant(),
          exact(r.has_cublas_share(), r.cublas_share()),
          r.vs(),
          r.vs_variant(),
          exact(r.has_change(), r.change().estimate()),
          exact(ci, r.change().interval().low()),
          exact(ci, r.change().interval().high()),
          flag(r.has_change(), r.change().within_noise()),
          r.error(),
          Measured(r) ? std::to_string(r.rounds()) : "",
          r.status() == v1::ROW_STATUS_MISSING ? "" : std::to_string(r.failed_rounds()),
          r.has_change() ? EnumWord(r.change().basis()) : "",
          exact(r.has_change(), r.change().floor()),
          exact(cycles, cc.estimate()),
          exact(cycles && cc.has_interval(), cc.interval().low()),
          exact(cycles && cc.has_interval(), cc.interval().high()),
          flag(cycles, cc.within_noise()),
          exact(r.has_median_cycles(), r.median_cycles()),
          exact(r.has_low_clock_share(), r.low_clock_share()),
          exact(r.has_round_spread(), r.round_spread()),
          exact(r.has_tflops_interval(), r.tflops_interval().low()),
          exact(r.has_tflops_interval(), r.tflops_interval().high()),
          exact(rc.has_sm_clock_mhz_mean(), rc.sm_clock_mhz_mean()),
          exact(rc.has_sm_clock_mhz_min(), rc.sm_clock_mhz_min()),
          exact(rc.has_power_w_mean(), rc.power_w_mean()),
          exact(rc.has_throttled_share(), rc.throttled_share()),
          exact(r.has_theoretical_occupancy(), r.theoretical_occupancy()),
          exact(r.has_shared_load_ratio(), r.shared_load_ratio()),
          counters,
          flag(r.has_change(), r.change().paired()),
          exact(r.has_clock_change(), r.clock_change()),
          r.change_source(),
          EnumWord(r.regime()),
          exact(r.has_tflops_per_ghz(), r.tflops_per_ghz()),
          exact(r.has_peak_share(), r.peak_share()),
          flag(Measured(r), r.shared_window()),
          exact(r.has_solo(), r.solo().tflops()),
          exact(r.solo().has_tflops_interval(), r.solo().tflops_interval().low()),
          exact(r.solo().has_tflops_interval(), r.solo().tflops_interval().high()),
          exact(r.solo().has_sm_mhz(), r.solo().sm_mhz()),
          exact(r.solo().has_joules_per_tflop(), r.solo().joules_per_tflop()),
          exact(r.solo().has_power_w(), r.solo().power_w()),
          r.has_solo() ? std::to_string(r.solo().rounds()) : "",
          r.share_basis(),
          r.cublas_best_variant(),
          exact(r.has_cublas_best_share(), r.cublas_best_share()),
          exact(r.has_at_cap_change(), r.at_cap_change().estimate()),
          exact(r.at_cap_change().has_interval(), r.at_cap_change().interval().low()),
          exact(r.at_cap_change().has_interval(), r.at_cap_change().interval().high()),
          flag(r.has_at_cap_change(), r.at_cap_change().within_noise()),
          exact(r.has_at_cap_clock_change(), r.at_cap_clock_change()),
          r.at_cap_source(),
          r.library().library_pick(),
          r.library().library_config()};
      for (std::size_t i = 0; i < fields.size(); ++i) {  // appended: GCC 12 warns on "," + string&&
        if (i) csv += ',';
        csv += CsvField(fields[i]);
      }
      csv += "\r\n";
    }
  }
  return csv;
}

std::string RenderReportJson(const v1::Report& report) { return JsonEnvelope("report", report); }

}  // namespace ablation::client::report
