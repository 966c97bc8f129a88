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
#include "common/history/series_row.h"

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

// A user kernel as stored (user_kernels, v13): what was added, by whom, with its hashes.
struct UserKernelRecord {
  int64_t id = 0;
  std::string name;
  std::string owner;
  std::string source, source_sha256;
  std::string manifest, manifest_sha256;
  int64_t created_at_ms = 0;  ///< 0 on insert: now
  int64_t removed_at_ms = 0;  ///< 0: not removed
  int64_t version = 0;        ///< 0 on insert: one past the name's highest (v20)
};

// The algorithm chosen for a library baseline (library_choices, v18): on one device and library
// version, for one variant (cublas_<dtype>_best) at one problem, with what was timed to choose it.
// The blobs are serialized protobuf messages the core reads (ablation.v1.LibraryAlgo,
// ablation.worker.v1.LibraryTuning); the store keeps them as bytes.
struct LibraryChoiceRecord {
  std::string device_uuid;
  std::string library_version;  ///< cuBLAS's, as the worker's hello reports it
  std::string variant, dtype;
  int64_t m = 0, n = 0, k = 0;
  std::string algo;          ///< cublasLtMatmulAlgo_t's bytes
  std::string described;     ///< ablation.v1.LibraryAlgo
  std::string tuning;        ///< ablation.worker.v1.LibraryTuning
  int64_t chosen_at_ms = 0;  ///< 0 on insert: now
  int64_t run_id = 0;        ///< the run whose window chose it
};

// One compiled variant of a user kernel (user_kernel_builds, v13).
struct UserKernelBuild {
  int64_t id = 0;
  int64_t kernel_id = 0;
  std::string variant;   ///< user.<kernel>.<knobs>
  std::string arch;      ///< "sm_90a"
  std::string compiler;  ///< "nvrtc 13.0"
  std::string options;
  std::string cubin;  ///< bytes (stored compressed since v19; empty where not read)
  std::string cubin_sha256;
  int64_t cubin_bytes = 0;  ///< the cubin's size (v19; set from `cubin` on insert)
  int registers = -1;
  int64_t stack_bytes = 0, spill_store_bytes = 0, spill_load_bytes = 0, static_smem_bytes = 0;
  std::string log;
  int64_t created_at_ms = 0;  ///< 0 on insert: now
};

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
  bool newest_first = false;  // id descending (a limit keeps the latest rows)
};

struct MeasurementPage {
  std::vector<v1::Measurement> measurements;  // oldest first (id ascending), or newest first
  std::string next_page_token;                // empty: no more
};

// History (store_history.cc): the ok measurements of a variant as series points.
struct SeriesFilter {
  std::string variant_glob;  // required; SQLite GLOB or a name
  std::string dtype;
  int64_t m = 0, n = 0, k = 0;  // 0: any
  std::string device;           // a GPU UUID or an index as text; '' any
  std::string regime;           // stored text ('sustained'); '' any
  int64_t since_ms = 0;         // the run started at or after; 0 no bound
  std::string tag;              // runs with this tag; '' any
  int64_t run_id = 0;           // only series with a point in this run; 0 any
};

// A run waiting in the fleet outbox (v17).
struct OutboxEntry {
  int64_t run_id = 0;
  int64_t enqueued_at_ms = 0;
  int64_t attempts = 0;
  std::string last_error;
};

struct OutboxBacklog {
  int64_t runs = 0;
  int64_t oldest_enqueued_at_ms = 0;  // 0 when empty
};

// A point as the history module reads it (common/history/series_row.h).
using SeriesRow = history::SeriesRow;

}  // namespace ablation::db
