#include "server/worker/verify_reference.h"

namespace ablation::worker {

namespace apb = ::ablation::v1;

std::string CheckReference(const ::ablation::worker::v1::VerifyTask& task) {
  switch (task.reference()) {
    case apb::REFERENCE_CPU:
    case apb::REFERENCE_CUBLAS:
      return "";
    case apb::REFERENCE_VARIANT:
      if (task.reference_variant().empty()) {
        return "VerifyTask.reference_variant is empty: REFERENCE_VARIANT needs the canonical name "
               "of the variant to compare with";
      }
      return "";
    case apb::REFERENCE_UNSPECIFIED:
      return "VerifyTask.reference is unspecified: the daemon chooses the reference (cpu, cublas "
             "or a variant); the worker has no default";
    default:
      // A newer daemon's kind of reference (proto3 keeps unknown enum values).
      return "VerifyTask.reference has the unknown value " + std::to_string(int(task.reference()));
  }
}

std::string ReferenceText(const ::ablation::worker::v1::VerifyTask& task) {
  switch (task.reference()) {
    case apb::REFERENCE_CPU:
      return "cpu";
    case apb::REFERENCE_CUBLAS:
      return "cublas";
    case apb::REFERENCE_VARIANT:
      return task.reference_variant();
    default:
      return "unspecified";
  }
}

}  // namespace ablation::worker
