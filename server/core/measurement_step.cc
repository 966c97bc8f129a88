#include "server/core/measurement_step.h"

#include <cstdio>

#include <spdlog/spdlog.h>

namespace ablation::core {
namespace {

void SetShape(const kernels::Problem& p, v1::Shape* shape) {
  shape->set_m(p.m);
  shape->set_n(p.n);
  shape->set_k(p.k);
}

std::string DTypeText(const kernels::Problem& p) { return std::string(kernels::ToString(p.dtype)); }

}  // namespace

bool IsReferenceFailure(const v1::VerifyResult& result) {
  return !result.passed() && result.error().rfind("reference: ", 0) == 0;
}

std::string DescribeFailedVerification(const v1::VerifyResult& v) {
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "failed against %s: rel frobenius %.3g, max abs %.3g, %lld mismatches, %lld NaN, "
                "%lld unwritten",
                ReferenceText(v.reference(), v.reference_variant()).c_str(),
                v.rel_frobenius_error(), v.max_abs_error(), (long long)v.mismatches(),
                (long long)v.nan_count(), (long long)v.unwritten_count());
  std::string text = buf;
  if (!v.error().empty()) text += "; " + v.error();
  return text;
}

v1::VerifyResult MeasurementStep::Verify(const PlannedMeasurement& item,
                                         const ReferenceChoice& reference, uint64_t seed) {
  v1::VerifyResult result;
  worker::v1::WorkerRequest req;
  auto* task = req.mutable_verify();
  task->set_task_id(NextTask());
  task->set_variant(item.variant->name);
  task->set_dtype(DTypeText(item.problem));
  SetShape(item.problem, task->mutable_shape());
  task->set_reference(reference.reference);
  task->set_reference_variant(reference.variant);
  task->set_seed(seed);
  std::string failure;
  if (Status st = ctx_.gpu->Ensure(); !st.ok()) {
    failure = st.message();
  } else {
    // A reference at 2^31 multiply-adds takes minutes on the CPU: the margin covers it.
    auto call = ctx_.gpu->Call(req, ctx_.hang_margin + std::chrono::seconds(600));
    if (!call.ok)
      failure = call.failure;
    else if (!call.reply.has_verify())
      failure = "worker sent an unexpected reply";
    else
      result = call.reply.verify();
  }
  if (!failure.empty()) {
    result.set_passed(false);
    result.set_error(failure);
  }
  result.set_variant(item.variant->name);
  result.set_dtype(DTypeText(item.problem));
  SetShape(item.problem, result.mutable_shape());
  result.set_reference(reference.reference);
  result.set_reference_variant(reference.variant);
  return result;
}

bool MeasurementStep::VerifyBeforeTiming(const PlannedMeasurement& item, uint64_t seed,
                                         v1::Measurement* m) {
  if (item.variant->Work(item.problem).flops == 0) {
    // A micro-benchmark (smem2reg) writes a checksum, not a product: there is nothing to check.
    m->set_verification_outcome(v1::VERIFICATION_OUTCOME_NOT_CHECKED);
    m->set_verification("not checked: " + item.variant->family + " computes no product");
    return true;
  }
  const ReferenceChoice reference =
      ChooseReference(*item.variant, item.problem, v1::REFERENCE_UNSPECIFIED, "", ctx_.registry);
  if (reference.reference == v1::REFERENCE_UNSPECIFIED) {
    m->set_verification_outcome(v1::VERIFICATION_OUTCOME_NOT_CHECKED);
    m->set_verification("not checked: " + reference.not_checked);
    return true;
  }
  v1::VerifyResult v = Verify(item, reference, seed);
  if (ctx_.on_verified) ctx_.on_verified(v);
  if (!v.passed() && IsReferenceFailure(v)) {
    // The reference could not run this shape: that says nothing about the variant, which is
    // still timed.
    m->set_verification_outcome(v1::VERIFICATION_OUTCOME_NOT_CHECKED);
    m->set_verification("not checked: " + v.error());
    return true;
  }
  if (v.passed()) {
    m->set_verification_outcome(v1::VERIFICATION_OUTCOME_PASSED);
    m->set_verification("passed");
    return true;
  }
  m->set_verification_outcome(v1::VERIFICATION_OUTCOME_FAILED);
  m->set_verification(DescribeFailedVerification(v));
  m->set_error("verification " + m->verification());
  return false;
}

