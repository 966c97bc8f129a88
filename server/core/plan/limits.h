// What one caller may ask of the daemon: sizes of requests and of the work they plan, checked
// before any other work is done (no edit distance over a megabyte name, no plan of millions of
// measurements), and how many runs a caller may have in flight. Defaults suit one shared GPU
// node; the config's [limits] table changes them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>

#include <google/protobuf/message.h>
#include <google/protobuf/repeated_ptr_field.h>

#include "server/core/base/status.h"

namespace ablation::core {

struct RequestLimits {
  /// Measurements (items x rounds) one run may plan.
  int max_measurements_per_run = 20000;
  /// Runs one identity may have queued or running at once, and all identities together.
  int max_runs_per_identity = 32;
  int max_runs_total = 512;
  /// Largest request the server accepts, in bytes (gRPC refuses larger ones before parsing).
  int max_message_bytes = 1 << 20;
  /// Characters of a variant name, glob, preset name, dtype or tag.
  size_t max_name_length = 128;
  /// Characters of any other text field of a request.
  size_t max_text_length = 1024;
  /// Entries of any repeated field of a request (variants, shapes, tags).
  int max_repeated = 1024;
  /// Largest reply the server sends, in bytes: a GetRun with every raw sample of a large run is
  /// refused with RESOURCE_EXHAUSTED naming this limit (QueryMeasurements pages instead).
  int max_reply_bytes = 64 << 20;
  /// Samples one measurement may ask for (timing.min_samples and max_samples): about 32 bytes
  /// each stored, so 100,000 is at most ~2.4 MB a measurement (a million was 22.9 MB).
  int max_samples_per_measurement = 100000;
  /// Bytes one run may plan to store (plan_storage.h): measurements x (their most samples x 32
  /// bytes + ~1 KB of rows), checked up front for RunAblation, Verify and Profile alike. 4 GiB:
  /// the largest built-in preset (sm90-shapes, 3 rounds: 1,620 measurements) could store 3.6 GiB
  /// at worst; 20,000 measurements x 100,000 samples would be 45 GiB.
  int64_t max_stored_bytes_per_run = 4ll << 30;
  /// HTTP/2 streams one connection may have open at once (gRPC's MAX_CONCURRENT_STREAMS).
  int max_concurrent_streams = 100;
  /// WatchRun streams open at once, all callers and connections together: each holds up to
  /// RunStream::kMaxPendingEvents events and gRPC's buffers for a client that may never read
  /// (1,000 such watchers over several connections took 1.71 GB before).
  int max_watchers = 128;
  /// The memory gRPC may use for its connections and calls (its resource quota), in bytes;
  /// past it, new calls are refused rather than the daemon growing.
  int64_t grpc_memory_bytes = 128ll << 20;
};

/// Refuses a request whose text or lists are out of bounds, naming the field: every string field
/// (recursively) within its length and free of control characters, every repeated field within
/// max_repeated. Fields named in `name_fields` (variants, tags, ...) get max_name_length. Costs
/// one pass over the message; nothing is copied.
Status CheckRequestBounds(const google::protobuf::Message& request, const RequestLimits& limits);

/// Text of a caller's input fit for an error message: at most 64 characters (then "..."), with
/// control characters and non-ASCII bytes as \xNN, in single quotes.
std::string QuoteInput(std::string_view input);

/// True when the text holds a C0 control character or DEL.
bool HasControlCharacter(std::string_view text);

/// a * b, or false when it does not fit in int64 (either negative counts as not fitting).
bool CheckedMultiply(int64_t a, int64_t b, int64_t* out);

/// The runs in flight (queued or running) of each identity, counted under one lock so that two
/// submissions at once cannot both take the last place. A reservation is taken before a run is
/// submitted and given back when it ends (or when the submission fails).
class RunQuota {
 public:
  explicit RunQuota(const RequestLimits& limits) : limits_(limits) {}

  /// Ok and counted, or FailedPrecondition saying which limit is reached.
  Status Reserve(const std::string& identity);
  void Release(const std::string& identity);
  /// The limits of reservations from now on; those held stay.
  void SetLimits(const RequestLimits& limits);
  int InFlight(const std::string& identity) const;

 private:
  RequestLimits limits_;
  mutable std::mutex mu_;
  std::map<std::string, int> in_flight_;  ///< guarded by mu_
  int total_ = 0;                         ///< guarded by mu_
};

/// The one plan-size limit of every kind of run (RunAblation, Verify, Profile): `planned`
/// measurements (items x rounds) at most `max` (0: no limit), else InvalidArgument naming
/// limits.max_measurements_per_run and `what` was planned.
Status CheckPlanSize(int64_t planned, int max, const char* what);

/// Bytes a stored sample takes: its time, cycles and SM clock, and the time of a sample of its
/// solo span, a little-endian double each (db/schema.md, measurement_samples).
constexpr int64_t kStoredBytesPerSample = 32;
/// Bytes of rows beside the samples per measurement, verification or profile (the measurement
/// row with its telemetry and occupancy, or the verification's, or the counters'), rounded up.
constexpr int64_t kStoredBytesPerRow = 1024;

/// What a run may store at most: `measurements` x (`samples_per_measurement` x
/// kStoredBytesPerSample + kStoredBytesPerRow); Verify and Profile store no samples (0). Past
/// `max_bytes` (0: no limit), InvalidArgument naming limits.max_stored_bytes_per_run, the figures
/// and what to change. The one storage limit of every kind of run, beside CheckPlanSize.
Status CheckPlanBytes(int64_t measurements, int64_t samples_per_measurement, int64_t max_bytes,
                      const char* what);

/// Tags as every kind of run takes them: 1 to 64 characters each.
Status CheckTags(const google::protobuf::RepeatedPtrField<std::string>& tags);

}  // namespace ablation::core
