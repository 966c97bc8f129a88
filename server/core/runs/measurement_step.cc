#include "server/core/runs/measurement_step.h"
#include "server/core/runs/problem_fields.h"

#include <algorithm>
#include <cstdio>
#include <optional>

#include <spdlog/spdlog.h>

#include "common/time.h"
#include "kernels/cublas/cublas_lt.h"
#include "server/core/gpu/peak.h"
#include "server/core/userkernels/task_builds.h"

namespace ablation::core {

void AddCost(const v1::Cost& c, v1::Cost* sum) {
  sum->set_worker_seconds(sum->worker_seconds() + c.worker_seconds());
  sum->set_setup_seconds(sum->setup_seconds() + c.setup_seconds());
  sum->set_warmup_seconds(sum->warmup_seconds() + c.warmup_seconds());
  sum->set_sampling_seconds(sum->sampling_seconds() + c.sampling_seconds());
  // Reused only when every task found its inputs resident.
  sum->set_inputs_reused((!sum->has_inputs_reused() || sum->inputs_reused()) && c.inputs_reused());
}

std::optional<double> MeasurementStep::EnergyJ() {
  uint64_t mj = 0;
  if (ctx_.nvml == nullptr || !ctx_.nvml->TotalEnergyMj(ctx_.uuid, &mj).ok()) return std::nullopt;
  return double(mj) / 1e3;
}

void MeasurementStep::AddLibraryChoices(const Call& c, worker::v1::MeasureTask* task) {
  if (ctx_.library == nullptr || ctx_.registry == nullptr) return;
  for (const std::string& v : c.variants) {
    const kernels::Variant* variant = ctx_.registry->Find(v);
    if (variant == nullptr || !kernels::LaunchesChosenAlgo(*variant)) continue;
    if (auto choice = ctx_.library->Find(v, c.problem)) *task->add_library_choices() = *choice;
  }
}

void MeasurementStep::KeepLibraryChoices(const Call& c, const worker::v1::MeasureResult& r) {
  if (ctx_.library == nullptr) return;
  for (const auto& m : r.members())
    if (m.has_tuning()) ctx_.library->Keep(m.variant(), c.problem, m.tuning());
}

std::string MeasurementStep::CallWindow(const Call& c, worker::v1::MeasureResult* out,
                                        std::vector<NvmlSample>* nvml, std::string* failed_variant,
                                        std::optional<double>* energy_j) {
  const RunPlan& plan = *ctx_.plan;
  worker::v1::WorkerRequest req;
  auto* task = req.mutable_measure();
  task->set_task_id(NextTask());
  for (const std::string& v : c.variants) {
    task->add_variants(v);
    AddUserCode(ctx_.registry, v, task->mutable_user_code());
  }
  AddLibraryChoices(c, task);
  task->set_dtype(DTypeText(c.problem));
  SetShape(c.problem, task->mutable_shape());
  *task->mutable_timing() = plan.timing;
  task->set_seed(c.seed);
  task->set_window_seconds(c.window_seconds);
  task->set_min_cycles(c.min_cycles);
  task->set_warmup(c.warmup);
  task->set_clock_policy(ClockPolicyText(plan.clocks));
  // The worker caps a window at 3 x its span + 1 s of wall time; a warm-up of a kernel of seconds
  // a launch is bounded by max_seconds. A worker that takes twice that plus the margin is hung
  // (seconds, not minutes: the worker's start-up is timed apart, in GpuWorker::Ensure).
  const double budget = 3 * c.window_seconds + 1 + (c.warmup ? plan.timing.max_seconds() : 0);
  const auto timeout = std::chrono::milliseconds(int64_t(2e3 * budget)) + ctx_.hang_margin;
  // The energy counter around the whole call: what the board drew while the window ran (the
  // call's setup too, milliseconds with resident inputs).
  const std::optional<double> energy0 = energy_j ? EnergyJ() : std::nullopt;
  sampler_.Start(ctx_.nvml, ctx_.uuid, ctx_.expected_sm_mhz, ctx_.nvml_unavailable);
  auto call = ctx_.gpu->Call(req, timeout);
  std::vector<NvmlSample> readings = sampler_.StopSamples();
  last_busy_ = std::chrono::steady_clock::now();
  if (energy_j) {
    const std::optional<double> energy1 = EnergyJ();
    *energy_j = energy0 && energy1 && *energy1 >= *energy0 ? std::optional(*energy1 - *energy0)
                                                           : std::nullopt;
  }
  if (nvml) nvml->insert(nvml->end(), readings.begin(), readings.end());
  if (!call.ok) return call.failure;
  if (!call.reply.has_measure()) return "worker sent an unexpected reply";
  *out = call.reply.measure();
  KeepLibraryChoices(c, *out);
  if (!out->ok()) {
    *failed_variant = out->failed_variant();
    return out->error().empty() ? "the worker failed the window without saying why" : out->error();
  }
  return "";
}

void MeasurementStep::FillRow(const worker::v1::MemberResult& member, const Timed& timed,
                              int timed_members, const kernels::Variant& variant,
                              const kernels::Problem& problem, v1::Measurement* m) const {
  m->mutable_sample_ms()->CopyFrom(member.sample_ms());
  m->mutable_sample_cycles()->CopyFrom(member.sample_cycles());
  m->mutable_sample_sm_mhz()->CopyFrom(member.sample_sm_mhz());
  *m->mutable_stats() = member.stats();
  *m->mutable_occupancy() = member.occupancy();
  if (timed.window.l2() != v1::L2_MODE_UNSPECIFIED) m->set_l2(timed.window.l2());
  // What one launch does: 2MNK flops for a GEMM; bytes and fragment loads for a micro-benchmark.
  const kernels::WorkModel work = variant.Work(problem);
  if (const double seconds = member.stats().median_ms() * 1e-3; seconds > 0) {
    m->set_tflops(work.flops / seconds / 1e12);
    if (work.bytes > 0) m->set_bytes_per_second(work.bytes / seconds);
    if (work.fragment_loads > 0) m->set_fragment_loads_per_second(work.fragment_loads / seconds);
  }
  if (member.stats().has_median_sm_mhz()) {
    // A kernel of its own contract names its compute roof: the CUDA cores' fp32 rate or the
    // tensor cores' of its dtype.
    const NormalisedThroughput n =
        Normalise(m->tflops(), member.stats().median_sm_mhz(), ctx_.sm_count,
                  ctx_.compute_capability, work.fp32_peak ? kernels::DType::kFP32 : problem.dtype);
    if (n.tflops_per_ghz) m->set_tflops_per_ghz(*n.tflops_per_ghz);
    if (n.peak_tflops) m->set_peak_tflops(*n.peak_tflops);
    if (n.peak_share) m->set_peak_share(*n.peak_share);
    if (std::string refused = RefuseAbovePeak(m->tflops(), member.stats().median_sm_mhz(), n);
        !refused.empty())
      m->set_error(refused);
  }
  // Held against the bandwidth the worker measured under the run's clocks (0: none, no memory
  // roof).
  if (work.memory_bytes > 0)
    FillRoofline(work, problem, variant.own_contract, timed.window.measured_bandwidth(), m);
  m->set_checked_launches(member.checked_launches());
  if (member.has_library()) *m->mutable_library() = member.library();
  m->set_windows(timed.windows);
  m->set_conditioned(timed.conditioned);
  m->set_regime_note(timed.note);
  *m->mutable_telemetry() =
      ctx_.nvml ? (timed.nvml.empty() ? UnavailableTelemetry("no telemetry samples were taken")
                                      : AggregateTelemetry(timed.nvml, ctx_.expected_sm_mhz))
                : UnavailableTelemetry(ctx_.nvml_unavailable);
  // The window's costs, shared equally by the variants it interleaved, so that a run's rows add
  // up to what it spent.
  const double share = 1.0 / std::max(timed_members, 1);
  v1::Cost* cost = m->mutable_cost();
  const v1::Cost& w = timed.worker_cost;
  cost->set_worker_seconds(share * w.worker_seconds());
  cost->set_setup_seconds(share * w.setup_seconds());
  cost->set_warmup_seconds(share * w.warmup_seconds());
  cost->set_sampling_seconds(share * w.sampling_seconds());
  if (w.has_inputs_reused()) cost->set_inputs_reused(w.inputs_reused());
  if (timed.settle_seconds > 0) cost->set_settle_seconds(share * timed.settle_seconds);
  if (timed.cool_seconds > 0) cost->set_cool_seconds(share * timed.cool_seconds);
}

void MeasurementStep::FillRoofline(const kernels::WorkModel& work, const kernels::Problem& problem,
                                   bool refuse, double bandwidth, v1::Measurement* m) const {
  const double seconds = m->stats().median_ms() * 1e-3;
  if (!(seconds > 0)) return;
  v1::Roofline* r = m->mutable_roofline();
  const double bytes_per_second = work.memory_bytes / seconds;
  r->set_roofline_bytes_per_second(bytes_per_second);
  if (work.memory_bytes > 0) r->set_roofline_intensity(work.flops / work.memory_bytes);
  r->set_roofline_compute_roof(work.fp32_peak ? "fp32"
                                              : std::string(kernels::ToString(problem.dtype)));
  if (m->has_peak_share()) r->set_roofline_compute_share(m->peak_share());
  if (bandwidth > 0) {
    r->set_roofline_bandwidth(bandwidth);
    r->set_roofline_memory_share(bytes_per_second / bandwidth);
    // A kernel of its own contract counts its own bytes: far above the bandwidth, they are wrong
    // (an L2 kept hot on purpose may serve more than device memory can).
    if (refuse && m->l2() != v1::L2_MODE_HOT &&
        bytes_per_second > kAboveMeasuredBandwidth * bandwidth && m->error().empty()) {
      char buf[240];
      std::snprintf(buf, sizeof buf,
                    "refused: %.0f GB/s is %.0f%% of the device's measured bandwidth (%.0f GB/s): "
                    "the work model's bytes or the timing are wrong",
                    bytes_per_second / 1e9, 100 * bytes_per_second / bandwidth, bandwidth / 1e9);
      m->set_error(buf);
    }
  }
  // The nearer roof: below the ridge point (peak over bandwidth) memory binds the kernel.
  if (m->has_peak_tflops() && bandwidth > 0 && work.memory_bytes > 0)
    r->set_roofline_bound(work.flops / work.memory_bytes < m->peak_tflops() * 1e12 / bandwidth
                              ? "memory"
                              : "compute");
}

MeasurementStep::WindowOutcome MeasurementStep::MeasureWindow(const WindowSlot& slot) {
  const auto started = std::chrono::steady_clock::now();
  const RunPlan& plan = *ctx_.plan;
  WindowOutcome out;
  const size_t n = slot.items.size();
  out.rows.resize(n);
  std::vector<double> verify_seconds(n, 0);
  for (size_t i = 0; i < n; ++i) {
    const PlannedMeasurement& item = plan.items[size_t(slot.items[i])];
    v1::Measurement& m = out.rows[i];
    m.set_run_id(ctx_.run_id);
    m.set_round(slot.round);
    m.set_variant(item.variant->name);
    m.set_dtype(DTypeText(item.problem));
    SetShape(item.problem, m.mutable_shape());
    if (item.variant->dispatched_to) m.set_dispatched_to(item.variant->dispatched_to(item.problem));
    m.set_l2(plan.timing.hot_l2()     ? v1::L2_MODE_HOT
             : plan.timing.flush_l2() ? v1::L2_MODE_COLD
                                      : v1::L2_MODE_COLD_ROTATED);
    m.set_clock_policy(ClockPolicyText(plan.clocks));
    m.set_regime(ToProto(plan.regime));
    m.set_window(slot.window);
    if (item.variant->code) m.set_user_build_id(item.variant->code->build_id);
    *m.mutable_telemetry() = UnavailableTelemetry("nothing was timed");
  }
  // Each row's own solo step (its variant alone), apart from the window's shared time.
  std::vector<double> solo_seconds(n, 0);
  auto finish = [&](const std::string& error, const std::vector<size_t>& timed) {
    for (size_t i : timed) {
      if (!error.empty() && out.rows[i].error().empty()) out.rows[i].set_error(error);
    }
    double own_total = 0;
    for (size_t i = 0; i < n; ++i) own_total += verify_seconds[i] + solo_seconds[i];
    const double shared = std::max(common::SecondsSince(started) - own_total, 0.0) /
                          double(std::max<size_t>(timed.size(), 1));
    for (size_t i = 0; i < n; ++i) {
      v1::Measurement& m = out.rows[i];
      m.set_status(m.error().empty() ? v1::MEASUREMENT_STATUS_OK : v1::MEASUREMENT_STATUS_FAILED);
      const bool was_timed = std::find(timed.begin(), timed.end(), i) != timed.end();
      m.set_wall_seconds(verify_seconds[i] + (was_timed ? shared : 0) + solo_seconds[i]);
      if (solo_seconds[i] > 0) m.mutable_cost()->set_solo_seconds(solo_seconds[i]);
    }
  };

  if (Status st = ctx_.gpu->Ensure(); !st.ok()) {
    std::vector<size_t> all(n);
    for (size_t i = 0; i < n; ++i) all[i] = i;
    out.failure = st.message();
    finish(st.message(), all);
    return out;
  }
  // Verification first, each variant on its own (run --verify): a wrong one is not timed.
  std::vector<size_t> timed;
  Call base;
  for (size_t i = 0; i < n; ++i) {
    const PlannedMeasurement& item = plan.items[size_t(slot.items[i])];
    const uint64_t seed = InputSeed(ctx_.run_id, item.problem);
    bool time_it = true;
    if (i < slot.verify.size() && slot.verify[i]) {
      const auto verify0 = std::chrono::steady_clock::now();
      time_it = VerifyBeforeTiming(item, seed, &out.rows[i]);
      verify_seconds[i] = common::SecondsSince(verify0);
      out.rows[i].mutable_cost()->set_verify_seconds(verify_seconds[i]);
    }
    if (!time_it) continue;
    timed.push_back(i);
    base.variants.push_back(item.variant->name);
    base.problem = item.problem;
    base.seed = seed;
  }
  if (timed.empty()) {
    finish("", timed);
    return out;
  }

  Timed t;
  const std::string err =
      plan.regime == Regime::kBurst ? TimeBurst(base, &t) : TimeSustained(base, &t);
  if (t.cancelled) {
    out.cancelled = true;
    finish("cancelled before its window was measured", timed);
    return out;
  }
  if (!err.empty()) {
    out.failure = err;
    out.failed_variant = t.failed_variant;
    finish(err, timed);
    return out;
  }
  int interleaved = 0;
  for (const auto& member : t.window.members()) interleaved += member.ok() ? 1 : 0;
  const std::vector<Solo> solos = MeasureSolos(base, t, timed, &solo_seconds);
  for (size_t k = 0; k < timed.size(); ++k) {
    const size_t i = timed[k];
    const PlannedMeasurement& item = plan.items[size_t(slot.items[i])];
    v1::Measurement& m = out.rows[i];
    m.set_window_members(interleaved);
    const worker::v1::MemberResult* member =
        int(k) < t.window.members_size() ? &t.window.members(int(k)) : nullptr;
    if (member == nullptr || member->variant() != item.variant->name) {
      m.set_error("the worker's reply does not name " + item.variant->name + " where expected");
    } else if (!member->ok()) {
      m.set_error(member->error());
    } else if (member->sample_ms_size() == 0 || member->stats().samples() == 0) {
      m.set_error("the worker returned no samples");
    } else {
      FillRow(*member, t, interleaved, *item.variant, item.problem, &m);
      FillSolo(solos[k], *item.variant, item.problem, m.mutable_solo());
      if (m.solo().solo_measured() && !(t.window.members_size() == 1))
        m.mutable_solo_sample_ms()->CopyFrom(solos[k].member.sample_ms());
      // The worker's time for the row's own solo chunks is the row's alone.
      if (solos[k].worker_cost.has_worker_seconds())
        AddCost(solos[k].worker_cost, m.mutable_cost());
    }
  }
  finish("", timed);
  return out;
}

std::vector<MeasurementStep::Solo> MeasurementStep::MeasureSolos(
    const Call& base, const Timed& t, const std::vector<size_t>& timed,
    std::vector<double>* solo_seconds) {
  std::vector<Solo> solos(timed.size());
  std::string none;
  if (ctx_.plan->regime == Regime::kBurst) {
    none = "burst: no solo span (its short windows end before the power cap engages)";
  } else if (ctx_.plan->timing.no_solo()) {
    none = "no solo span: the run asked for none (no_solo)";
  } else if (t.window.members_size() == 1) {
    solos[0] = SoloOfWindow(t);
    return solos;
  }
  for (size_t k = 0; k < timed.size(); ++k) {
    Solo& solo = solos[k];
    if (!none.empty()) {
      solo.error = none;
      continue;
    }
    if (int(k) >= t.window.members_size() || !t.window.members(int(k)).ok()) {
      solo.error = "no solo span: the variant was left out of its window";
      continue;
    }
    TimeSolo(base, base.variants[k], &solo);
    (*solo_seconds)[timed[k]] = solo.wall_seconds;
    // A worker that failed or a run that stops: the window's other variants go without.
    if (!solo.error.empty()) none = "no solo span: " + base.variants[k] + "'s " + solo.error;
  }
  return solos;
}

void MeasurementStep::ReleaseInputs() {
  // Only a worker that is up holds anything; one is never started to be told so.
  if (!ctx_.gpu->running()) return;
  worker::v1::WorkerRequest req;
  req.mutable_release()->set_task_id(NextTask());
  // Freeing device memory: seconds would mean the worker is stuck.
  auto call = ctx_.gpu->Call(req, std::chrono::seconds(30) + ctx_.hang_margin);
  if (!call.ok)
    spdlog::warn("GPU {}: releasing the worker's inputs: {}", ctx_.gpu->index(), call.failure);
}

}  // namespace ablation::core
