// The measurement step's verification: a variant checked against its reference before it is
// timed (MeasurementStep::Verify, VerifyBeforeTiming), and how a failed check is described.
// Timing is in measurement_step.cc (windows and rows) and measurement_regimes.cc (the regimes).
#include "common/enum_words.h"
#include "server/core/runs/measurement_step.h"
#include "server/core/runs/problem_fields.h"
#include "server/core/userkernels/task_builds.h"

namespace ablation::core {

bool IsReferenceFailure(const v1::VerifyResult& result) {
  return !result.passed() && result.reference_failed();
}

std::string DescribeFailedVerification(const v1::VerifyResult& v) {
  // No comparison was made (the worker failed or was killed before it could compare; a
  // comparison always has its tolerance): what failed is all there is to say.
  if (v.tolerance() == 0 && !v.error().empty()) return "failed: " + v.error();
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "failed against %s: rel frobenius %.3g, max abs %.3g, %lld mismatches, %lld NaN, "
                "%lld unwritten",
                common::ReferenceWord(v.reference(), v.reference_variant()).c_str(),
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
  AddUserCode(*item.variant, task->mutable_user_code());
  AddUserCode(ctx_.registry, reference.variant, task->mutable_user_code());
  std::string failure;
  if (Status st = ctx_.gpu->Ensure(); !st.ok()) {
    failure = st.message();
  } else {
    // The CPU reference at its limit (kCpuReferenceMaxWork multiply-adds) takes minutes: the
    // time allowed grows with the work, so that a kernel that hangs on a small shape is found in
    // half a minute. On the GPU a verification takes seconds: one minute.
    const double share = Work(item.problem) / kCpuReferenceMaxWork;
    const auto allowed = std::chrono::seconds(
        reference.reference == v1::REFERENCE_CPU ? 30 + int64_t(600 * std::min(share, 1.0)) : 60);
    auto call = ctx_.gpu->Call(req, ctx_.hang_margin + allowed);
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
  if (item.variant->code) result.set_user_build_id(item.variant->code->build_id);
  return result;
}

bool MeasurementStep::VerifyBeforeTiming(const PlannedMeasurement& item, uint64_t seed,
                                         v1::Measurement* m) {
  if (!item.variant->own_contract && item.variant->Work(item.problem).flops == 0) {
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

}  // namespace ablation::core
