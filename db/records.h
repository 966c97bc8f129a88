// What the store's queries take and return besides the row messages themselves. The rows are the
// API's own messages (ablation.v1.Run, Measurement, VerifyResult): the store maps their fields to
// columns by name (proto/ablation/v1/storage.proto says how), so a row is written out once, in
// the .proto, and never mirrored by hand.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ablation/v1/ablation.pb.h"

namespace ablation::db {

// The text an enum value is stored as (dashboards read it): its name without the type prefix, in
// lower case. RUN_STATE_QUEUED -> "queued", MEASUREMENT_STATUS_OK -> "ok"; unspecified -> "".
std::string EnumText(const google::protobuf::EnumValueDescriptor* value);
template <typename E>
std::string EnumText(E value) {
  return EnumText(google::protobuf::GetEnumDescriptor<E>()->FindValueByNumber(int(value)));
}

// True for succeeded, partial, failed, cancelled: the states FinishRun accepts.
bool IsFinalRunState(v1::RunState state);

// ListRuns: empty strings, unspecified enums and 0 mean "any" / "default".
struct RunFilter {
  std::string tag;
  v1::RunState state = v1::RUN_STATE_UNSPECIFIED;
  int32_t page_size = 0;   // <= 0: 50; at most 1000
  std::string page_token;  // from a previous RunPage with the same filter
};

struct RunPage {
  std::vector<v1::Run> runs;    // newest first (id descending)
  std::string next_page_token;  // empty: no more
};

// QueryMeasurements: empty strings, unspecified enums and 0 mean "any" / "default".
struct MeasurementFilter {
  std::string variant_glob;  // SQLite GLOB: case-sensitive, * ? [...]
  std::string dtype;
  int64_t m = 0;
  int64_t n = 0;
  int64_t k = 0;
  int64_t run_id = 0;
  std::string tag;
  int64_t since_ms = 0;  // created_at_ms >= since_ms
  int64_t until_ms = 0;  // created_at_ms < until_ms
  v1::MeasurementStatus status = v1::MEASUREMENT_STATUS_UNSPECIFIED;
  int32_t page_size = 0;   // <= 0: 100; at most 1000
  std::string page_token;  // from a previous MeasurementPage with the same filter
  bool include_samples = false;
};

struct MeasurementPage {
  std::vector<v1::Measurement> measurements;  // oldest first (id ascending)
  std::string next_page_token;                // empty: no more
};

}  // namespace ablation::db
