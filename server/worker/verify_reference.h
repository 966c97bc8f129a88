// What a verification compares with, as the task names it. The daemon has always chosen (its
// default for the shape lives in core/verification_policy.h); the worker has no default of its
// own, so that the reference stored with a result is the one the daemon decided on.
#pragma once

#include <string>

#include "ablation/v1/worker.pb.h"

namespace ablation::worker {

/// "" when the task names a reference the worker can look for, else the error reply's text,
/// naming the field: reference unspecified or not a known value, or REFERENCE_VARIANT without a
/// reference_variant.
std::string CheckReference(const ::ablation::worker::v1::VerifyTask& task);

/// The reference in words for logs: "cpu", "cublas", or the reference variant's name.
std::string ReferenceText(const ::ablation::worker::v1::VerifyTask& task);

}  // namespace ablation::worker
