// What the GPU did while a measurement ran: clocks, power, temperature and clock-event (throttle)
// reasons, sampled from NVML on a thread of the daemon (the worker never sees NVML), and reduced
// to the v1::Telemetry of the measurement's row. A sample taken while the GPU was throttled is
// counted, so that a reader can tell a slow variant from a hot GPU.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "ablation/v1/ablation.pb.h"
#include "server/core/gpu/nvml.h"

namespace ablation::core {

/// Below this fraction of the expected SM clock a sample counts as throttled even when NVML
/// names no reason (it does not always: e.g. a clock that never reached the lock).
inline constexpr double kThrottledClockFraction = 0.9;

/// True if the sample is throttled: a reason in kThrottleReasonsMask is set, or (expected_sm_mhz
/// > 0, and the GPU not idle) the SM clock is below kThrottledClockFraction of it.
bool IsThrottled(const NvmlSample& sample, double expected_sm_mhz);

/// Mean/min/max of each quantity over the samples that have it, the names of every clock-event
/// reason seen except gpu_idle (the GPU idles between samples by design; it is no throttle), and
/// the throttled-sample count. Pure. No samples gives available=false with a note.
v1::Telemetry AggregateTelemetry(const std::vector<NvmlSample>& samples, double expected_sm_mhz);

/// Telemetry that says why there is none ("NVML is not available: ...").
v1::Telemetry UnavailableTelemetry(const std::string& why);

/// One sample as telemetry: the live values for GetDevice. `nvml` may be null, then
/// `why_unavailable` is the note.
v1::Telemetry LiveTelemetry(Nvml* nvml, const std::string& uuid,
                            const std::string& why_unavailable);

/// Samples a GPU on its own thread between Start and Stop. One per GPU thread; not copyable.
/// Always samples as it starts (on its thread) and at Stop too, so that even a measurement shorter
/// than the period has readings from its start and end.
class TelemetrySampler {
 public:
  static constexpr std::chrono::milliseconds kDefaultPeriod{25};

  explicit TelemetrySampler(std::chrono::milliseconds period = kDefaultPeriod) : period_(period) {}
  ~TelemetrySampler();
  TelemetrySampler(const TelemetrySampler&) = delete;
  TelemetrySampler& operator=(const TelemetrySampler&) = delete;

  /// Begins sampling `uuid`. `expected_sm_mhz`: the locked SM clock, or (observing) the clock the
  /// GPU should reach under load; 0 disables the low-clock test. With `nvml` null, Stop returns
  /// UnavailableTelemetry(why_unavailable). Calling Start while started restarts.
  void Start(Nvml* nvml, std::string uuid, double expected_sm_mhz,
             std::string why_unavailable = "NVML is not available");
  /// Ends sampling and returns the summary of the samples since Start.
  v1::Telemetry Stop();
  /// Ends sampling and returns the samples since Start themselves (several short windows are
  /// summarised together); `error` gets the first NVML error, if any. Empty without NVML.
  std::vector<NvmlSample> StopSamples(std::string* error = nullptr);

 private:
  void Loop();
  void TakeSampleLocked();

  std::chrono::milliseconds period_;
  Nvml* nvml_ = nullptr;
  std::string uuid_;
  double expected_sm_mhz_ = 0;
  std::string why_unavailable_;
  std::thread thread_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;                ///< guarded by mu_
  std::vector<NvmlSample> samples_;  ///< guarded by mu_
  std::string first_error_;          ///< guarded by mu_
};

}  // namespace ablation::core
