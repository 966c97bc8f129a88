// The typed store of runs, measurements and verifications (tables in db/schema.md).
//
// Thread safety: every public method may be called from any thread. One Store holds one SQLite
// connection and a mutex that serialises its calls; each write is a short transaction, so the
// wait is a few milliseconds at most. Readers that must never wait behind the daemon's writes
// (dashboards, other processes, a query thread) open their own OpenReadOnly store: with WAL,
// readers and the one writer do not block each other.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "db/error.h"
#include "db/records.h"

namespace ablation::db {

class Connection;
class Statement;

class Store {
 public:
  // Opens or creates the database for writing: WAL, busy_timeout 5 s, foreign keys on,
  // synchronous FULL, then migrates to kSchemaVersion. Throws Error naming the path; a database
  // newer than this code is refused (Code::kIncompatible) and left untouched.
  static std::unique_ptr<Store> Open(const std::string& path);
  // Opens an existing database for reading only; it must be at exactly kSchemaVersion (a reader
  // cannot migrate). Write methods then throw Error(kInvalidArgument).
  static std::unique_ptr<Store> OpenReadOnly(const std::string& path);

  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  const std::string& path() const { return path_; }
  bool read_only() const { return read_only_; }

  // ---- runs. Unknown run ids throw Error(kNotFound), unknown states Error(kInvalidArgument).

  // Inserts the run and its tags in one transaction; returns the new id. run.id, ok and
  // failed are ignored; created_at_ms 0 means now. An unspecified state or kind is refused.
  int64_t CreateRun(const v1::Run& run);
  // state := running, with the device that runs it.
  void MarkRunStarted(int64_t run_id, const v1::DeviceIdentity& device, int64_t started_at_ms);
  // state must be final (succeeded, partial, failed, cancelled).
  void FinishRun(int64_t run_id, v1::RunState state, std::string_view error,
                 int64_t finished_at_ms);
  void UpdateRunState(int64_t run_id, v1::RunState state);
  // Who asked for the run to be cancelled (v15), recorded when they ask.
  void SetCancelledBy(int64_t run_id, std::string_view who);

  // ---- results. Each is its own committed transaction before returning (synchronous FULL):
  // a result is on disk as soon as it is measured, whatever happens next.

  // The row and its samples together; returns the new id. created_at_ms 0 means now. An
  // unspecified status is refused, as is an enum number its .proto does not name.
  int64_t InsertMeasurement(const v1::Measurement& measurement);
  // verification.run_id names the run; created_at_ms 0 means now.
  int64_t InsertVerification(const v1::VerifyResult& verification);

  // ---- reads. Runs come with tags and ok/failed counts. A sub-message none of whose columns
  // holds a value (a queued run's device, say) reads back unset (db/row_mapping.h); stored text
  // that names no enum value throws Error naming the column.

  std::optional<v1::Run> GetRun(int64_t run_id);
  std::optional<v1::Run> LatestRun();  // highest id
  // Newest first; keyset pagination on id.
  RunPage ListRuns(const RunFilter& filter);
  // Oldest first; keyset pagination on id.
  MeasurementPage QueryMeasurements(const MeasurementFilter& filter);
  // In run order (sequence, then id).
  std::vector<v1::Measurement> MeasurementsOfRun(int64_t run_id, bool include_samples);
  std::vector<v1::VerifyResult> VerificationsOfRun(int64_t run_id);
  // The ok measurements that match, ordered by series (fingerprint, variant, dtype, shape,
  // regime), then by the run's start and id (store_history.cc). Only ablation runs that started.
  std::vector<SeriesRow> SeriesRows(const SeriesFilter& filter);
  // Whether any measurement was ever stored of a variant matching the name or glob.
  bool VariantMeasured(const std::string& variant_glob);

  // ---- hardware counters (store_counters.cc). A measurement's counters and counters_note are
  // written by InsertMeasurement, in its transaction.

  // A Profile call's counters of one launch: rows with no run and no measurement; one
  // transaction. created_at_ms is now.
  void InsertProfiledKernel(const v1::ProfiledKernel& kernel, std::string_view device_uuid,
                            std::string_view arch);
  // Fills each measurement's counters (in the order they were read) and counters_note.
  void FillCounters(std::vector<v1::Measurement>& measurements);

  // ---- user kernels (store_user_kernels.cc; schema v13, cubins compressed since v19).

