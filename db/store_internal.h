// What the parts of the Store (store.cc, store_runs.cc, store_results.cc) share and nothing
// else needs.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <string>

#include "common/time.h"
#include "db/error.h"
#include "db/records.h"

namespace ablation::db::internal {

inline constexpr int32_t kDefaultRunPageSize = 50;
inline constexpr int32_t kDefaultMeasurementPageSize = 100;
inline constexpr int32_t kMaxPageSize = 1000;

using common::NowMs;  // wall-clock milliseconds, as every *_ms column holds (common/time.h)

inline int32_t PageSize(int32_t requested, int32_t fallback) {
  if (requested <= 0) return fallback;
  return std::min(requested, kMaxPageSize);
}

// An enum value for an error message: 'running', unspecified, or the bare number the .proto does
// not name (EnumText would refuse it).
template <typename E>
std::string Describe(E value) {
  const auto* descriptor = google::protobuf::GetEnumDescriptor<E>()->FindValueByNumber(int(value));
  if (descriptor == nullptr) return std::to_string(int(value)) + " (no such value)";
  const std::string text = EnumText(descriptor);
  return text.empty() ? "unspecified" : "'" + text + "'";
}

// The stored text of a state a run can be put in; unspecified and unknown numbers refused.
inline std::string RunStateText(v1::RunState state, const char* expected) {
  if (state == v1::RUN_STATE_UNSPECIFIED || !v1::RunState_IsValid(state)) {
    throw Error(Error::Code::kInvalidArgument,
                "run state " + Describe(state) + " refused; expected " + expected);
  }
  return EnumText(state);
}

inline constexpr const char* kAnyRunState =
    "queued, running, succeeded, partial, failed or cancelled";

}  // namespace ablation::db::internal
