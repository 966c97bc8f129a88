#include "db/migrations.h"

#include <string>

#include "db/error.h"

namespace ablation::db {
namespace {

// v1: runs and their measurements with timing statistics.
void MigrateV1(Connection& c) {
  c.Exec(R"sql(
CREATE TABLE runs (
  id                   INTEGER PRIMARY KEY,
  state                TEXT    NOT NULL CHECK (state IN ('queued', 'running', 'succeeded',
                                                         'partial', 'failed', 'cancelled')),
  device_index         INTEGER NOT NULL DEFAULT 0,
  device_name          TEXT    NOT NULL DEFAULT '',
  device_uuid          TEXT    NOT NULL DEFAULT '',
  compute_capability   TEXT    NOT NULL DEFAULT '',
  sm_count             INTEGER NOT NULL DEFAULT 0,
  driver_version       TEXT    NOT NULL DEFAULT '',
  cuda_runtime_version TEXT    NOT NULL DEFAULT '',
  cublas_version       TEXT    NOT NULL DEFAULT '',
  memory_bytes         INTEGER NOT NULL DEFAULT 0,
  daemon_version       TEXT    NOT NULL DEFAULT '',
  git_revision         TEXT    NOT NULL DEFAULT '',
  request_json         TEXT    NOT NULL DEFAULT '',
  requested_by         TEXT    NOT NULL DEFAULT '',
  created_at_ms        INTEGER NOT NULL,
  started_at_ms        INTEGER,
  finished_at_ms       INTEGER,
  error                TEXT    NOT NULL DEFAULT '',
  planned              INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX runs_state ON runs (state);

CREATE TABLE measurements (
  id            INTEGER PRIMARY KEY,
  run_id        INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  sequence      INTEGER NOT NULL,
  variant       TEXT    NOT NULL,
  dtype         TEXT    NOT NULL,
  m             INTEGER NOT NULL,
  n             INTEGER NOT NULL,
  k             INTEGER NOT NULL,
  status        TEXT    NOT NULL CHECK (status IN ('ok', 'failed', 'skipped')),
  error         TEXT    NOT NULL DEFAULT '',
  median_ms     REAL    NOT NULL DEFAULT 0,
  mean_ms       REAL    NOT NULL DEFAULT 0,
  stddev_ms     REAL    NOT NULL DEFAULT 0,
  min_ms        REAL    NOT NULL DEFAULT 0,
  max_ms        REAL    NOT NULL DEFAULT 0,
  q1_ms         REAL    NOT NULL DEFAULT 0,
  q3_ms         REAL    NOT NULL DEFAULT 0,
  samples       INTEGER NOT NULL DEFAULT 0,
  noise         REAL    NOT NULL DEFAULT 0,
  tflops        REAL    NOT NULL DEFAULT 0,
  created_at_ms INTEGER NOT NULL
);
CREATE INDEX measurements_run ON measurements (run_id, sequence);
CREATE INDEX measurements_variant ON measurements (variant, dtype, m, n, k);
CREATE INDEX measurements_created ON measurements (created_at_ms);

PRAGMA user_version = 1;
)sql");
}

// v2: telemetry, occupancy, clocks, L2 mode and verification text per measurement; the raw
// samples; verification results; run tags and kinds; the device's cache sizes.
void MigrateV2(Connection& c) {
  c.Exec(R"sql(
ALTER TABLE runs ADD COLUMN kind TEXT NOT NULL DEFAULT 'ablation'
  CHECK (kind IN ('ablation', 'verify'));
ALTER TABLE runs ADD COLUMN clock_policy TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN l2_bytes INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN smem_per_block_optin INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN smem_per_sm INTEGER NOT NULL DEFAULT 0;

ALTER TABLE measurements ADD COLUMN total_seconds REAL;
ALTER TABLE measurements ADD COLUMN l2 TEXT NOT NULL DEFAULT '';
ALTER TABLE measurements ADD COLUMN clock_policy TEXT NOT NULL DEFAULT '';
ALTER TABLE measurements ADD COLUMN verification TEXT NOT NULL DEFAULT '';
ALTER TABLE measurements ADD COLUMN telemetry_available INTEGER NOT NULL DEFAULT 0;
ALTER TABLE measurements ADD COLUMN telemetry_note TEXT NOT NULL DEFAULT '';
ALTER TABLE measurements ADD COLUMN sm_clock_mhz_mean REAL;
ALTER TABLE measurements ADD COLUMN sm_clock_mhz_min REAL;
ALTER TABLE measurements ADD COLUMN sm_clock_mhz_max REAL;
ALTER TABLE measurements ADD COLUMN mem_clock_mhz_mean REAL;
ALTER TABLE measurements ADD COLUMN mem_clock_mhz_min REAL;
ALTER TABLE measurements ADD COLUMN mem_clock_mhz_max REAL;
ALTER TABLE measurements ADD COLUMN power_w_mean REAL;
ALTER TABLE measurements ADD COLUMN power_w_min REAL;
ALTER TABLE measurements ADD COLUMN power_w_max REAL;
ALTER TABLE measurements ADD COLUMN temperature_c_mean REAL;
ALTER TABLE measurements ADD COLUMN temperature_c_min REAL;
ALTER TABLE measurements ADD COLUMN temperature_c_max REAL;
ALTER TABLE measurements ADD COLUMN throttle_reasons TEXT NOT NULL DEFAULT '';
ALTER TABLE measurements ADD COLUMN throttled_samples INTEGER;
ALTER TABLE measurements ADD COLUMN registers_per_thread INTEGER;
ALTER TABLE measurements ADD COLUMN static_smem_bytes INTEGER;
ALTER TABLE measurements ADD COLUMN dynamic_smem_bytes INTEGER;
ALTER TABLE measurements ADD COLUMN local_bytes_per_thread INTEGER;
ALTER TABLE measurements ADD COLUMN max_blocks_per_sm INTEGER;
ALTER TABLE measurements ADD COLUMN max_warps_per_sm INTEGER;
ALTER TABLE measurements ADD COLUMN theoretical_occupancy REAL;
ALTER TABLE measurements ADD COLUMN limiter TEXT NOT NULL DEFAULT '';
ALTER TABLE measurements ADD COLUMN threads_per_block INTEGER;

-- v1 recorded none of this; say so rather than let a dashboard read "no telemetry" as a fault.
UPDATE measurements SET telemetry_note = 'not recorded: measured before schema v2';

CREATE INDEX measurements_shape ON measurements (m, n, k, dtype);

-- One row per measurement that has samples: sample_ms is sample_count little-endian IEEE-754
-- doubles, in measured order. Apart from measurements so that scans of the statistics stay
-- small.
CREATE TABLE measurement_samples (
  measurement_id INTEGER PRIMARY KEY REFERENCES measurements (id) ON DELETE CASCADE,
  sample_count   INTEGER NOT NULL,
  sample_ms      BLOB    NOT NULL
);

CREATE TABLE verifications (
  id              INTEGER PRIMARY KEY,
  run_id          INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  variant         TEXT    NOT NULL,
  dtype           TEXT    NOT NULL,
  m               INTEGER NOT NULL,
  n               INTEGER NOT NULL,
  k               INTEGER NOT NULL,
  against         TEXT    NOT NULL DEFAULT '',
  max_abs         REAL    NOT NULL DEFAULT 0,
  max_rel         REAL    NOT NULL DEFAULT 0,
  rel_frobenius   REAL    NOT NULL DEFAULT 0,
  mismatches      INTEGER NOT NULL DEFAULT 0,
  nan_count       INTEGER NOT NULL DEFAULT 0,
  unwritten_count INTEGER NOT NULL DEFAULT 0,
  tolerance       REAL    NOT NULL DEFAULT 0,
  passed          INTEGER NOT NULL CHECK (passed IN (0, 1)),
  error           TEXT    NOT NULL DEFAULT '',
  created_at_ms   INTEGER NOT NULL
);
CREATE INDEX verifications_run ON verifications (run_id);
CREATE INDEX verifications_variant ON verifications (variant, dtype, m, n, k);

CREATE TABLE run_tags (
  run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  tag    TEXT    NOT NULL,
  UNIQUE (run_id, tag)
);
CREATE INDEX run_tags_tag ON run_tags (tag, run_id);

PRAGMA user_version = 2;
)sql");
}

// v3: rates besides TFLOPS, for variants whose work is not (only) a GEMM's arithmetic: the
// smem2reg micro-benchmarks' bytes and fragment loads per second. NULL in older rows and where
// the variant does not model them.
void MigrateV3(Connection& c) {
  c.Exec(R"sql(
ALTER TABLE measurements ADD COLUMN bytes_per_second REAL;
ALTER TABLE measurements ADD COLUMN fragment_loads_per_second REAL;

PRAGMA user_version = 3;
)sql");
}

}  // namespace

int SchemaVersion(Connection& connection) {
  return static_cast<int>(connection.QueryInt("PRAGMA user_version"));
}

void RefuseNewerSchema(Connection& connection) {
  const int version = SchemaVersion(connection);
  if (version > kSchemaVersion) {
    throw Error(Error::Code::kIncompatible,
                "database '" + connection.path() + "' has schema version " +
                    std::to_string(version) + ", newer than version " +
                    std::to_string(kSchemaVersion) +
                    " that this ablationd knows; it was left untouched: upgrade ablationd or "
                    "point it at another database");
  }
}

void Migrate(Connection& connection) {
  Transaction transaction(connection, Transaction::Kind::kImmediate);
  // Read again under the write lock: another process may have migrated since we looked.
  RefuseNewerSchema(connection);
  const int version = SchemaVersion(connection);
  if (version == kSchemaVersion) return;  // nothing to do; the destructor ends the transaction
  if (version < 1) MigrateV1(connection);
  if (version < 2) MigrateV2(connection);
  if (version < 3) MigrateV3(connection);
  transaction.Commit();
}

}  // namespace ablation::db
