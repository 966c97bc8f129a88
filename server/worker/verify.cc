#include "server/worker/verify.h"

#include <cinttypes>
#include <cmath>
#include <vector>

#include "common/enum_words.h"
#include "kernels/cublas/cublas_lt.h"
#include "kernels/reference.h"
#include "kernels/reference/gpu_reference.h"
#include "server/protocol/verify_reference.h"
#include "server/worker/diagnostics.h"
#include "server/worker/launch.h"
#include "server/worker/library_choice.h"
#include "server/worker/own_contract.h"
#include "server/worker/resident.h"
#include "server/worker/variant_lookup.h"

namespace ablation::worker {

namespace k = ::ablation::kernels;
namespace apb = ::ablation::v1;
namespace wpb = ::ablation::worker::v1;

namespace {

/// Every error of the reference's own (it could not run the shape, or failed) starts so, for the
/// reader; the daemon tells it from the variant's failure by VerifyResult.reference_failed.
constexpr const char* kRef = "reference: ";

/// The reference could not be computed: the variant is not checked (reference_failed), `err` why.
std::string ReferenceFailed(apb::VerifyResult* result, std::string err) {
  result->set_reference_failed(true);
  return err;
}

/// What the variant's output is compared with, and how closely it must agree.
struct Reference {
  enum class Kind { kCpu, kGpu, kVariant } kind = Kind::kCpu;
  Ready variant;  // with kVariant: cublas_<dtype> or the named variant
  k::Tolerance tolerance;
};

std::string ChooseReference(const k::Registry& registry, const wpb::VerifyTask& task,
                            const Ready& r, Reference* ref) {
  const k::Problem& p = r.problem;
  ref->tolerance = k::DefaultTolerance(p.dtype);
  if (task.reference() == apb::REFERENCE_CPU) {
    if (std::string refused = protocol::CpuReferenceRefusal(task.shape()); !refused.empty())
      return refused;
    ref->kind = Reference::Kind::kCpu;
    return "";
  }
  if (task.reference() == apb::REFERENCE_GPU) {
    ref->kind = Reference::Kind::kGpu;
    return "";
  }
  ref->kind = Reference::Kind::kVariant;
  const std::string name = task.reference() == apb::REFERENCE_CUBLAS
                               ? "cublas_" + std::string(k::ToString(p.dtype))
                               : task.reference_variant();
  std::string err = Resolve(registry, name, task.dtype(), task.shape(), &ref->variant);
  if (!err.empty()) return kRef + err;
  // Variants of one family that only move data differently must agree bit for bit.
  if (ref->variant.variant->family == r.variant->family && ref->variant.variant->bit_exact_family &&
      r.variant->bit_exact_family) {
    ref->tolerance = k::ExactTolerance();
  }
  return "";
}

/// A reference that is itself wrong would make every comparison meaningless.
std::string CheckWritten(const std::vector<double>& out, k::DType out_type,
                         const std::string& name) {
  int64_t bad = 0;
  for (double x : out) bad += (k::IsPoison(x, out_type) || !std::isfinite(x)) ? 1 : 0;
  if (bad == 0) return "";
  return kRef + name + " left " + std::to_string(bad) + " output elements unwritten or not finite";
}

/// The GPU reference on the logical K x N B: its own FP32 (int32) output, poisoned first.
std::string GpuReferenceOutput(Device& d, Resident& res, const k::Problem& p,
                               const ProblemInputs& b, std::vector<double>* out) {
  const size_t mn = size_t(p.m * p.n);
  const k::DType out_type = k::GpuReferenceOutputType(p.dtype);
  k::DeviceBuffer c;
  std::string err = c.Allocate(mn * size_t(k::OutputBytes(out_type)));
  if (!err.empty()) {
    return d.Failed(kRef + std::string("allocating the GPU reference's output (") +
                    std::to_string(mn * size_t(k::OutputBytes(out_type)) >> 20) + " MiB): " + err);
  }
  if (!(err = k::Poison(c.data(), mn, out_type, d.stream)).empty() ||
      !(err = k::ReferenceGemmGpu(b.a, b.b_kn, c.data(), p, d.stream)).empty()) {
    return d.Failed(kRef + err);
  }
  if (!(err = d.Check(cudaStreamSynchronize(d.stream), "running the GPU reference")).empty()) {
    return kRef + err;
  }
  if (!(err = k::CopyToHostAsDouble(c.data(), mn, out_type, true, out)).empty()) {
    return d.Failed(kRef + std::string("copying the GPU reference's output to the host: ") + err);
  }
  return CheckWritten(*out, out_type, "the GPU reference");
}

/// The reference's output of the same inputs, as doubles on the host.
std::string ReferenceOutput(Device& d, Resident& res, const Reference& ref, const k::Problem& p,
                            const ProblemInputs& b, std::vector<double>* out) {
  std::string err;
  if (ref.kind == Reference::Kind::kCpu) {
    std::vector<double> ha, hb;
    if (!(err = k::CopyToHostAsDouble(b.a, size_t(p.m * p.k), p.dtype, false, &ha)).empty() ||
        !(err = k::CopyToHostAsDouble(b.b_kn, size_t(p.k * p.n), p.dtype, false, &hb)).empty()) {
      return d.Failed(kRef + std::string("copying the inputs to the host: ") + err);
    }
    if (p.dtype == k::DType::kFP8) {  // the dequantised inputs (exact in double)
      for (double& x : ha) x *= double(k::kFp8ScaleA);
      for (double& x : hb) x *= double(k::kFp8ScaleB);
    }
    *out = k::ReferenceGemm(ha, hb, p.m, p.n, p.k);
    return "";
  }
  if (ref.kind == Reference::Kind::kGpu) {
    err = GpuReferenceOutput(d, res, p, b, out);
    // The GPU reference sums the e4m3 values' products: the dequantised product is that times
    // both scales.
    if (err.empty() && p.dtype == k::DType::kFP8) {
      for (double& x : *out) x *= double(k::kFp8ScaleA) * double(k::kFp8ScaleB);
    }
    return err;
  }
  const size_t mn = size_t(p.m * p.n);
  const std::string& name = ref.variant.variant->name;
  if (!(err = k::Poison(b.c_ref, mn, p.dtype, d.stream)).empty()) {
    return d.Failed(kRef + std::string("poisoning the reference output: ") + err);
  }
  if (!(err = LaunchChecked(d, ref.variant, ArgsFor(d, ref.variant, b, b.c_ref))).empty()) {
    return kRef + err;
  }
  if (!(err = d.Check(cudaStreamSynchronize(d.stream), "running " + name)).empty()) {
    return kRef + err;
  }
  if (!(err = k::CopyToHostAsDouble(b.c_ref, mn, p.dtype, true, out)).empty()) {
    return d.Failed(kRef + std::string("copying the reference output to the host: ") + err);
  }
  return CheckWritten(*out, p.dtype, name);
}

/// A kernel of its own contract against its own reference entry (own_contract.h).
std::string VerifyOwn(Device& d, const Ready& r, const wpb::VerifyTask& task,
                      apb::VerifyResult* result) {
  const k::Variant& v = *r.variant;
  if (!v.verify_own) return "variant " + v.name + " has its own contract but no check was bound";
  k::OwnCheck check;
  std::string err = v.verify_own(r.problem, d.stream, task.seed(), &check);
  if (!err.empty()) {
    if (err.rfind(kRef, 0) == 0) return ReferenceFailed(result, err);
    return d.Failed(err);
  }
  result->set_max_abs_error(check.max_abs_error);
  result->set_max_rel_error(check.max_rel_error);
  result->set_mismatches(check.mismatches);
  result->set_passed(check.passed);
  if (!check.passed) result->set_error(OwnCheckText(check));
  Log("verified %s %s against its reference: %s (%" PRId64 " of %" PRId64
      " elements outside the tolerance, max abs %.3g)%s%s",
      v.name.c_str(), ShapeText(task.shape()).c_str(), check.passed ? "passed" : "FAILED",
      check.mismatches, check.elements, check.max_abs_error, check.passed ? "" : ": ",
      check.detail.c_str());
  return "";
}

}  // namespace

std::string RunVerify(Device& d, Resident& res, const k::Registry& registry,
                      const wpb::VerifyTask& task, apb::VerifyResult* result) {
  Ready r;
  std::string err = Resolve(registry, task.variant(), task.dtype(), task.shape(), &r);
  if (!err.empty()) return err;
  if (r.variant->own_contract) return VerifyOwn(d, r, task, result);
  if (task.reference() == apb::REFERENCE_OWN)
    return "variant " + r.variant->name +
           " is not a kernel of its own contract: it has no reference entry of its own";
  const k::Problem& p = r.problem;
  if (r.variant->Work(p).flops == 0) {
    return "variant " + r.variant->name + " (family " + r.variant->family +
           ") computes no product, only a checksum of its loads: there is nothing to verify";
  }
  Reference ref;
  if (!(err = ChooseReference(registry, task, r, &ref)).empty())
    return ReferenceFailed(result, err);
  result->set_tolerance(ref.tolerance.rel_frobenius);

  const bool variant_ref = ref.kind == Reference::Kind::kVariant;
  const bool need_nk = r.variant->b_layout == k::BLayout::kNK ||
                       (variant_ref && ref.variant.variant->b_layout == k::BLayout::kNK);
  // The resident inputs of the problem, written again from the seed (a verification checks inputs
  // nothing that ran before can have touched); the outputs poisoned.
  ProblemInputs b;
  err = res.inputs.Prepare({.problem = p,
                            .seed = task.seed(),
                            .need_nk = need_nk,
                            .outputs = variant_ref ? 2 : 1,
                            .refill = true},
                           &b);
  if (!err.empty()) return err;
  // A _best library variant (as the variant or its reference) launches the algorithm chosen for
  // the problem; choosing it launches the candidates on these buffers, which are then written
  // again, so that C is poisoned when the variant runs.
  bool tuned = false;
  for (Ready* x : {&r, variant_ref ? &ref.variant : nullptr}) {
    if (x == nullptr || !k::LaunchesChosenAlgo(*x->variant)) continue;
    wpb::LibraryTuning tuning;
    if (!(err = EnsureChosenAlgo(d, res, nullptr, ArgsFor(d, *x, b, b.c), x, &tuning)).empty())
      return x == &r ? err : ReferenceFailed(result, kRef + err);
    tuned = tuned || tuning.candidates_size() > 0;
  }
  if (tuned && !(err = res.inputs.Prepare({.problem = p,
                                           .seed = task.seed(),
                                           .need_nk = need_nk,
                                           .outputs = variant_ref ? 2 : 1,
                                           .refill = true},
                                          &b))
                    .empty())
    return err;

  // C is poisoned: whatever the variant does not write stays visible.
  if (!(err = LaunchChecked(d, r, ArgsFor(d, r, b, b.c))).empty()) return err;
  if (!(err = d.Check(cudaStreamSynchronize(d.stream), "running " + r.variant->name)).empty()) {
    return err;
  }
  // When the GPU last worked, for the next warm-up: not after the host's part (a CPU reference,
  // the comparison), during which it idles.
  std::vector<double> ref_out, out;
  if (!(err = ReferenceOutput(d, res, ref, p, b, &ref_out)).empty())
    return ReferenceFailed(result, err);
  if (!(err = k::CopyToHostAsDouble(b.c, size_t(p.m * p.n), p.dtype, true, &out)).empty()) {
    return d.Failed("copying the output to the host: " + err);
  }
  const k::Comparison c = k::Compare(out, ref_out, p.dtype, ref.tolerance);
  result->set_max_abs_error(c.max_abs_error);
  result->set_max_rel_error(c.max_rel_error);
  result->set_rel_frobenius_error(c.rel_frobenius_error);
  result->set_mismatches(c.mismatches);
  result->set_nan_count(c.nan_count);
  result->set_unwritten_count(c.unwritten_count);
  result->set_passed(c.passed);
  // A variant with a wrong output may have written where it must not: nothing resident is kept.
  if (!c.passed) res.Clear();
  Log("verified %s %s %s against %s: %s (rel frobenius %.3g, max abs %.3g, %" PRId64
      " mismatches, %" PRId64 " NaN, %" PRId64 " unwritten)",
      r.variant->name.c_str(), task.dtype().c_str(), ShapeText(task.shape()).c_str(),
      common::ReferenceWord(task.reference(), task.reference_variant()).c_str(),
      c.passed ? "passed" : "FAILED", c.rel_frobenius_error, c.max_abs_error, c.mismatches,
      c.nan_count, c.unwritten_count);
  return "";
}

}  // namespace ablation::worker
