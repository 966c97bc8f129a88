// Plain records that the store reads and writes. They mirror the tables of db/schema.md one to
// one (sub-structs group columns the way ablation.proto groups fields) and know nothing of
// protobuf: server/rpc converts.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ablation::db {

// runs.state values.
inline constexpr std::string_view kRunQueued = "queued";
inline constexpr std::string_view kRunRunning = "running";
inline constexpr std::string_view kRunSucceeded = "succeeded";
inline constexpr std::string_view kRunPartial = "partial";
inline constexpr std::string_view kRunFailed = "failed";
inline constexpr std::string_view kRunCancelled = "cancelled";

// runs.kind values.
inline constexpr std::string_view kKindAblation = "ablation";
inline constexpr std::string_view kKindVerify = "verify";

// measurements.status values.
inline constexpr std::string_view kMeasurementOk = "ok";
inline constexpr std::string_view kMeasurementFailed = "failed";
inline constexpr std::string_view kMeasurementSkipped = "skipped";

// True for the six states above; the store refuses any other.
bool IsRunState(std::string_view state);
// True for succeeded, partial, failed, cancelled: the states FinishRun accepts.
bool IsFinalRunState(std::string_view state);

// The runs.device_* columns and friends; empty / 0 until MarkRunStarted.
struct DeviceIdentity {
  int32_t index = 0;
  std::string name;
  std::string uuid;
  std::string compute_capability;  // "9.0"
  int32_t sm_count = 0;
  std::string driver_version;
  std::string cuda_runtime_version;
  std::string cublas_version;
  int64_t memory_bytes = 0;
  // Schema v2; the sizes that decide which tiles fit, so results can be read without the GPU.
  int64_t l2_bytes = 0;
  int64_t smem_per_block_optin = 0;
  int64_t smem_per_sm = 0;
};

struct RunRecord {
  int64_t id = 0;  // assigned by CreateRun; ignored on insert
  std::string kind{kKindAblation};
  std::string state{kRunQueued};
  DeviceIdentity device;
  std::string daemon_version;
  std::string git_revision;
  std::string request_json;
  std::string requested_by;
  std::vector<std::string> tags;  // duplicates are stored once
  int64_t created_at_ms = 0;      // unix ms; 0 on insert: now
  int64_t started_at_ms = 0;      // 0: not started (NULL in the table)
  int64_t finished_at_ms = 0;     // 0: not finished (NULL in the table)
  std::string error;
  int32_t planned = 0;  // measurements (or verifications) planned
  std::string clock_policy;

  // Read-only, computed on every read: for kind "ablation" the run's measurements with status
  // "ok" / "failed"; for kind "verify" its verifications that passed / did not.
  int32_t ok = 0;
  int32_t failed = 0;
};

struct TimingStats {
  double median_ms = 0;
  double mean_ms = 0;
  double stddev_ms = 0;
  double min_ms = 0;
  double max_ms = 0;
  double q1_ms = 0;
  double q3_ms = 0;
  int32_t samples = 0;
  double noise = 0;          // relative standard error of the mean reached
  double total_seconds = 0;  // schema v2
};

// Schema v2. Numbers read as 0 where the column is NULL (not recorded).
struct Telemetry {
  bool available = false;
  std::string note;  // why it is unavailable, or anything else worth knowing
  double sm_clock_mhz_mean = 0;
  double sm_clock_mhz_min = 0;
  double sm_clock_mhz_max = 0;
  double mem_clock_mhz_mean = 0;
  double mem_clock_mhz_min = 0;
  double mem_clock_mhz_max = 0;
  double power_w_mean = 0;
  double power_w_min = 0;
  double power_w_max = 0;
  double temperature_c_mean = 0;
  double temperature_c_min = 0;
  double temperature_c_max = 0;
  // Stored comma-separated in one text column so dashboards can LIKE '%hw_slowdown%'; a reason
  // must therefore not contain a comma.
  std::vector<std::string> throttle_reasons;
  int32_t throttled_samples = 0;
};

// Schema v2.
struct Occupancy {
  int32_t registers_per_thread = 0;
  int64_t static_smem_bytes = 0;
  int64_t dynamic_smem_bytes = 0;
  int64_t local_bytes_per_thread = 0;
  int32_t max_blocks_per_sm = 0;
  int32_t max_warps_per_sm = 0;
  double theoretical_occupancy = 0;
  std::string limiter;
  int32_t threads_per_block = 0;
};

struct MeasurementRecord {
  int64_t id = 0;  // assigned by InsertMeasurement; ignored on insert
  int64_t run_id = 0;
  int32_t sequence = 0;  // position within the run
  std::string variant;
  std::string dtype;
  int64_t m = 0;
  int64_t n = 0;
  int64_t k = 0;
  std::string status{kMeasurementOk};
  std::string error;
  TimingStats stats;
  double tflops = 0;  // from the median
  // Schema v3, from the median: bytes moved shared memory -> registers and per-warp fragment
  // load instructions, per second. 0 (NULL in the table) where the variant does not model them.
  double bytes_per_second = 0;
  double fragment_loads_per_second = 0;
  std::string l2;  // "cold" | "hot"
  std::string clock_policy;
  std::string verification;  // "" (not checked) | "passed" | "failed: ..."
  Telemetry telemetry;
  Occupancy occupancy;
  // Raw samples in measured order; read back only when asked for (include_samples).
  std::vector<double> sample_ms;
  int64_t created_at_ms = 0;  // unix ms; 0 on insert: now
};

struct VerificationRecord {
  int64_t id = 0;  // assigned by InsertVerification; ignored on insert
  int64_t run_id = 0;
  std::string variant;
  std::string dtype;
  int64_t m = 0;
  int64_t n = 0;
  int64_t k = 0;
  std::string against;  // "cpu" | "cublas" | a variant name
  double max_abs = 0;
  double max_rel = 0;
  double rel_frobenius = 0;
  int64_t mismatches = 0;
  int64_t nan_count = 0;
  int64_t unwritten_count = 0;
  double tolerance = 0;
  bool passed = false;
  std::string error;
  int64_t created_at_ms = 0;  // unix ms; 0 on insert: now
};

// ListRuns: empty strings and 0 mean "any" / "default".
struct RunFilter {
  std::string tag;
  std::string state;
  int32_t page_size = 0;   // <= 0: 50; at most 1000
  std::string page_token;  // from a previous RunPage with the same filter
};

struct RunPage {
  std::vector<RunRecord> runs;  // newest first (id descending)
  std::string next_page_token;  // empty: no more
};

// QueryMeasurements: empty strings and 0 mean "any" / "default".
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
  std::string status;
  int32_t page_size = 0;   // <= 0: 100; at most 1000
  std::string page_token;  // from a previous MeasurementPage with the same filter
  bool include_samples = false;
};

struct MeasurementPage {
  std::vector<MeasurementRecord> measurements;  // oldest first (id ascending)
  std::string next_page_token;                  // empty: no more
};

}  // namespace ablation::db
