// The fleet export: a thread that drains the outbox of the daemon's SQLite (db::Store, schema v17)
// into the fleet's PostgreSQL (db/fleet/), oldest first, one PostgreSQL transaction per run. A
// run's outbox row is deleted only after PostgreSQL committed it, and the export is idempotent
// by (daemon id, run id): so at least once, never twice. While the database is away nothing is
// lost (the rows wait in SQLite, which a restart keeps); the exporter retries with a doubling
// backoff, logs the outage once (and the catch-up), and keeps ablationd_fleet_* metrics.
//
// After a run is committed (or found already there), the exporter recomputes the change points of
// every series the run has a point in, over the whole fleet (db/fleet/fleet_change_points.h). A
// failure there never touches the run's export: it is logged, and the series left behind are
// found (fleet_change_point_series against fleet_points) and computed on a later pass, as they are
// after every (re)connection: a database migrated from schema v1 is filled so.
#pragma once

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "db/fleet/fleet_writer.h"
#include "db/store.h"
#include "server/core/base/events.h"

namespace ablation::core {

struct FleetExportOptions {
  std::string conninfo;  ///< libpq's connection string (checked: db/fleet/conninfo.h)
  std::string host_name;
  std::string node_labels;
  /// How often the outbox is looked at when it was empty (a run finishing fills it).
  std::chrono::milliseconds poll{1000};
  std::chrono::milliseconds min_backoff{500};
  std::chrono::milliseconds max_backoff{60000};
  int batch = 32;  ///< runs read from the outbox at a time
};

class FleetExporter {
 public:
  /// Starts the thread; `store` (the daemon's writer: the outbox's deletes) must outlive the
  /// exporter. Runs are read through a read-only connection of the exporter's own, so that
  /// reading a large run never holds the writer's lock against the run path. The fleet database
  /// is not reached here: one that is away at start is an outage like any other.
  /// `events` hears the outbox's size and each export (the daemon's metrics); null: NoEvents().
  FleetExporter(FleetExportOptions options, db::Store* store, DaemonEvents* events = nullptr);
  ~FleetExporter();  ///< Stop()
  FleetExporter(const FleetExporter&) = delete;
  FleetExporter& operator=(const FleetExporter&) = delete;

  /// Ends the thread after the run being exported (if any). Idempotent.
  void Stop();

 private:
  void Loop();
  /// One pass over a batch: the runs exported, or -1 when the database is away.
  int ExportBatch();
  bool Connect();
  void Wait(std::chrono::milliseconds how_long);
  void NoteFailure(const std::string& error);
  /// The change points of the run's series; a failure logged, and marks stale_ (never throws).
  void UpdateChangePoints(int64_t run_id);
  /// Computes the series left behind (fleet::StaleSeries); false when it failed.
  bool UpdateStaleChangePoints();

  const FleetExportOptions options_;
  db::Store* store_;  // writes: MarkExported, RecordExportFailure
  DaemonEvents& events_;
  std::unique_ptr<db::Store> reader_;  // reads: the outbox, the runs
  fleet::DaemonIdentity identity_;
  std::unique_ptr<fleet::PgConnection> connection_;  // only the thread touches it
  bool down_ = false;                                // an outage is being reported
  int64_t exported_since_down_ = 0;
  bool stale_ = true;  // series may be left behind: look for them (each connection, a failure)

  std::mutex mu_;
  std::condition_variable wake_;
  bool stop_ = false;  // guarded by mu_
  std::thread thread_;
};

}  // namespace ablation::core