std::string MeasurementStep::Time(const PlannedMeasurement& item, uint64_t seed,
                                  v1::Measurement* m) {
  const RunPlan& plan = *ctx_.plan;
  worker::v1::WorkerRequest req;
  auto* task = req.mutable_measure();
  task->set_task_id(NextTask());
  task->set_variant(item.variant->name);
  task->set_dtype(DTypeText(item.problem));
  SetShape(item.problem, task->mutable_shape());
  *task->mutable_timing() = plan.timing;
  task->set_seed(seed);
  // Warm-up is capped at max_seconds and sampling at twice max_seconds of wall time (flushes and
  // synchronisation are not GPU time). A worker that takes twice that budget plus the margin
  // (seconds, not minutes: the worker's start-up is timed apart, in GpuWorker::Ensure) is hung.
  const auto budget = std::chrono::seconds(
      int64_t(3 * plan.timing.max_seconds() + plan.timing.warmup_seconds()) + 1);
  sampler_.Start(ctx_.nvml, ctx_.uuid, ctx_.expected_sm_mhz, ctx_.nvml_unavailable);
  auto call = ctx_.gpu->Call(req, 2 * budget + ctx_.hang_margin);
  *m->mutable_telemetry() = sampler_.Stop();
  if (!call.ok) return call.failure;
  if (!call.reply.has_measure()) return "worker sent an unexpected reply";
  const auto& r = call.reply.measure();
  m->mutable_cost()->MergeFrom(r.cost());  // where the worker's time went, failed or not
  if (!r.ok()) return r.error();
  if (r.sample_ms_size() == 0 || r.stats().samples() == 0) return "the worker returned no samples";
  m->mutable_sample_ms()->CopyFrom(r.sample_ms());
  m->mutable_sample_cycles()->CopyFrom(r.sample_cycles());
  m->mutable_sample_sm_mhz()->CopyFrom(r.sample_sm_mhz());
  *m->mutable_stats() = r.stats();
  *m->mutable_occupancy() = r.occupancy();
  if (r.l2() != v1::L2_MODE_UNSPECIFIED) m->set_l2(r.l2());
  // What one launch does: 2MNK flops for a GEMM; bytes and fragment loads for a micro-benchmark.
  const kernels::WorkModel work = item.variant->Work(item.problem);
  if (const double seconds = r.stats().median_ms() * 1e-3; seconds > 0) {
    m->set_tflops(work.flops / seconds / 1e12);
    if (work.bytes > 0) m->set_bytes_per_second(work.bytes / seconds);
    if (work.fragment_loads > 0) m->set_fragment_loads_per_second(work.fragment_loads / seconds);
  }
  return "";
}

v1::Measurement MeasurementStep::Measure(const PlannedMeasurement& item, const Slot& slot) {
  const auto started = std::chrono::steady_clock::now();
  const RunPlan& plan = *ctx_.plan;
  const uint64_t seed = InputSeed(ctx_.run_id, item.problem);
  v1::Measurement m;
  m.set_run_id(ctx_.run_id);
  m.set_sequence(slot.sequence);
  m.set_round(slot.round);
  m.set_variant(item.variant->name);
  m.set_dtype(DTypeText(item.problem));
  SetShape(item.problem, m.mutable_shape());
  m.set_l2(plan.timing.hot_l2()     ? v1::L2_MODE_HOT
           : plan.timing.flush_l2() ? v1::L2_MODE_COLD
                                    : v1::L2_MODE_COLD_ROTATED);
  m.set_clock_policy(ClockPolicyText(plan.clocks));
  *m.mutable_telemetry() = UnavailableTelemetry("nothing was timed");

  std::string error;
  if (Status st = ctx_.gpu->Ensure(); !st.ok()) {
    error = st.message();
  } else {
    bool timed = true;
    if (slot.verify) {
      const auto verify0 = std::chrono::steady_clock::now();
      timed = VerifyBeforeTiming(item, seed, &m);
      m.mutable_cost()->set_verify_seconds(
          std::chrono::duration<double>(std::chrono::steady_clock::now() - verify0).count());
    }
    error = timed ? Time(item, seed, &m) : m.error();
  }
  m.set_status(error.empty() ? v1::MEASUREMENT_STATUS_OK : v1::MEASUREMENT_STATUS_FAILED);
  m.set_error(error);
  m.set_wall_seconds(
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
  return m;
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
