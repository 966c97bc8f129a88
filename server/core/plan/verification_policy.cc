#include "server/core/plan/verification_policy.h"

namespace ablation::core {

double Work(const kernels::Problem& p) { return double(p.m) * double(p.n) * double(p.k); }

namespace {

// cuBLAS of the problem's dtype takes this shape (its entry's own can_implement says).
bool CublasTakes(const kernels::Problem& problem, const kernels::Registry* registry) {
  if (!registry) return true;
  const kernels::Variant* cublas =
      registry->Find("cublas_" + std::string(kernels::ToString(problem.dtype)));
  return cublas && (!cublas->can_implement || cublas->can_implement(problem).empty());
}

}  // namespace

ReferenceChoice ChooseReference(const kernels::Variant& variant, const kernels::Problem& problem,
                                v1::Reference asked, const std::string& asked_variant,
                                const kernels::Registry* registry) {
  ReferenceChoice choice;
  // A kernel of its own contract is checked against the reference entry its manifest names,
  // whatever the run asked of its GEMMs.
  if (variant.own_contract) {
    choice.reference = v1::REFERENCE_OWN;
    return choice;
  }
  if (asked == v1::REFERENCE_VARIANT) {
    choice.reference = asked;
    choice.variant = asked_variant;
    return choice;
  }
  v1::Reference reference = asked;
  if (reference == v1::REFERENCE_UNSPECIFIED) {
    if (Work(problem) <= kCpuReferenceDefaultMaxWork)
      reference = v1::REFERENCE_CPU;
    else if (variant.family != "cublas" && CublasTakes(problem, registry))
      reference = v1::REFERENCE_CUBLAS;
    else
      reference = v1::REFERENCE_GPU;
  }
  if (reference == v1::REFERENCE_CPU && Work(problem) > kCpuReferenceMaxWork) {
    choice.not_checked =
        "the CPU reference is limited to M*N*K <= 2^33; ask for the GPU "
        "reference (--against gpu) at this size";
    return choice;
  }
  choice.reference = reference;
  return choice;
}

}  // namespace ablation::core
