#include "server/core/gpu/telemetry.h"

#include <algorithm>
#include <limits>
#include <optional>

namespace ablation::core {

namespace {

struct Summary {
  double sum = 0, min = std::numeric_limits<double>::infinity(),
         max = -std::numeric_limits<double>::infinity();
  int n = 0;
  void Add(const std::optional<double>& v) {
    if (!v) return;
    sum += *v;
    min = std::min(min, *v);
    max = std::max(max, *v);
    ++n;
  }
  using Setter = void (v1::Telemetry::*)(double);
  // Left unset where nothing was read: unset is "not recorded" (NULL in the table).
  void Into(v1::Telemetry* t, Setter mean, Setter lo, Setter hi) const {
    if (!n) return;
    (t->*mean)(sum / n);
    (t->*lo)(min);
    (t->*hi)(max);
  }
};

}  // namespace

bool IsThrottled(const NvmlSample& sample, double expected_sm_mhz) {
  uint64_t reasons = sample.reasons.value_or(0);
  if (reasons & kThrottleReasonsMask) return true;
  // An idle GPU drops its clocks by design; the sampler sees idle moments between samples.
  if (reasons & nvml_abi::kReasonGpuIdle) return false;
  return expected_sm_mhz > 0 && sample.sm_mhz &&
         *sample.sm_mhz < kThrottledClockFraction * expected_sm_mhz;
}

v1::Telemetry AggregateTelemetry(const std::vector<NvmlSample>& samples, double expected_sm_mhz) {
  v1::Telemetry t;
  if (samples.empty()) {
    t.set_unavailable_reason("no telemetry samples were taken");
    return t;
  }
  Summary sm, mem, power, temp;
  uint64_t seen = 0;
  bool any_reasons = false;
  int throttled = 0;
  for (const auto& s : samples) {
    sm.Add(s.sm_mhz);
    mem.Add(s.mem_mhz);
    power.Add(s.power_w);
    temp.Add(s.temp_c);
    if (s.reasons) {
      any_reasons = true;
      seen |= *s.reasons;
    }
    if (IsThrottled(s, expected_sm_mhz)) ++throttled;
  }
  t.set_available(true);
  t.set_throttled_samples(throttled);
  using T = v1::Telemetry;
  sm.Into(&t, &T::set_sm_clock_mhz_mean, &T::set_sm_clock_mhz_min, &T::set_sm_clock_mhz_max);
  mem.Into(&t, &T::set_mem_clock_mhz_mean, &T::set_mem_clock_mhz_min, &T::set_mem_clock_mhz_max);
  power.Into(&t, &T::set_power_w_mean, &T::set_power_w_min, &T::set_power_w_max);
  temp.Into(&t, &T::set_temperature_c_mean, &T::set_temperature_c_min, &T::set_temperature_c_max);
  for (auto& name : ReasonNames(seen & ~nvml_abi::kReasonGpuIdle)) t.add_throttle_reasons(name);
  std::vector<std::string> missing;
  if (!sm.n) missing.push_back("SM clock");
  if (!mem.n) missing.push_back("memory clock");
  if (!power.n) missing.push_back("power");
  if (!temp.n) missing.push_back("temperature");
  if (!any_reasons) missing.push_back("clock-event reasons");
  // The note travels as Telemetry.unavailable_reason: empty when everything was read.
  if (!missing.empty()) {
    std::string note = "not reported by this GPU:";
    for (size_t i = 0; i < missing.size(); ++i) note += (i ? ", " : " ") + missing[i];
    t.set_unavailable_reason(note);
  }
  return t;
}

v1::Telemetry UnavailableTelemetry(const std::string& why) {
  v1::Telemetry t;
  t.set_available(false);
  t.set_unavailable_reason(why);
  return t;
}

v1::Telemetry LiveTelemetry(Nvml* nvml, const std::string& uuid,
                            const std::string& why_unavailable) {
  if (!nvml) return UnavailableTelemetry(why_unavailable);
  NvmlSample sample;
  if (Status s = nvml->Sample(uuid, &sample); !s.ok()) return UnavailableTelemetry(s.message());
  return AggregateTelemetry({sample}, 0);
}

TelemetrySampler::~TelemetrySampler() { Stop(); }

void TelemetrySampler::Start(Nvml* nvml, std::string uuid, double expected_sm_mhz,
                             std::string why_unavailable) {
  Stop();
  std::lock_guard lock(mu_);
  nvml_ = nvml;
  uuid_ = std::move(uuid);
  expected_sm_mhz_ = expected_sm_mhz;
  why_unavailable_ = std::move(why_unavailable);
  samples_.clear();
  first_error_.clear();
  stop_ = false;
  if (!nvml_) return;
  // The thread takes the first sample as it starts (off the caller's path: NVML calls take up to
  // a millisecond, and the measurement's own set-up comes first anyway), then the periodic ones,
  // and the last one at Stop.
  thread_ = std::thread(&TelemetrySampler::Loop, this);
}

void TelemetrySampler::TakeSampleLocked() {
  NvmlSample sample;
  Status s = nvml_->Sample(uuid_, &sample);
  if (s.ok()) {
    samples_.push_back(sample);
  } else if (first_error_.empty()) {
    first_error_ = s.message();
  }
}

void TelemetrySampler::Loop() {
  std::unique_lock lock(mu_);
  // Even when Stop came first: every measurement has a sample from its start and one from its end.
  TakeSampleLocked();
  while (true) {
    cv_.wait_for(lock, period_, [&] { return stop_; });
    // Holding the lock during the NVML call (about a millisecond) only delays Stop by as much.
    TakeSampleLocked();
    if (stop_) return;
  }
}

std::vector<NvmlSample> TelemetrySampler::StopSamples(std::string* error) {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  std::lock_guard lock(mu_);
  if (error) *error = first_error_;
  return samples_;
}

v1::Telemetry TelemetrySampler::Stop() {
  std::string first_error;
  const std::vector<NvmlSample> samples = StopSamples(&first_error);
  std::lock_guard lock(mu_);
  if (!nvml_) return UnavailableTelemetry(why_unavailable_);
  if (samples.empty()) {
    return UnavailableTelemetry(first_error.empty() ? "no telemetry samples were taken"
                                                    : first_error);
  }
  v1::Telemetry t = AggregateTelemetry(samples, expected_sm_mhz_);
  if (!first_error.empty()) {
    t.set_unavailable_reason(t.unavailable_reason() + (t.unavailable_reason().empty() ? "" : "; ") +
                             "some samples failed: " + first_error);
  }
  return t;
}

}  // namespace ablation::core
