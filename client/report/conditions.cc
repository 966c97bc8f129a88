#include "client/report/conditions.h"

#include <google/protobuf/util/json_util.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "client/output/format.h"

namespace ablation::client::report {
namespace {

constexpr const char* kSharedLoads = "shared_load_instructions";
constexpr const char* kLdmatrix = "ldmatrix_instructions";

// An NVML number of the item's rounds (a Telemetry field by name): the mean of the rounds'
// values, or their lowest; unset where no round has it.
std::optional<double> OverRounds(const Item& item, const char* field, bool lowest = false) {
  const auto* f = v1::Telemetry::descriptor()->FindFieldByName(field);
  std::vector<double> values;
  for (const v1::Measurement* m : item.ok) {
    const v1::Telemetry& t = m->telemetry();
    if (t.GetReflection()->HasField(t, f)) values.push_back(t.GetReflection()->GetDouble(t, f));
  }
  if (values.empty()) return std::nullopt;
  if (lowest) return *std::min_element(values.begin(), values.end());
  double sum = 0;
  for (double v : values) sum += v;
  return sum / double(values.size());
}

const v1::Counter* Find(const v1::ReportRow& row, const std::string& metric) {
  for (const v1::Counter& c : row.counters())
    if (c.metric() == metric && c.has_value()) return &c;
  return nullptr;
}

// ld.shared + ldmatrix instructions of a row that has both counters; < 0 otherwise.
double SharedLoads(const v1::ReportRow& row) {
  const v1::Counter *lds = Find(row, kSharedLoads), *ldsm = Find(row, kLdmatrix);
  return lds && ldsm ? lds->value() + ldsm->value() : -1;
}

}  // namespace

v1::RunConditions Conditions(const Item& item) {
  v1::RunConditions c;
  c.set_rounds(int(item.ok.size()));
  int samples = 0, throttled = 0, told = 0;
  std::set<std::string> reasons;
  for (const v1::Measurement* m : item.ok) {
    samples += m->stats().samples();
    if (m->telemetry().has_throttled_samples()) {
      throttled += m->telemetry().throttled_samples();
      told += m->stats().samples();
    }
    reasons.insert(m->telemetry().throttle_reasons().begin(),
                   m->telemetry().throttle_reasons().end());
  }
  c.set_samples(samples);
  if (const ItemRounds cycles = Cycles(item); !cycles.empty())
    c.set_median_cycles(ItemMedian(cycles));
  if (const ItemRounds clocks = Clocks(item); !clocks.empty()) c.set_sm_mhz(ItemMedian(clocks));
  if (auto v = OverRounds(item, "sm_clock_mhz_mean")) c.set_sm_clock_mhz_mean(*v);
  if (auto v = OverRounds(item, "sm_clock_mhz_min", true)) c.set_sm_clock_mhz_min(*v);
  if (auto v = OverRounds(item, "power_w_mean")) c.set_power_w_mean(*v);
  if (auto v = OverRounds(item, "temperature_c_mean")) c.set_temperature_c_mean(*v);
  if (told > 0) c.set_throttled_share(double(throttled) / told);
  if (const double low = LowClockShare(item); low >= 0) c.set_low_clock_share(low);
  for (const std::string& r : reasons) c.add_throttle_reasons(r);
  return c;
}

void FillConditions(const Item& item, const std::vector<std::string>& counters,
                    v1::ReportRow* row) {
  *row->mutable_conditions() = Conditions(item);
  for (const v1::Measurement* m : item.ok)
    if (!m->dispatched_to().empty()) {
      row->set_dispatched_to(m->dispatched_to());
      break;
    }
  for (const v1::Measurement* m : item.ok) {
    if (!m->has_occupancy() || m->occupancy().theoretical_occupancy() <= 0) continue;
    row->set_theoretical_occupancy(m->occupancy().theoretical_occupancy());
    row->set_occupancy_limiter(m->occupancy().limiter());
    break;
  }
  for (const v1::Measurement* m : item.ok) {
    if (!m->has_roofline() || !(item.median_ms > 0)) continue;
    v1::Roofline r = m->roofline();
    const double scale = m->stats().median_ms() / item.median_ms;
    if (r.has_roofline_bytes_per_second())
      r.set_roofline_bytes_per_second(r.roofline_bytes_per_second() * scale);
    if (r.has_roofline_memory_share())
      r.set_roofline_memory_share(r.roofline_memory_share() * scale);
    if (r.has_roofline_compute_share())
      r.set_roofline_compute_share(r.roofline_compute_share() * scale);
    *row->mutable_roofline() = r;
    break;
  }
  if (counters.empty()) return;
  // Only the first round is profiled; any round's counters are the item's.
  const v1::Measurement* profiled = nullptr;
  for (const v1::Measurement* m : item.ok)
    if (!m->counters().empty()) {
      profiled = m;
      break;
    }
  if (profiled == nullptr) {
    for (const v1::Measurement* m : item.rows)
      if (!m->counters_note().empty()) {
        row->set_counters_note(m->counters_note());
        break;
      }
    return;
  }
  for (const std::string& metric : counters)
    for (const v1::Counter& c : profiled->counters())
      if (c.metric() == metric) *row->add_counters() = c;
}

void CompareLoads(const RunIndex& index, v1::ReportSection* section) {
  const auto& shown = section->counters();
  if (std::find(shown.begin(), shown.end(), kSharedLoads) == shown.end()) return;
  // Per shape (a per-shape section compares within a column), the first ldmatrix-only rung.
  for (v1::ReportRow& row : *section->mutable_rows()) {
    if (row.status() != v1::ROW_STATUS_OK || row.baseline()) continue;
    if (const Item* micro = index.MicroBenchmark(row.variant(), row.dtype(), row.shape())) {
      v1::MicroBenchmark* out = row.mutable_micro();
      const v1::Measurement& m = *micro->ok.front();
      out->set_variant(m.variant());
      out->set_median_ms(micro->median_ms);
      // Rates scale as 1 / time, as TFLOPS do (RunIndex).
      const double scale = m.stats().median_ms() / micro->median_ms;
      if (m.has_bytes_per_second()) out->set_bytes_per_second(m.bytes_per_second() * scale);
      if (m.has_fragment_loads_per_second())
        out->set_fragment_loads_per_second(m.fragment_loads_per_second() * scale);
    }
    const double loads = SharedLoads(row);
    if (loads <= 0) continue;
    for (const v1::ReportRow& other : section->rows()) {
      if (other.status() != v1::ROW_STATUS_OK || other.baseline() ||
          !SameShape(other.shape(), row.shape()))
        continue;
      const v1::Counter *lds = Find(other, kSharedLoads), *ldsm = Find(other, kLdmatrix);
      if (!lds || !ldsm || lds->value() != 0 || ldsm->value() <= 0) continue;
      row.set_shared_load_ratio(loads / ldsm->value());
      row.set_shared_load_ratio_vs(other.rung());
      break;
    }
  }
}

v1::RunRequest StoredRequest(const v1::Run& run) {
  v1::RunRequest request;
  google::protobuf::util::JsonParseOptions lenient;
  lenient.ignore_unknown_fields = true;
  if (run.request_json().empty() ||
      !google::protobuf::util::JsonStringToMessage(run.request_json(), &request, lenient).ok())
    request.Clear();
  return request;
}

namespace {

// What an L2 mode did to a sample's inputs, in words; "" for none.
std::string L2Words(v1::L2Mode mode) {
  switch (mode) {
    case v1::L2_MODE_COLD_ROTATED:
      return "cold (each sample on its own copy of the inputs, the copies over twice the L2)";
    case v1::L2_MODE_COLD:
      return "cold (flushed before every sample)";
    case v1::L2_MODE_HOT:
      return "hot (the inputs the previous sample left in it)";
    default:
      return "";
  }
}

}  // namespace

std::string InputsText(const v1::GetRunResponse& run, const v1::RunRequest& request) {
  // Each mode with the items (variant, dtype, shape) that ran under it, in the enum's order.
  std::map<int, std::set<std::string>> items;
  for (const v1::Measurement& m : run.measurements())
    if (!L2Words(m.l2()).empty())
      items[m.l2()].insert(m.variant() + " " + m.dtype() + " " + FormatShape(m.shape()));
  if (items.empty()) return "";
  std::string text = "L2 ";
  if (items.size() == 1) {
    text += L2Words(v1::L2Mode(items.begin()->first));
  } else {
    text += "per row:";
    for (const auto& [mode, names] : items) {
      const size_t n = names.size();
      text += (text.back() == ':' ? " " : "; ") + L2Words(v1::L2Mode(mode)) + ", " +
              std::to_string(n) + (n == 1 ? " row" : " rows");
    }
  }
  return text + (request.timing().fresh_inputs()
                     ? "; inputs made anew for every round (fresh inputs)"
                     : "; inputs kept on the device from window to window");
}

std::string CountersTool(const v1::Report& report) {
  for (const v1::ReportSection& s : report.sections())
    for (const v1::ReportRow& r : s.rows())
      for (const v1::Counter& c : r.counters())
        if (!c.tool().empty())
          return c.tool() + (c.tool_version().empty() ? "" : " " + c.tool_version());
  return "";
}

}  // namespace ablation::client::report
