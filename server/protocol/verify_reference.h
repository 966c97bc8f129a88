// What a verification compares with, as the task names it. The daemon has always chosen (its
// default for the shape lives in core/verification_policy.h); the worker has no default of its
// own, so that the reference stored with a result is the one the daemon decided on.
#pragma once

#include <string>

#include "ablation/v1/worker.pb.h"
#include "common/limits.h"

namespace ablation::protocol {

/// "" when the task names a reference the worker can look for, else the error reply's text,
/// naming the field: reference unspecified or not a known value, or REFERENCE_VARIANT without a
/// reference_variant.
std::string CheckReference(const ::ablation::worker::v1::VerifyTask& task);

/// Host memory of the CPU reference's FP64 A, B and C beyond which it is refused too: a shape of
/// little work can still be vast (M = N = 2^16, K = 2).
inline constexpr double kMaxCpuReferenceBytes = double(8ull << 30);

/// "" when REFERENCE_CPU can check `shape`, else why not, starting "reference: " as every error
/// of a reference's own does (the daemon then reports the variant as not checked).
std::string CpuReferenceRefusal(const ::ablation::v1::Shape& shape);

}  // namespace ablation::protocol
