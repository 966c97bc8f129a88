// The measurement step's regimes: a window timed sustained (settled at the cap), in bursts from
// a cooled GPU, and each of its variants alone (solo spans). Windows, rows and their figures are
// in measurement_step.cc, verification in measurement_verify.cc.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "common/time.h"
#include "server/core/gpu/peak.h"
#include "server/core/runs/measurement_step.h"
#include "server/protocol/window_stats.h"

namespace ablation::core {

namespace {

/// The clock-event reasons that held the clock down in any reading; "" when none did.
std::string ThrottleSeen(const std::vector<NvmlSample>& samples) {
  uint64_t seen = 0;
  for (const NvmlSample& s : samples)
    if (s.reasons) seen |= *s.reasons & kThrottleReasonsMask;
  if (!seen) return "";
  std::string names;
  for (const std::string& n : ReasonNames(seen)) names += (names.empty() ? "" : ", ") + n;
  return "NVML reported " + names + " during the window";
}

}  // namespace

std::string MeasurementStep::TimeSustained(const Call& base, Timed* out) {
  const RegimeParams& p = ctx_.plan->regime_params;
  SettleDetector settle(p);
  const auto t0 = std::chrono::steady_clock::now();
  Call chunk = base;
  chunk.window_seconds = p.chunk_seconds;
  chunk.min_cycles = 1;
  for (bool first = true;; first = false) {
    if (Stopping()) {
      out->cancelled = true;
      return "";
    }
    chunk.warmup = first;
    worker::v1::MeasureResult r;
    std::vector<NvmlSample> readings;
    const std::string err = CallWindow(chunk, &r, &readings, &out->failed_variant);
    AddCost(r.cost(), &out->worker_cost);
    if (!err.empty()) return err;
    // The chunk's mean board power, as its telemetry summarises it.
    const v1::Telemetry power = AggregateTelemetry(readings, 0);
    settle.Add({r.cost().sampling_seconds(), r.sm_mhz(),
                power.has_power_w_mean() ? std::optional(power.power_w_mean()) : std::nullopt});
    if (settle.settled() || common::SecondsSince(t0) >= p.settle_max_seconds) break;
  }
  out->settle_seconds = common::SecondsSince(t0);
  out->conditioned = settle.settled();
  out->note = settle.Describe();

  Call window = base;
  window.window_seconds = p.window_seconds;
  window.min_cycles = std::max(1, ctx_.plan->timing.min_samples());
  window.warmup = false;
  const std::string err =
      CallWindow(window, &out->window, &out->nvml, &out->failed_variant, &out->window_energy_j);
  AddCost(out->window.cost(), &out->worker_cost);
  if (!err.empty()) return err;
  out->windows = 1;
  // Honest about a clock that moved after all: the window against the last settled span.
  const double settled_mhz = settle.last_span_mhz(), window_mhz = out->window.sm_mhz();
  if (settled_mhz > 0 && window_mhz > 0 &&
      std::fabs(window_mhz / settled_mhz - 1) > 2 * p.clock_tolerance) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "; the window ran at %.0f MHz (%+.2f%% on the settled span)",
                  window_mhz, 100 * (window_mhz / settled_mhz - 1));
    out->note += buf;
  }
  return "";
}

void MeasurementStep::TimeSolo(const Call& base, const std::string& variant, Solo* out) {
  const auto t0 = std::chrono::steady_clock::now();
  RegimeParams p = ctx_.plan->regime_params;
  // Its spans must cover the solo span before they may agree.
  p.settle_min_seconds = std::max(p.settle_min_seconds, p.solo_seconds);
  SettleDetector settle(p);
  struct Chunk {
    worker::v1::MemberResult member;
    std::optional<double> energy_j;
    double sampling_seconds = 0, gpu_seconds = 0;
    int64_t launches = 0;
  };
  std::vector<Chunk> chunks;
  Call chunk = base;
  chunk.variants = {variant};
  chunk.window_seconds = p.chunk_seconds;
  chunk.min_cycles = 1;
  chunk.warmup = false;  // warmed up in the paired window a moment ago
  for (;;) {
    if (Stopping()) {
      out->error = "cancelled before its solo span";
      out->wall_seconds = common::SecondsSince(t0);
      return;
    }
    worker::v1::MeasureResult r;
    std::vector<NvmlSample> readings;
    std::string failed;
    Chunk c;
    const std::string err = CallWindow(chunk, &r, &readings, &failed, &c.energy_j);
    if (err.empty() && (r.members_size() != 1 || !r.members(0).ok())) {
      out->error =
          r.members_size() == 1 ? r.members(0).error() : "the worker's reply has no member";
    } else if (!err.empty()) {
      out->error = err;
    }
    if (!out->error.empty()) {
      out->error = "its solo span failed: " + out->error;
      out->wall_seconds = common::SecondsSince(t0);
      return;
    }
    const v1::Telemetry power = AggregateTelemetry(readings, 0);
    settle.Add({r.cost().sampling_seconds(), r.sm_mhz(),
                power.has_power_w_mean() ? std::optional(power.power_w_mean()) : std::nullopt});
    AddCost(r.cost(), &out->worker_cost);
    c.member = r.members(0);
    c.sampling_seconds = r.cost().sampling_seconds();
    c.gpu_seconds = r.gpu_seconds();
    c.launches = r.launched_cycles();
    chunks.push_back(std::move(c));
    if (settle.settled() || common::SecondsSince(t0) >= p.settle_max_seconds) break;
  }
  // The span: the last chunks that together make solo_seconds of sampling time.
  size_t first = chunks.size();
  for (double span = 0; first > 0 && span < p.solo_seconds - 1e-9;)
    span += chunks[--first].sampling_seconds;
  const protocol::ClockBounds bounds{.max_sm_mhz = ctx_.expected_sm_mhz,
                                     .low_clock_fraction = ctx_.plan->timing.low_clock_fraction()};
  out->member.set_variant(variant);
  out->member.set_ok(true);
  bool energy = true;
  double joules = 0;
  for (size_t i = first; i < chunks.size(); ++i) {
    const Chunk& c = chunks[i];
    protocol::AppendSamples(c.member, &out->member, bounds);
    out->sampling_seconds += c.sampling_seconds;
    out->gpu_seconds += c.gpu_seconds;
    out->launches += c.launches;
    energy = energy && c.energy_j.has_value();
    if (c.energy_j) joules += *c.energy_j;
  }
  if (energy) out->energy_j = joules;
  out->conditioned = settle.settled();
  out->note = settle.Describe();
  out->wall_seconds = common::SecondsSince(t0);
}

