#include "server/core/verification_policy.h"

namespace ablation::core {

double Work(const kernels::Problem& p) { return double(p.m) * double(p.n) * double(p.k); }

std::string ReferenceText(v1::Reference reference, const std::string& variant) {
  switch (reference) {
    case v1::REFERENCE_CPU:
      return "cpu";
    case v1::REFERENCE_CUBLAS:
      return "cublas";
    case v1::REFERENCE_VARIANT:
      return variant;
    default:
      return "none";
  }
}

ReferenceChoice ChooseReference(const kernels::Variant& variant, const kernels::Problem& problem,
                                v1::Reference asked, const std::string& asked_variant) {
  ReferenceChoice choice;
  if (asked == v1::REFERENCE_VARIANT) {
    choice.reference = asked;
    choice.variant = asked_variant;
    return choice;
  }
  v1::Reference reference = asked;
  if (reference == v1::REFERENCE_UNSPECIFIED) {
    reference = Work(problem) <= kCpuReferenceDefaultMaxWork || variant.family == "cublas"
                    ? v1::REFERENCE_CPU
                    : v1::REFERENCE_CUBLAS;
  }
  if (reference == v1::REFERENCE_CPU && Work(problem) > kCpuReferenceMaxWork) {
    choice.not_checked = "the CPU reference is limited to M*N*K <= 2^31 and " + variant.name +
                         " has no other reference at this size";
    return choice;
  }
  choice.reference = reference;
  return choice;
}

}  // namespace ablation::core