  // The kernel and its builds in one transaction; returns the kernel's id (the builds' kernel_id
  // is set). Its version, where the record gives none, is one past the highest its name has had
  // (removed ones counted); a version at or below that is refused (kInvalidArgument naming it).
  int64_t InsertUserKernel(const UserKernelRecord& kernel,
                           const std::vector<UserKernelBuild>& builds);
  // More builds of a kernel held (its knob sets compiled again by another compiler), in one
  // transaction; a build of the same variant, architecture and compiler is refused.
  void InsertUserKernelBuilds(int64_t kernel_id, const std::vector<UserKernelBuild>& builds);
  // The kernels not removed, every version, by name and version; sources and manifests included.
  std::vector<UserKernelRecord> ListUserKernels();
  // The kernel of that name and version not removed (version 0: its highest), if any.
  std::optional<UserKernelRecord> GetUserKernel(std::string_view name, int64_t version = 0);
  // Its builds, by variant (cubins included only with `with_cubins`).
  std::vector<UserKernelBuild> UserKernelBuilds(int64_t kernel_id, bool with_cubins);
  /// The builds of these ids with their kernel's name and digests (a run's rows point at them);
  /// ids with no build are left out.
  std::vector<v1::UserBuildIdentity> UserBuildIdentities(const std::vector<int64_t>& ids);
  // One build's cubin, decompressed; "" when there is no such build. Read when a task needs it:
  // the daemon holds its kernels' builds here, not in memory.
  std::string UserKernelCubin(int64_t build_id);
  // Marks the kernel of that name removed, that version of it or (0) every version (never
  // deleted: measurements keep pointing at its builds); false when there is none.
  bool RemoveUserKernel(std::string_view name, int64_t removed_at_ms, int64_t version = 0);

  // ---- library baselines' chosen algorithms (store_library.cc; schema v18).

  // The choice for this device, library version, variant and problem, if one was made.
  std::optional<LibraryChoiceRecord> FindLibraryChoice(const LibraryChoiceRecord& key);
  // Keeps a choice; the first one made for a key stays (an equal key is ignored, so two windows
  // that chose at once cannot make later runs launch different algorithms). Returns whether it
  // was kept.
  bool SaveLibraryChoice(const LibraryChoiceRecord& choice);

  // ---- a fleet's export (store_fleet.cc; schema v17). A run is enqueued in the outbox by the
  // statement that makes it final (a trigger: db/schema.md), so in that same transaction.

  // This database's daemon identity: 32 hex digits made once, when it was migrated to v17.
  std::string DaemonId();
  // Up to `limit` runs waiting to be exported, oldest enqueued first.
  std::vector<OutboxEntry> PendingExports(int limit);
  // Rows in the outbox, and the oldest one's enqueue time (0 when empty).
  OutboxBacklog ExportBacklog();
  // The run reached the fleet database (after its commit there): its row leaves the outbox.
  void MarkExported(int64_t run_id);
  // An attempt failed: the row stays, counting attempts and keeping the last error.
  void RecordExportFailure(int64_t run_id, std::string_view error);

  // ---- recovery.

  std::vector<int64_t> RunsInState(v1::RunState state);  // ascending ids
  // At daemon start: runs left queued or running by a daemon that died become failed, with
  // reason appended to their error and finished_at_ms set; never deleted, their measurements
  // kept. Returns the ids so marked.
  std::vector<int64_t> MarkInterruptedRuns(int64_t finished_at_ms, std::string_view reason);

 private:
  Store(std::unique_ptr<Connection> connection, bool read_only);

  // The statement for sql, prepared on first use and kept for the connection's life. Callers
  // wrap it in a StatementScope so it is reset whatever happens.
  Statement& Prepared(const std::string& sql);
  void RequireWritable(std::string_view what) const;
  // True when `sql` (binding `text` once) returns a row: a filter that matches nothing ends a
  // listing before its scan.
  bool Exists(const std::string& sql, const std::string& text);
  void RequireRunExists(int64_t run_id);
  void UpdateOneRun(int64_t run_id, std::string_view what);  // throws kNotFound if 0 rows
  std::optional<v1::Run> ReadOneRun(const std::string& sql, int64_t bind_id);
  void FillTags(v1::Run& run);
  // The counters rows of a measurement being inserted (its transaction is open).
  void WriteMeasurementCounters(int64_t measurement_id, const v1::Measurement& measurement);
  // A user kernel's builds (its transaction is open; `now` where a build has no time).
  void InsertBuilds(int64_t kernel_id, const std::vector<UserKernelBuild>& builds, int64_t now);

  std::mutex mutex_;  // guards everything below, and the connection's use
  std::unique_ptr<Connection> connection_;
  std::unordered_map<std::string, std::unique_ptr<Statement>> statements_;
  std::string path_;
  bool read_only_;
};

}  // namespace ablation::db