MeasurementStep::Solo MeasurementStep::SoloOfWindow(const Timed& t) const {
  Solo solo;
  if (t.window.members_size() != 1) {
    solo.error = "the window has no single member";
    return solo;
  }
  solo.member = t.window.members(0);
  solo.energy_j = t.window_energy_j;
  solo.sampling_seconds = t.window.cost().sampling_seconds();
  solo.gpu_seconds = t.window.gpu_seconds();
  solo.launches = t.window.launched_cycles();
  solo.conditioned = t.conditioned;
  solo.note = "measured alone in its window: " + t.note;
  return solo;
}

void MeasurementStep::FillSolo(const Solo& solo, const kernels::Variant& variant,
                               const kernels::Problem& problem, v1::SoloFigures* out) const {
  out->set_solo_note(solo.error.empty() ? solo.note : solo.error);
  const worker::v1::MemberResult& m = solo.member;
  if (!solo.error.empty() || m.sample_ms_size() == 0 || !(m.stats().median_ms() > 0)) {
    if (solo.error.empty()) out->set_solo_note("its solo span returned no samples");
    return;
  }
  const kernels::WorkModel work = variant.Work(problem);
  const double tflops = work.flops / (m.stats().median_ms() * 1e-3) / 1e12;
  if (m.stats().has_median_sm_mhz()) {
    const NormalisedThroughput n = Normalise(tflops, m.stats().median_sm_mhz(), ctx_.sm_count,
                                             ctx_.compute_capability, problem.dtype);
    if (std::string refused = RefuseAbovePeak(tflops, m.stats().median_sm_mhz(), n);
        !refused.empty()) {
      out->set_solo_note("its solo span was refused: " + refused);
      return;
    }
    out->set_solo_sm_mhz(m.stats().median_sm_mhz());
    if (n.peak_share) out->set_solo_peak_share(*n.peak_share);
  }
  out->set_solo_measured(true);
  out->set_solo_tflops(tflops);
  out->set_solo_median_ms(m.stats().median_ms());
  out->set_solo_noise(m.stats().noise());
  out->set_solo_samples(m.stats().samples());
  if (m.stats().has_median_cycles()) out->set_solo_median_cycles(m.stats().median_cycles());
  out->set_solo_gpu_seconds(solo.gpu_seconds);
  out->set_solo_launches(solo.launches);
  out->set_solo_conditioned(solo.conditioned);
  if (solo.sampling_seconds > 0)
    out->set_solo_busy_share(std::min(1.0, solo.gpu_seconds / solo.sampling_seconds));
  if (solo.energy_j) {
    out->set_solo_energy_j(*solo.energy_j);
    if (solo.sampling_seconds > 0) out->set_solo_power_w(*solo.energy_j / solo.sampling_seconds);
    if (work.flops > 0 && solo.launches > 0)
      out->set_solo_joules_per_tflop(*solo.energy_j / (double(solo.launches) * work.flops / 1e12));
  }
}

std::string MeasurementStep::CoolDown(bool* cool, double* seconds) {
  const RegimeParams& p = ctx_.plan->regime_params;
  CoolDetector detector(p, coolest_c_);
  const auto t0 = std::chrono::steady_clock::now();
  const auto busy = last_busy_ == std::chrono::steady_clock::time_point{} ? t0 : last_busy_;
  for (;;) {
    CoolReading reading;
    reading.idle_seconds = common::SecondsSince(busy);
    NvmlSample sample;
    if (ctx_.nvml && ctx_.nvml->Sample(ctx_.uuid, &sample).ok()) {
      reading.temp_c = sample.temp_c;
      reading.reasons = sample.reasons;
      if (sample.temp_c && !(coolest_c_ <= *sample.temp_c)) coolest_c_ = *sample.temp_c;
    }
    detector.Add(reading);
    if (detector.cool() || detector.gave_up() || Stopping()) break;
    // NVML's readings change every few tens of milliseconds; a minimum idle time still to go is
    // slept exactly.
    const double left = p.cool_min_seconds - reading.idle_seconds;
    std::this_thread::sleep_for(
        std::chrono::microseconds(int64_t(1e6 * (left > 0 && left < 0.02 ? left : 0.02))));
  }
  *cool = detector.cool();
  *seconds = common::SecondsSince(t0);
  return detector.Describe();
}

