#include "server/protocol/verify_reference.h"

namespace ablation::protocol {

namespace apb = ::ablation::v1;

std::string CheckReference(const ::ablation::worker::v1::VerifyTask& task) {
  switch (task.reference()) {
    case apb::REFERENCE_CPU:
    case apb::REFERENCE_GPU:
    case apb::REFERENCE_CUBLAS:
    case apb::REFERENCE_OWN:
      return "";
    case apb::REFERENCE_VARIANT:
      if (task.reference_variant().empty()) {
        return "VerifyTask.reference_variant is empty: REFERENCE_VARIANT needs the canonical name "
               "of the variant to compare with";
      }
      return "";
    case apb::REFERENCE_UNSPECIFIED:
      return "VerifyTask.reference is unspecified: the daemon chooses the reference (cpu, gpu, "
             "cublas or a variant); the worker has no default";
    default:
      // A newer daemon's kind of reference (proto3 keeps unknown enum values).
      return "VerifyTask.reference has the unknown value " + std::to_string(int(task.reference()));
  }
}

std::string CpuReferenceRefusal(const apb::Shape& shape) {
  // The FP64 product on the host is cubic in time and holds A, B and C as doubles.
  const double m = double(shape.m()), n = double(shape.n()), k = double(shape.k());
  const std::string text =
      std::to_string(shape.m()) + "x" + std::to_string(shape.n()) + "x" + std::to_string(shape.k());
  if (m * n * k > common::kCpuReferenceMaxWork) {
    return "reference: " + text + " (M*N*K = " + std::to_string(int64_t(m * n * k)) +
           ") is too large for the CPU reference (at most 2^33 multiply-adds), use --against gpu "
           "or cublas";
  }
  const double bytes = 8 * (m * k + k * n + m * n);
  if (bytes > kMaxCpuReferenceBytes) {
    return "reference: " + text + " needs " + std::to_string(int64_t(bytes / 1e6)) +
           " MB of host memory for the CPU reference's FP64 A, B and C (at most " +
           std::to_string(int64_t(kMaxCpuReferenceBytes / 1e6)) + " MB), use --against gpu";
  }
  return "";
}

}  // namespace ablation::protocol