std::string MeasurementStep::TimeBurst(const Call& base, Timed* out) {
  const RegimeParams& p = ctx_.plan->regime_params;
  const v1::TimingOptions& t = ctx_.plan->timing;
  // The warm-up alone, unmeasured (module loading, cuBLAS's heuristics): then the cool-downs.
  Call warm = base;
  warm.window_seconds = 0;
  warm.min_cycles = 1;
  warm.warmup = true;
  worker::v1::MeasureResult r;
  std::string err = CallWindow(warm, &r, nullptr, &out->failed_variant);
  AddCost(r.cost(), &out->worker_cost);
  if (!err.empty()) return err;

  for (const std::string& v : base.variants) {
    auto* m = out->window.add_members();
    m->set_variant(v);
    m->set_ok(true);
  }
  const protocol::ClockBounds bounds{.max_sm_mhz = ctx_.expected_sm_mhz,
                                     .low_clock_fraction = t.low_clock_fraction()};
  double burst = p.burst_seconds;
  int kept = 0, rejected = 0;
  bool all_cool = true, forced = false;
  std::string cool_note, reject_note;
  Call window = base;
  window.min_cycles = 1;
  for (;;) {
    if (Stopping()) {
      out->cancelled = true;
      return "";
    }
    bool cool = false;
    double cool_s = 0;
    cool_note = CoolDown(&cool, &cool_s);
    out->cool_seconds += cool_s;
    window.window_seconds = burst;
    std::vector<NvmlSample> readings;
    err = CallWindow(window, &r, &readings, &out->failed_variant);
    AddCost(r.cost(), &out->worker_cost);
    if (!err.empty()) return err;
    // The window's clocks in the order they ran: cycle by cycle, each variant in turn.
    std::vector<double> clocks;
    for (int c = 0; c < r.cycles(); ++c)
      for (const auto& m : r.members())
        if (c < m.sample_sm_mhz_size()) clocks.push_back(m.sample_sm_mhz(c));
    std::string why = CheckBurstWindow(clocks, p.burst_clock_drop);
    if (why.empty()) why = ThrottleSeen(readings);
    if (!why.empty()) {
      ++rejected;
      reject_note = why;
      if (r.cycles() > 1 && rejected < p.burst_max_windows) {
        // Shorter next time: the cap engaged before this one ended.
        burst = std::max(burst / 2, 1e-4);
        continue;
      }
      forced = true;  // one cycle already: nothing shorter to try; kept, and said so
    }
    all_cool = all_cool && cool;
    for (int i = 0; i < r.members_size() && i < out->window.members_size(); ++i) {
      if (!r.members(i).ok()) {
        out->window.mutable_members(i)->set_ok(false);
        out->window.mutable_members(i)->set_error(r.members(i).error());
        continue;
      }
      protocol::AppendSamples(r.members(i), out->window.mutable_members(i), bounds);
      if (r.members(i).has_occupancy())
        *out->window.mutable_members(i)->mutable_occupancy() = r.members(i).occupancy();
    }
    out->window.set_l2(r.l2());
    out->window.set_measured_bandwidth(r.measured_bandwidth());
    out->nvml.insert(out->nvml.end(), readings.begin(), readings.end());
    ++kept;
    // Enough: every variant has its minimum of samples at the noise target, from three windows
    // at least (three cool-downs: one that went wrong shows); or a cap.
    bool enough = kept >= 3;
    double gpu_s = 0;
    for (const auto& m : out->window.members()) {
      if (!m.ok()) continue;
      enough = enough && m.stats().samples() >= std::max(1, t.min_samples()) &&
               m.stats().noise() <= t.target_noise();
      gpu_s = std::max(gpu_s, m.stats().total_seconds());
    }
    if (enough || kept + rejected >= p.burst_max_windows || gpu_s >= t.max_seconds()) break;
  }
  protocol::SetWindowTotals(&out->window);
  out->windows = kept;
  out->conditioned = all_cool && !forced;
  char buf[200];
  std::snprintf(buf, sizeof buf,
                "%d short windows of %.1f ms, each after a cool-down (last: ", kept, 1e3 * burst);
  out->note = buf + cool_note + ")";
  if (rejected > 0) {
    std::snprintf(buf, sizeof buf, "; %d windows rejected (last: ", rejected);
    out->note += buf + reject_note + ")";
  }
  if (forced) out->note += "; a window of one cycle outlasted the burst and was kept";
  return "";
}

}  // namespace ablation::core
