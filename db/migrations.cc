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

// v4: views for dashboards and other tools that read the file (read-only) while the daemon
// writes: latest_result, nightly_history, nightly_change, run_summary (db/schema.md). Views only:
// no table changes, nothing to backfill. Plain SQL that any SQLite 3 reader parses (no window
// functions): a reader whose SQLite cannot parse a view cannot open the file at all. To change a
// view later, add a migration that drops and recreates it; never edit this one.
void MigrateV4(Connection& c) {
  c.Exec(R"sql(
-- latest_result: the newest ok measurement of each variant x dtype x shape.
CREATE VIEW latest_result AS
SELECT ms.variant, ms.dtype, ms.m, ms.n, ms.k,
       ms.run_id, ms.id AS measurement_id,
       r.device_name, r.device_uuid, r.device_index,
       ms.tflops, ms.median_ms, ms.noise, ms.samples, ms.bytes_per_second,
       ms.l2, ms.clock_policy, ms.verification,
       ms.created_at_ms,
       strftime('%Y-%m-%dT%H:%M:%fZ', ms.created_at_ms / 1000.0, 'unixepoch') AS time
FROM measurements AS ms
JOIN runs AS r ON r.id = ms.run_id
WHERE ms.status = 'ok'
  AND NOT EXISTS (SELECT 1 FROM measurements AS newer
                  WHERE newer.variant = ms.variant AND newer.dtype = ms.dtype
                    AND newer.m = ms.m AND newer.n = ms.n AND newer.k = ms.k
                    AND newer.status = 'ok' AND newer.id > ms.id);

-- nightly_history: every ok measurement of the runs tagged nightly.
CREATE VIEW nightly_history AS
SELECT ms.variant, ms.dtype, ms.m, ms.n, ms.k,
       ms.run_id, ms.id AS measurement_id,
       coalesce(r.started_at_ms, r.created_at_ms) AS run_started_at_ms,
       strftime('%Y-%m-%dT%H:%M:%fZ', coalesce(r.started_at_ms, r.created_at_ms) / 1000.0,
                'unixepoch') AS time,
       ms.tflops, ms.median_ms, ms.noise, ms.samples,
       r.device_name, r.device_uuid, r.state AS run_state, r.git_revision, r.daemon_version,
       ms.created_at_ms
FROM measurements AS ms
JOIN runs AS r ON r.id = ms.run_id
WHERE ms.status = 'ok'
  AND ms.run_id IN (SELECT run_id FROM run_tags WHERE tag = 'nightly');

-- nightly_change: per variant x dtype x shape x GPU, the newest nightly result beside the one
-- of the nightly run before it.
CREATE VIEW nightly_change AS
SELECT cur.variant, cur.dtype, cur.m, cur.n, cur.k, cur.device_uuid, cur.device_name,
       cur.run_id, cur.time, cur.tflops, cur.median_ms, cur.noise,
       prev.run_id AS previous_run_id, prev.time AS previous_time,
       prev.tflops AS previous_tflops, prev.median_ms AS previous_median_ms,
       prev.noise AS previous_noise,
       CASE WHEN prev.median_ms > 0 THEN cur.median_ms / prev.median_ms - 1.0 END AS slowdown
FROM nightly_history AS cur
LEFT JOIN nightly_history AS prev
  ON prev.measurement_id = (
       SELECT max(p.measurement_id) FROM nightly_history AS p
       WHERE p.variant = cur.variant AND p.dtype = cur.dtype AND p.m = cur.m AND p.n = cur.n
         AND p.k = cur.k AND p.device_uuid = cur.device_uuid AND p.run_id < cur.run_id)
WHERE cur.measurement_id = (
       SELECT max(c.measurement_id) FROM nightly_history AS c
       WHERE c.variant = cur.variant AND c.dtype = cur.dtype AND c.m = cur.m AND c.n = cur.n
         AND c.k = cur.k AND c.device_uuid = cur.device_uuid);

-- run_summary: one row per run with its progress and outcome.
CREATE VIEW run_summary AS
SELECT r.id AS run_id, r.kind, r.state,
       (SELECT group_concat(tag, ',') FROM (SELECT tag FROM run_tags AS t
                                             WHERE t.run_id = r.id ORDER BY tag)) AS tags,
       r.device_index, r.device_name, r.device_uuid, r.requested_by, r.clock_policy,
       r.daemon_version, r.git_revision,
       r.created_at_ms, r.started_at_ms, r.finished_at_ms,
       strftime('%Y-%m-%dT%H:%M:%fZ', r.created_at_ms / 1000.0, 'unixepoch') AS time,
       (r.finished_at_ms - r.started_at_ms) / 1000.0 AS duration_s,
       r.planned,
       (SELECT count(*) FROM measurements AS ms WHERE ms.run_id = r.id) AS measured,
       (SELECT count(*) FROM measurements AS ms WHERE ms.run_id = r.id AND ms.status = 'ok') AS ok,
       (SELECT count(*) FROM measurements AS ms
        WHERE ms.run_id = r.id AND ms.status = 'failed') AS failed,
       (SELECT count(*) FROM measurements AS ms
        WHERE ms.run_id = r.id AND ms.status = 'skipped') AS skipped,
       (SELECT count(*) FROM verifications AS v WHERE v.run_id = r.id) AS verified,
       (SELECT count(*) FROM verifications AS v WHERE v.run_id = r.id AND v.passed = 0)
         AS verify_failed,
       (SELECT max(ms.tflops) FROM measurements AS ms
        WHERE ms.run_id = r.id AND ms.status = 'ok') AS best_tflops,
       r.error
FROM runs AS r;

PRAGMA user_version = 4;
)sql");
}

// v5: the typed verification reference and measurement outcome that ablation.v1 now carries as
// enums (VerifyResult.reference / reference_variant, Measurement.verification_outcome), stored as
// their EnumText. Backfilled from the text older rows have: `against` ('cpu', 'cublas' or a
// variant's name) and `verification` ('passed', 'failed ...', 'not checked: ...'). `against`
// stays, written from the typed reference, for the dashboards that read it. No CHECK on the new
// columns: a new enum value must not need a table rebuild; the store refuses text it does not
// know when reading. The views read none of these columns and stay as v4 made them.
void MigrateV5(Connection& c) {
  c.Exec(R"sql(
ALTER TABLE verifications ADD COLUMN reference TEXT NOT NULL DEFAULT '';
ALTER TABLE verifications ADD COLUMN reference_variant TEXT NOT NULL DEFAULT '';
-- '' names no reference (it was never written by a daemon, but an empty text is no variant).
UPDATE verifications SET
  reference = CASE against WHEN 'cpu' THEN 'cpu' WHEN 'cublas' THEN 'cublas' WHEN '' THEN ''
                           ELSE 'variant' END,
  reference_variant = CASE WHEN against IN ('cpu', 'cublas', '') THEN '' ELSE against END;

ALTER TABLE measurements ADD COLUMN verification_outcome TEXT NOT NULL DEFAULT '';
-- Any other text (none was ever written) stays '': not known to have been checked.
UPDATE measurements SET verification_outcome =
  CASE WHEN verification = 'passed' THEN 'passed'
       WHEN verification LIKE 'failed%' THEN 'failed'
       WHEN verification LIKE 'not checked%' THEN 'not_checked'
       ELSE '' END
WHERE verification != '';

PRAGMA user_version = 5;
)sql");
}

// v6: the wall time of each measurement (Measurement.wall_seconds); NULL in older rows.
void MigrateV6(Connection& c) {
  c.Exec(R"sql(
ALTER TABLE measurements ADD COLUMN wall_seconds REAL;
PRAGMA user_version = 6;
)sql");
}

// v7: rounds (each item measured once per round, in a shuffled order) and clock-independent
// time (each sample's SM cycles and effective SM clock). Older rows are round 0 of one round.
void MigrateV7(Connection& c) {
  c.Exec(R"sql(
ALTER TABLE runs ADD COLUMN rounds INTEGER NOT NULL DEFAULT 1;
ALTER TABLE runs ADD COLUMN order_seed INTEGER NOT NULL DEFAULT 0;
ALTER TABLE measurements ADD COLUMN round INTEGER NOT NULL DEFAULT 0;
ALTER TABLE measurements ADD COLUMN median_cycles REAL;
ALTER TABLE measurements ADD COLUMN median_sm_mhz REAL;
ALTER TABLE measurements ADD COLUMN low_clock_samples INTEGER;
ALTER TABLE measurement_samples ADD COLUMN sample_cycles BLOB NOT NULL DEFAULT x'';
ALTER TABLE measurement_samples ADD COLUMN sample_sm_mhz BLOB NOT NULL DEFAULT x'';
PRAGMA user_version = 7;
)sql");
}

// v8: dashboards that answer in milliseconds at millions of rows, keyed by GPU. The v4 views
// computed "the newest row of each key" with correlated subqueries over every measurement (3.9 s
// for latest_result, 6.1 s for nightly_change at one million rows); now small tables kept by
// triggers name those rows, and the views join them to theirs. The key gains device_uuid: a run
// on another GPU no longer replaces this GPU's latest result. Indexes for run_summary's counts,
// and a table of the variant names measured, so that a variant glob is matched against a few
// hundred names instead of every row (a glob that matches nothing ends at once). The tables are
// filled from the existing rows here, once.
void MigrateV8(Connection& c) {
  c.Exec(R"sql(
CREATE INDEX measurements_run_status ON measurements (run_id, status, tflops);
CREATE INDEX verifications_run_passed ON verifications (run_id, passed);
CREATE INDEX runs_created ON runs (created_at_ms);

CREATE TABLE measured_variants (variant TEXT PRIMARY KEY) WITHOUT ROWID;
INSERT INTO measured_variants SELECT DISTINCT variant FROM measurements;

-- The newest ok measurement of each variant x dtype x shape x GPU.
CREATE TABLE latest_ok (
  variant TEXT NOT NULL, dtype TEXT NOT NULL, m INTEGER NOT NULL, n INTEGER NOT NULL,
  k INTEGER NOT NULL, device_uuid TEXT NOT NULL,
  measurement_id INTEGER NOT NULL,
  PRIMARY KEY (variant, dtype, m, n, k, device_uuid)
) WITHOUT ROWID;
INSERT INTO latest_ok
SELECT ms.variant, ms.dtype, ms.m, ms.n, ms.k, r.device_uuid, max(ms.id)
FROM measurements AS ms JOIN runs AS r ON r.id = ms.run_id
WHERE ms.status = 'ok'
GROUP BY ms.variant, ms.dtype, ms.m, ms.n, ms.k, r.device_uuid;

-- Per key, the newest ok measurement of a nightly run and the newest one of an earlier nightly
-- run. Runs on one GPU do not overlap, so measurement ids grow with run ids within a key.
CREATE TABLE nightly_latest (
  variant TEXT NOT NULL, dtype TEXT NOT NULL, m INTEGER NOT NULL, n INTEGER NOT NULL,
  k INTEGER NOT NULL, device_uuid TEXT NOT NULL,
  run_id INTEGER NOT NULL, measurement_id INTEGER NOT NULL,
  previous_measurement_id INTEGER,
  PRIMARY KEY (variant, dtype, m, n, k, device_uuid)
) WITHOUT ROWID;
WITH cur AS (
  SELECT ms.variant, ms.dtype, ms.m, ms.n, ms.k, r.device_uuid, max(ms.id) AS id
  FROM measurements AS ms JOIN runs AS r ON r.id = ms.run_id
  WHERE ms.status = 'ok' AND ms.run_id IN (SELECT run_id FROM run_tags WHERE tag = 'nightly')
  GROUP BY ms.variant, ms.dtype, ms.m, ms.n, ms.k, r.device_uuid)
INSERT INTO nightly_latest
SELECT cur.variant, cur.dtype, cur.m, cur.n, cur.k, cur.device_uuid, c.run_id, cur.id,
       (SELECT max(p.id) FROM measurements AS p JOIN runs AS pr ON pr.id = p.run_id
        WHERE p.variant = cur.variant AND p.dtype = cur.dtype AND p.m = cur.m AND p.n = cur.n
          AND p.k = cur.k AND p.status = 'ok' AND pr.device_uuid = cur.device_uuid
          AND p.run_id < c.run_id
          AND p.run_id IN (SELECT run_id FROM run_tags WHERE tag = 'nightly'))
FROM cur JOIN measurements AS c ON c.id = cur.id;

CREATE TRIGGER measurements_keep_dashboards AFTER INSERT ON measurements
BEGIN
  INSERT OR IGNORE INTO measured_variants (variant) VALUES (NEW.variant);
  INSERT INTO latest_ok
  SELECT NEW.variant, NEW.dtype, NEW.m, NEW.n, NEW.k, r.device_uuid, NEW.id
  FROM runs AS r WHERE r.id = NEW.run_id AND NEW.status = 'ok'
  ON CONFLICT (variant, dtype, m, n, k, device_uuid) DO UPDATE
    SET measurement_id = excluded.measurement_id
    WHERE excluded.measurement_id > latest_ok.measurement_id;
  INSERT INTO nightly_latest
  SELECT NEW.variant, NEW.dtype, NEW.m, NEW.n, NEW.k, r.device_uuid, NEW.run_id, NEW.id, NULL
  FROM runs AS r
  WHERE r.id = NEW.run_id AND NEW.status = 'ok'
    AND EXISTS (SELECT 1 FROM run_tags AS t WHERE t.run_id = NEW.run_id AND t.tag = 'nightly')
  ON CONFLICT (variant, dtype, m, n, k, device_uuid) DO UPDATE
    SET previous_measurement_id =
          CASE WHEN excluded.run_id > nightly_latest.run_id THEN nightly_latest.measurement_id
               ELSE nightly_latest.previous_measurement_id END,
        run_id = excluded.run_id, measurement_id = excluded.measurement_id
    WHERE excluded.measurement_id > nightly_latest.measurement_id;
END;

-- Rows go only with their run (ON DELETE CASCADE); whatever pointed at them goes too, and the
-- next newest takes its place.
CREATE TRIGGER measurements_forget_dashboards AFTER DELETE ON measurements
BEGIN
  DELETE FROM latest_ok WHERE measurement_id = OLD.id;
  INSERT OR IGNORE INTO latest_ok
  SELECT ms.variant, ms.dtype, ms.m, ms.n, ms.k, r.device_uuid, max(ms.id)
  FROM measurements AS ms JOIN runs AS r ON r.id = ms.run_id
  WHERE ms.variant = OLD.variant AND ms.dtype = OLD.dtype AND ms.m = OLD.m AND ms.n = OLD.n
    AND ms.k = OLD.k AND ms.status = 'ok'
  GROUP BY r.device_uuid;
  -- (A nightly row whose measurement goes is dropped, not recomputed: only deleting whole runs
  -- by hand does that, and the next night fills it again.)
  UPDATE nightly_latest SET previous_measurement_id = NULL WHERE previous_measurement_id = OLD.id;
  DELETE FROM nightly_latest WHERE measurement_id = OLD.id;
END;

DROP VIEW latest_result;
CREATE VIEW latest_result AS
SELECT ms.variant, ms.dtype, ms.m, ms.n, ms.k,
       ms.run_id, ms.id AS measurement_id,
       r.device_name, l.device_uuid, r.device_index,
       ms.tflops, ms.median_ms, ms.noise, ms.samples, ms.bytes_per_second,
       ms.l2, ms.clock_policy, ms.verification,
       ms.created_at_ms,
       strftime('%Y-%m-%dT%H:%M:%fZ', ms.created_at_ms / 1000.0, 'unixepoch') AS time
FROM latest_ok AS l
JOIN measurements AS ms ON ms.id = l.measurement_id
JOIN runs AS r ON r.id = ms.run_id;

DROP VIEW nightly_change;
CREATE VIEW nightly_change AS
SELECT cur.variant, cur.dtype, cur.m, cur.n, cur.k, nl.device_uuid, cr.device_name,
       cur.run_id,
       strftime('%Y-%m-%dT%H:%M:%fZ', coalesce(cr.started_at_ms, cr.created_at_ms) / 1000.0,
                'unixepoch') AS time,
       cur.tflops, cur.median_ms, cur.noise,
       prev.run_id AS previous_run_id,
       strftime('%Y-%m-%dT%H:%M:%fZ', coalesce(pr.started_at_ms, pr.created_at_ms) / 1000.0,
                'unixepoch') AS previous_time,
       prev.tflops AS previous_tflops, prev.median_ms AS previous_median_ms,
       prev.noise AS previous_noise,
       CASE WHEN prev.median_ms > 0 THEN cur.median_ms / prev.median_ms - 1.0 END AS slowdown
FROM nightly_latest AS nl
JOIN measurements AS cur ON cur.id = nl.measurement_id
JOIN runs AS cr ON cr.id = cur.run_id
LEFT JOIN measurements AS prev ON prev.id = nl.previous_measurement_id
LEFT JOIN runs AS pr ON pr.id = prev.run_id;

PRAGMA user_version = 8;
)sql");
}

// v9: hardware counters (Nsight Compute), one row per metric of a profiled launch: a run's
// measurement (`run --profile`) or a Profile call's launch (no run, no measurement: both NULL).
// metric is the concept, the same on every architecture; ncu_name what that architecture's
// ncu calls it; value in unit, NULL where the tool gave none (note says why). A row with metric
// '' only carries a note: why that measurement has no counters (profiling refused). Plus the
// latest_counters view. Touches no earlier table or view (v8's are another change's).
void MigrateV9(Connection& c) {
  c.Exec(R"sql(
CREATE TABLE counters (
  id             INTEGER PRIMARY KEY,
  measurement_id INTEGER REFERENCES measurements (id) ON DELETE CASCADE,
  run_id         INTEGER REFERENCES runs (id) ON DELETE CASCADE,
  variant        TEXT    NOT NULL,
  dtype          TEXT    NOT NULL,
  m              INTEGER NOT NULL,
  n              INTEGER NOT NULL,
  k              INTEGER NOT NULL,
  device_uuid    TEXT    NOT NULL DEFAULT '',
  arch           TEXT    NOT NULL DEFAULT '',
  metric         TEXT    NOT NULL,
  ncu_name       TEXT    NOT NULL DEFAULT '',
  value          REAL,
  unit           TEXT    NOT NULL DEFAULT '',
  tool           TEXT    NOT NULL DEFAULT '',
  tool_version   TEXT    NOT NULL DEFAULT '',
  note           TEXT    NOT NULL DEFAULT '',
  created_at_ms  INTEGER NOT NULL
);
CREATE INDEX counters_measurement ON counters (measurement_id);
CREATE INDEX counters_run ON counters (run_id);
CREATE INDEX counters_kernel ON counters (variant, dtype, m, n, k, metric, device_uuid);

-- latest_counters: per variant x dtype x shape x GPU x metric, the newest value read (from a
-- run or a Profile call), with the run's measurement beside it when there is one.
CREATE VIEW latest_counters AS
SELECT c.variant, c.dtype, c.m, c.n, c.k, c.device_uuid, c.arch,
       c.metric, c.ncu_name, c.value, c.unit, c.tool, c.tool_version, c.note,
       c.run_id, c.measurement_id, ms.median_ms, ms.tflops,
       c.created_at_ms,
       strftime('%Y-%m-%dT%H:%M:%fZ', c.created_at_ms / 1000.0, 'unixepoch') AS time
FROM counters AS c
LEFT JOIN measurements AS ms ON ms.id = c.measurement_id
WHERE c.metric != ''
  AND NOT EXISTS (SELECT 1 FROM counters AS newer
                  WHERE newer.variant = c.variant AND newer.dtype = c.dtype
                    AND newer.m = c.m AND newer.n = c.n AND newer.k = c.k
                    AND newer.metric = c.metric AND newer.device_uuid = c.device_uuid
                    AND newer.id > c.id);

PRAGMA user_version = 9;
)sql");
}

// v10: where each measurement's wall time went (Measurement.cost: the worker's share, the inputs'
// setup, the warm-up, the sampling loop, the verification, and whether resident inputs served
// it), NULL in older rows; and run_cost, the same summed per run beside the GPU time sampled and
// the run's own duration. Touches no earlier table or view.
void MigrateV10(Connection& c) {
  c.Exec(R"sql(
ALTER TABLE measurements ADD COLUMN worker_seconds REAL;
ALTER TABLE measurements ADD COLUMN setup_seconds REAL;
ALTER TABLE measurements ADD COLUMN warmup_seconds REAL;
ALTER TABLE measurements ADD COLUMN sampling_seconds REAL;
ALTER TABLE measurements ADD COLUMN verify_seconds REAL;
ALTER TABLE measurements ADD COLUMN inputs_reused INTEGER;

-- run_cost: per run, the wall time against the GPU time sampled, and where it went.
CREATE VIEW run_cost AS
SELECT r.id AS run_id, r.state, r.rounds,
       (r.finished_at_ms - r.started_at_ms) / 1000.0 AS run_seconds,
       count(ms.id) AS measurements,
       sum(ms.total_seconds) AS sampled_gpu_seconds,
       sum(ms.wall_seconds) AS wall_seconds,
       sum(ms.worker_seconds) AS worker_seconds,
       sum(ms.setup_seconds) AS setup_seconds,
       sum(ms.warmup_seconds) AS warmup_seconds,
       sum(ms.sampling_seconds) AS sampling_seconds,
       sum(ms.verify_seconds) AS verify_seconds,
       sum(ms.inputs_reused) AS inputs_reused,
       CASE WHEN sum(ms.total_seconds) > 0
            THEN (r.finished_at_ms - r.started_at_ms) / 1000.0 / sum(ms.total_seconds) END
         AS run_per_gpu_second
FROM runs AS r
LEFT JOIN measurements AS ms ON ms.run_id = r.id
GROUP BY r.id;

PRAGMA user_version = 10;
)sql");
}

// v11: power regimes (Measurement.regime and what conditioning found and cost), the paired window
// a row was measured in, clock-normalised throughput; the run's regime. Rows of different
// regimes are never compared, so the dashboards' keys gain the regime: latest_ok and
// nightly_latest are rebuilt with it (older rows have no regime: a series of their
// own, regime ''), their triggers and the views on them recreated, and the views show the regime
// beside every figure. run_cost adds settling and cooling.
void MigrateV11(Connection& c) {
  c.Exec(R"sql(
ALTER TABLE measurements ADD COLUMN regime TEXT NOT NULL DEFAULT '';
ALTER TABLE measurements ADD COLUMN window_id INTEGER NOT NULL DEFAULT 0;
ALTER TABLE measurements ADD COLUMN window_members INTEGER NOT NULL DEFAULT 0;
ALTER TABLE measurements ADD COLUMN windows INTEGER NOT NULL DEFAULT 0;
ALTER TABLE measurements ADD COLUMN conditioned INTEGER NOT NULL DEFAULT 0;
ALTER TABLE measurements ADD COLUMN regime_note TEXT NOT NULL DEFAULT '';
ALTER TABLE measurements ADD COLUMN tflops_per_ghz REAL;
ALTER TABLE measurements ADD COLUMN peak_tflops REAL;
ALTER TABLE measurements ADD COLUMN peak_share REAL;
ALTER TABLE measurements ADD COLUMN settle_seconds REAL;
ALTER TABLE measurements ADD COLUMN cool_seconds REAL;
ALTER TABLE runs ADD COLUMN regime TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN paired INTEGER NOT NULL DEFAULT 0;

DROP TRIGGER measurements_keep_dashboards;
DROP TRIGGER measurements_forget_dashboards;
DROP VIEW latest_result;
DROP VIEW nightly_change;
DROP VIEW nightly_history;
DROP VIEW run_cost;
DROP VIEW run_summary;

CREATE TABLE latest_ok_v11 (
  variant TEXT NOT NULL, dtype TEXT NOT NULL, m INTEGER NOT NULL, n INTEGER NOT NULL,
  k INTEGER NOT NULL, device_uuid TEXT NOT NULL, regime TEXT NOT NULL,
  measurement_id INTEGER NOT NULL,
  PRIMARY KEY (variant, dtype, m, n, k, device_uuid, regime)
) WITHOUT ROWID;
INSERT INTO latest_ok_v11
SELECT variant, dtype, m, n, k, device_uuid, '', measurement_id FROM latest_ok;
DROP TABLE latest_ok;
ALTER TABLE latest_ok_v11 RENAME TO latest_ok;

CREATE TABLE nightly_latest_v11 (
  variant TEXT NOT NULL, dtype TEXT NOT NULL, m INTEGER NOT NULL, n INTEGER NOT NULL,
  k INTEGER NOT NULL, device_uuid TEXT NOT NULL, regime TEXT NOT NULL,
  run_id INTEGER NOT NULL, measurement_id INTEGER NOT NULL,
  previous_measurement_id INTEGER,
  PRIMARY KEY (variant, dtype, m, n, k, device_uuid, regime)
) WITHOUT ROWID;
INSERT INTO nightly_latest_v11
SELECT variant, dtype, m, n, k, device_uuid, '', run_id, measurement_id,
       previous_measurement_id
FROM nightly_latest;
DROP TABLE nightly_latest;
ALTER TABLE nightly_latest_v11 RENAME TO nightly_latest;

CREATE TRIGGER measurements_keep_dashboards AFTER INSERT ON measurements
BEGIN
  INSERT OR IGNORE INTO measured_variants (variant) VALUES (NEW.variant);
  INSERT INTO latest_ok
  SELECT NEW.variant, NEW.dtype, NEW.m, NEW.n, NEW.k, r.device_uuid, NEW.regime, NEW.id
  FROM runs AS r WHERE r.id = NEW.run_id AND NEW.status = 'ok'
  ON CONFLICT (variant, dtype, m, n, k, device_uuid, regime) DO UPDATE
    SET measurement_id = excluded.measurement_id
    WHERE excluded.measurement_id > latest_ok.measurement_id;
  INSERT INTO nightly_latest
  SELECT NEW.variant, NEW.dtype, NEW.m, NEW.n, NEW.k, r.device_uuid, NEW.regime, NEW.run_id,
         NEW.id, NULL
  FROM runs AS r
  WHERE r.id = NEW.run_id AND NEW.status = 'ok'
    AND EXISTS (SELECT 1 FROM run_tags AS t WHERE t.run_id = NEW.run_id AND t.tag = 'nightly')
  ON CONFLICT (variant, dtype, m, n, k, device_uuid, regime) DO UPDATE
    SET previous_measurement_id =
          CASE WHEN excluded.run_id > nightly_latest.run_id THEN nightly_latest.measurement_id
               ELSE nightly_latest.previous_measurement_id END,
        run_id = excluded.run_id, measurement_id = excluded.measurement_id
    WHERE excluded.measurement_id > nightly_latest.measurement_id;
END;

CREATE TRIGGER measurements_forget_dashboards AFTER DELETE ON measurements
BEGIN
  DELETE FROM latest_ok WHERE measurement_id = OLD.id;
  INSERT OR IGNORE INTO latest_ok
  SELECT ms.variant, ms.dtype, ms.m, ms.n, ms.k, r.device_uuid, ms.regime, max(ms.id)
  FROM measurements AS ms JOIN runs AS r ON r.id = ms.run_id
  WHERE ms.variant = OLD.variant AND ms.dtype = OLD.dtype AND ms.m = OLD.m AND ms.n = OLD.n
    AND ms.k = OLD.k AND ms.regime = OLD.regime AND ms.status = 'ok'
  GROUP BY r.device_uuid;
  UPDATE nightly_latest SET previous_measurement_id = NULL WHERE previous_measurement_id = OLD.id;
  DELETE FROM nightly_latest WHERE measurement_id = OLD.id;
END;

-- latest_result: the newest ok measurement of each variant x dtype x shape x GPU x regime.
CREATE VIEW latest_result AS
SELECT ms.variant, ms.dtype, ms.m, ms.n, ms.k, l.regime,
       ms.run_id, ms.id AS measurement_id,
       r.device_name, l.device_uuid, r.device_index,
       ms.tflops, ms.median_ms, ms.noise, ms.samples, ms.bytes_per_second,
       ms.median_sm_mhz, ms.tflops_per_ghz, ms.peak_share, ms.conditioned,
       ms.l2, ms.clock_policy, ms.verification,
       ms.created_at_ms,
       strftime('%Y-%m-%dT%H:%M:%fZ', ms.created_at_ms / 1000.0, 'unixepoch') AS time
FROM latest_ok AS l
JOIN measurements AS ms ON ms.id = l.measurement_id
JOIN runs AS r ON r.id = ms.run_id;

-- nightly_history: every ok measurement of the runs tagged nightly, with its regime.
CREATE VIEW nightly_history AS
SELECT ms.variant, ms.dtype, ms.m, ms.n, ms.k, ms.regime,
       ms.run_id, ms.id AS measurement_id,
       coalesce(r.started_at_ms, r.created_at_ms) AS run_started_at_ms,
       strftime('%Y-%m-%dT%H:%M:%fZ', coalesce(r.started_at_ms, r.created_at_ms) / 1000.0,
                'unixepoch') AS time,
       ms.tflops, ms.median_ms, ms.noise, ms.samples, ms.median_sm_mhz, ms.tflops_per_ghz,
       r.device_name, r.device_uuid, r.state AS run_state, r.git_revision, r.daemon_version,
       ms.created_at_ms
FROM measurements AS ms
JOIN runs AS r ON r.id = ms.run_id
WHERE ms.status = 'ok'
  AND ms.run_id IN (SELECT run_id FROM run_tags WHERE tag = 'nightly');

-- nightly_change: per variant x dtype x shape x GPU x regime, the newest nightly result beside
-- the one of the nightly run before it in the same regime.
CREATE VIEW nightly_change AS
SELECT cur.variant, cur.dtype, cur.m, cur.n, cur.k, nl.device_uuid, nl.regime, cr.device_name,
       cur.run_id,
       strftime('%Y-%m-%dT%H:%M:%fZ', coalesce(cr.started_at_ms, cr.created_at_ms) / 1000.0,
                'unixepoch') AS time,
       cur.tflops, cur.median_ms, cur.noise, cur.median_sm_mhz,
       prev.run_id AS previous_run_id,
       strftime('%Y-%m-%dT%H:%M:%fZ', coalesce(pr.started_at_ms, pr.created_at_ms) / 1000.0,
                'unixepoch') AS previous_time,
       prev.tflops AS previous_tflops, prev.median_ms AS previous_median_ms,
       prev.noise AS previous_noise, prev.median_sm_mhz AS previous_median_sm_mhz,
       CASE WHEN prev.median_ms > 0 THEN cur.median_ms / prev.median_ms - 1.0 END AS slowdown
FROM nightly_latest AS nl
JOIN measurements AS cur ON cur.id = nl.measurement_id
JOIN runs AS cr ON cr.id = cur.run_id
LEFT JOIN measurements AS prev ON prev.id = nl.previous_measurement_id
LEFT JOIN runs AS pr ON pr.id = prev.run_id;

-- run_summary: one row per run with its progress and outcome.
CREATE VIEW run_summary AS
SELECT r.id AS run_id, r.kind, r.state, r.regime,
       (SELECT group_concat(tag, ',') FROM (SELECT tag FROM run_tags AS t
                                             WHERE t.run_id = r.id ORDER BY tag)) AS tags,
       r.device_index, r.device_name, r.device_uuid, r.requested_by, r.clock_policy,
       r.daemon_version, r.git_revision,
       r.created_at_ms, r.started_at_ms, r.finished_at_ms,
       strftime('%Y-%m-%dT%H:%M:%fZ', r.created_at_ms / 1000.0, 'unixepoch') AS time,
       (r.finished_at_ms - r.started_at_ms) / 1000.0 AS duration_s,
       r.planned,
       (SELECT count(*) FROM measurements AS ms WHERE ms.run_id = r.id) AS measured,
       (SELECT count(*) FROM measurements AS ms WHERE ms.run_id = r.id AND ms.status = 'ok') AS ok,
       (SELECT count(*) FROM measurements AS ms
        WHERE ms.run_id = r.id AND ms.status = 'failed') AS failed,
       (SELECT count(*) FROM measurements AS ms
        WHERE ms.run_id = r.id AND ms.status = 'skipped') AS skipped,
       (SELECT count(*) FROM verifications AS v WHERE v.run_id = r.id) AS verified,
       (SELECT count(*) FROM verifications AS v WHERE v.run_id = r.id AND v.passed = 0)
         AS verify_failed,
       (SELECT max(ms.tflops) FROM measurements AS ms
        WHERE ms.run_id = r.id AND ms.status = 'ok') AS best_tflops,
       r.error
FROM runs AS r;

-- run_cost: per run, the wall time against the GPU time sampled, and where it went, the
-- regime's settling and cooling included.
CREATE VIEW run_cost AS
SELECT r.id AS run_id, r.state, r.regime, r.rounds,
       (r.finished_at_ms - r.started_at_ms) / 1000.0 AS run_seconds,
       count(ms.id) AS measurements,
       sum(ms.total_seconds) AS sampled_gpu_seconds,
       sum(ms.wall_seconds) AS wall_seconds,
       sum(ms.worker_seconds) AS worker_seconds,
       sum(ms.setup_seconds) AS setup_seconds,
       sum(ms.warmup_seconds) AS warmup_seconds,
       sum(ms.sampling_seconds) AS sampling_seconds,
       sum(ms.verify_seconds) AS verify_seconds,
       sum(ms.settle_seconds) AS settle_seconds,
       sum(ms.cool_seconds) AS cool_seconds,
       sum(ms.inputs_reused) AS inputs_reused,
       CASE WHEN sum(ms.total_seconds) > 0
            THEN (r.finished_at_ms - r.started_at_ms) / 1000.0 / sum(ms.total_seconds) END
         AS run_per_gpu_second
FROM runs AS r
LEFT JOIN measurements AS ms ON ms.run_id = r.id
GROUP BY r.id;

PRAGMA user_version = 11;
)sql");
}

// v12: VerifyResult.reference_failed, a column where the daemon used to read the "reference: "
// start of the error text. Rows stored before are backfilled from that text, so a verification
// whose reference failed reads as one whatever its age.
void MigrateV12(Connection& c) {
  c.Exec(R"sql(
ALTER TABLE verifications ADD COLUMN reference_failed INTEGER NOT NULL DEFAULT 0
  CHECK (reference_failed IN (0, 1));
UPDATE verifications SET reference_failed = 1 WHERE passed = 0 AND error LIKE 'reference: %';
PRAGMA user_version = 12;
)sql");
}

// v13: user kernels, each with its source and manifest (and their SHA-256) and owner, and one
// build per variant, architecture and compiler: the cubin and what ptxas said of it. A removed
// kernel is marked, never deleted: a measurement taken with one of its builds keeps pointing at
// it. Only one kernel that is not removed may have a name.
void MigrateV13(Connection& c) {
  c.Exec(R"sql(
CREATE TABLE user_kernels (
  id              INTEGER PRIMARY KEY,
  name            TEXT    NOT NULL,
  owner           TEXT    NOT NULL DEFAULT '',
  source          TEXT    NOT NULL,
  source_sha256   TEXT    NOT NULL,
  manifest        TEXT    NOT NULL,
  manifest_sha256 TEXT    NOT NULL,
  created_at_ms   INTEGER NOT NULL,
  removed_at_ms   INTEGER
);
CREATE UNIQUE INDEX user_kernels_live_name ON user_kernels (name) WHERE removed_at_ms IS NULL;
CREATE TABLE user_kernel_builds (
  id                INTEGER PRIMARY KEY,
  kernel_id         INTEGER NOT NULL REFERENCES user_kernels (id),
  variant           TEXT    NOT NULL,
  arch              TEXT    NOT NULL,
  compiler          TEXT    NOT NULL,
  options           TEXT    NOT NULL,
  cubin             BLOB    NOT NULL,
  cubin_sha256      TEXT    NOT NULL,
  registers         INTEGER NOT NULL,
  stack_bytes       INTEGER NOT NULL DEFAULT 0,
  spill_store_bytes INTEGER NOT NULL DEFAULT 0,
  spill_load_bytes  INTEGER NOT NULL DEFAULT 0,
  static_smem_bytes INTEGER NOT NULL DEFAULT 0,
  log               TEXT    NOT NULL DEFAULT '',
  created_at_ms     INTEGER NOT NULL,
  UNIQUE (kernel_id, variant, arch, compiler)
);
PRAGMA user_version = 13;
)sql");
}

// v14: provenance of user variants. Every measurement and verification of a user variant points
// at the build it ran (its cubin, and through the build the kernel's source and manifest), and a
// measurement says how many of its timed launches had their output checked. Rows stored before
// are built-in variants' (user variants could not run before v14): 0 is right for them.
void MigrateV14(Connection& c) {
  c.Exec(R"sql(
ALTER TABLE measurements ADD COLUMN user_build_id INTEGER NOT NULL DEFAULT 0;
ALTER TABLE measurements ADD COLUMN checked_launches INTEGER NOT NULL DEFAULT 0;
ALTER TABLE verifications ADD COLUMN user_build_id INTEGER NOT NULL DEFAULT 0;
PRAGMA user_version = 14;
)sql");
}

// v15: provenance on every run (ablation.v1.Run and its DeviceIdentity): the GPU's VBIOS, enforced
// power limit and ECC mode, the hardware fingerprint that keys a series, the daemon's host name
// and node labels, and the built-in kernels' revision. Older rows keep '' (NULL for the power
// limit: not recorded), so they form series of their own, never mixed with fingerprinted ones.
void MigrateV15(Connection& c) {
  c.Exec(R"sql(
ALTER TABLE runs ADD COLUMN vbios_version TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN power_limit_w REAL;
ALTER TABLE runs ADD COLUMN ecc_mode TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN hardware_fingerprint TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN host_name TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN node_labels TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN kernel_revision TEXT NOT NULL DEFAULT '';
PRAGMA user_version = 15;
)sql");
}

// v16: who cancelled a run (the audit trail's question "who stopped it"); old rows: nobody known.
void MigrateV16(Connection& c) {
  c.Exec(R"sql(
ALTER TABLE runs ADD COLUMN cancelled_by TEXT NOT NULL DEFAULT '';
PRAGMA user_version = 16;
)sql");
}

// v17: a fleet's export (db/fleet/). The daemon's identity, made once per database, names its
// runs in a fleet's PostgreSQL, where run ids are each daemon's own. The outbox holds the runs
// to export: a trigger enqueues a run in the statement that makes it final (FinishRun, a crash's
// MarkInterruptedRuns, a run created final), so in the same transaction, and no path can finish
// a run without it; the exporter deletes a row only after PostgreSQL committed the run. Runs
// finished before v17 are enqueued here, so a fleet database gets the whole history.
void MigrateV17(Connection& c) {
  c.Exec(R"sql(
CREATE TABLE daemon_identity (
  only_row      INTEGER PRIMARY KEY CHECK (only_row = 1),
  daemon_id     TEXT    NOT NULL,
  created_at_ms INTEGER NOT NULL
);
INSERT INTO daemon_identity (only_row, daemon_id, created_at_ms)
  VALUES (1, lower(hex(randomblob(16))),
          CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER));
CREATE TABLE fleet_outbox (
  run_id         INTEGER PRIMARY KEY REFERENCES runs (id),
  enqueued_at_ms INTEGER NOT NULL,
  attempts       INTEGER NOT NULL DEFAULT 0,
  last_error     TEXT    NOT NULL DEFAULT ''
);
INSERT INTO fleet_outbox (run_id, enqueued_at_ms)
  SELECT id, coalesce(finished_at_ms, created_at_ms) FROM runs
  WHERE state IN ('succeeded', 'partial', 'failed', 'cancelled');
CREATE TRIGGER runs_final_to_outbox AFTER UPDATE OF state ON runs
WHEN NEW.state IN ('succeeded', 'partial', 'failed', 'cancelled')
 AND OLD.state NOT IN ('succeeded', 'partial', 'failed', 'cancelled')
BEGIN
  INSERT OR IGNORE INTO fleet_outbox (run_id, enqueued_at_ms)
    VALUES (NEW.id, coalesce(NEW.finished_at_ms,
                             CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)));
END;
CREATE TRIGGER runs_created_final_to_outbox AFTER INSERT ON runs
WHEN NEW.state IN ('succeeded', 'partial', 'failed', 'cancelled')
BEGIN
  INSERT OR IGNORE INTO fleet_outbox (run_id, enqueued_at_ms)
    VALUES (NEW.id, coalesce(NEW.finished_at_ms, NEW.created_at_ms));
END;
PRAGMA user_version = 17;
)sql");
}

// v18: figures that do not depend on a row's neighbours. Each measurement of the sustained and
// locked regimes gets its variant's solo span (ablation.v1.SoloFigures: the variant alone until its
// clock and power settled; its TFLOPS at the cap, clock, NVML energy and energy per operation),
// and a library baseline's row names its cuBLASLt algorithm (ablation.v1.LibraryAlgo). The choice
// of cublas_<dtype>_best (the fastest of the heuristic's candidates, timed once) is kept per
// device, library version and problem in library_choices, so every later run launches the same
// algorithm, with what was timed to choose it. The solo span's samples are kept beside the
// window's (measurement_samples.solo_sample_ms). Rows stored before have no solo figures
// (solo_measured 0) and no algorithm: nothing was measured for them.
void MigrateV18(Connection& c) {
  c.Exec(R"sql(
ALTER TABLE measurements ADD COLUMN solo_measured INTEGER NOT NULL DEFAULT 0
  CHECK (solo_measured IN (0, 1));
ALTER TABLE measurements ADD COLUMN solo_tflops REAL NOT NULL DEFAULT 0;
ALTER TABLE measurements ADD COLUMN solo_median_ms REAL NOT NULL DEFAULT 0;
ALTER TABLE measurements ADD COLUMN solo_noise REAL NOT NULL DEFAULT 0;
ALTER TABLE measurements ADD COLUMN solo_samples INTEGER NOT NULL DEFAULT 0;
ALTER TABLE measurements ADD COLUMN solo_median_cycles REAL;
ALTER TABLE measurements ADD COLUMN solo_sm_mhz REAL;
ALTER TABLE measurements ADD COLUMN solo_peak_share REAL;
ALTER TABLE measurements ADD COLUMN solo_energy_j REAL;
ALTER TABLE measurements ADD COLUMN solo_power_w REAL;
ALTER TABLE measurements ADD COLUMN solo_joules_per_tflop REAL;
ALTER TABLE measurements ADD COLUMN solo_busy_share REAL;
ALTER TABLE measurements ADD COLUMN solo_gpu_seconds REAL NOT NULL DEFAULT 0;
ALTER TABLE measurements ADD COLUMN solo_launches INTEGER NOT NULL DEFAULT 0;
ALTER TABLE measurements ADD COLUMN solo_conditioned INTEGER NOT NULL DEFAULT 0
  CHECK (solo_conditioned IN (0, 1));
ALTER TABLE measurements ADD COLUMN solo_note TEXT NOT NULL DEFAULT '';
ALTER TABLE measurements ADD COLUMN solo_cost_seconds REAL;
ALTER TABLE measurements ADD COLUMN library_pick TEXT NOT NULL DEFAULT '';
ALTER TABLE measurements ADD COLUMN library_algo_id INTEGER;
ALTER TABLE measurements ADD COLUMN library_tile TEXT NOT NULL DEFAULT '';
ALTER TABLE measurements ADD COLUMN library_stages TEXT NOT NULL DEFAULT '';
ALTER TABLE measurements ADD COLUMN library_split_k INTEGER;
ALTER TABLE measurements ADD COLUMN library_reduction INTEGER;
ALTER TABLE measurements ADD COLUMN library_swizzle INTEGER;
ALTER TABLE measurements ADD COLUMN library_custom INTEGER;
ALTER TABLE measurements ADD COLUMN library_cluster TEXT NOT NULL DEFAULT '';
ALTER TABLE measurements ADD COLUMN library_candidates INTEGER;
ALTER TABLE measurements ADD COLUMN library_rank INTEGER;
ALTER TABLE measurements ADD COLUMN library_config TEXT NOT NULL DEFAULT '';
CREATE TABLE library_choices (
  id              INTEGER PRIMARY KEY,
  device_uuid     TEXT    NOT NULL,
  library_version TEXT    NOT NULL,
  variant         TEXT    NOT NULL,
  dtype           TEXT    NOT NULL,
  m               INTEGER NOT NULL,
  n               INTEGER NOT NULL,
  k               INTEGER NOT NULL,
  algo            BLOB    NOT NULL,
  described       BLOB    NOT NULL,
  tuning          BLOB    NOT NULL,
  chosen_at_ms    INTEGER NOT NULL,
  run_id          INTEGER NOT NULL DEFAULT 0,
  UNIQUE (device_uuid, library_version, variant, dtype, m, n, k)
);
ALTER TABLE measurement_samples ADD COLUMN solo_sample_ms BLOB NOT NULL DEFAULT x'';
PRAGMA user_version = 18;
)sql");
}

// v19: a build's cubin is stored compressed ('zlib', what Store writes
// from now on; rows stored before stay 'raw'), with its size, so that the bytes a kernel and an
// owner hold are summed without reading a blob (a 146-byte source stored a 240 MiB cubin before).
void MigrateV19(Connection& c) {
  c.Exec(R"sql(
ALTER TABLE user_kernel_builds ADD COLUMN cubin_encoding TEXT NOT NULL DEFAULT 'raw';
ALTER TABLE user_kernel_builds ADD COLUMN cubin_bytes INTEGER NOT NULL DEFAULT 0;
UPDATE user_kernel_builds SET cubin_bytes = length(cubin);
PRAGMA user_version = 19;
)sql");
}

// v20: a user kernel's versions. Adding a kernel under a name it already has makes a new version
// (1, 2, ...; a number is never given twice for a name, removed versions counted), the old ones
// stay: one row per version, so a measurement's build keeps pointing at the source it ran. Only
// one row not removed may have a name and a version.
void MigrateV20(Connection& c) {
  c.Exec(R"sql(
ALTER TABLE user_kernels ADD COLUMN version INTEGER NOT NULL DEFAULT 1;
DROP INDEX user_kernels_live_name;
CREATE UNIQUE INDEX user_kernels_live_version ON user_kernels (name, version)
  WHERE removed_at_ms IS NULL;
PRAGMA user_version = 20;
)sql");
}

// v21: a row on its roofline (Measurement.roofline): its bytes per second from its work model (a
// GEMM's A, B and C once), the device's measured bandwidth and its share of it, its share of the
// compute peak its work model names, its intensity and the nearer roof. Unset in older rows.
void MigrateV21(Connection& c) {
  c.Exec(R"sql(
ALTER TABLE measurements ADD COLUMN roofline_bytes_per_second REAL;
ALTER TABLE measurements ADD COLUMN roofline_bandwidth REAL;
ALTER TABLE measurements ADD COLUMN roofline_memory_share REAL;
ALTER TABLE measurements ADD COLUMN roofline_compute_share REAL;
ALTER TABLE measurements ADD COLUMN roofline_compute_roof TEXT NOT NULL DEFAULT '';
ALTER TABLE measurements ADD COLUMN roofline_intensity REAL;
ALTER TABLE measurements ADD COLUMN roofline_bound TEXT NOT NULL DEFAULT '';
PRAGMA user_version = 21;
)sql");
}

// v22: the entry a dispatching variant ran at a row's shape (Measurement.dispatched_to: a
// per-bucket rung's pick). '' in older rows.
void MigrateV22(Connection& c) {
  c.Exec(R"sql(
ALTER TABLE measurements ADD COLUMN dispatched_to TEXT NOT NULL DEFAULT '';
PRAGMA user_version = 22;
)sql");
}

// v23: the dashboards keyed by the L2 mode too (measurements.l2: cold_rotated, cold, hot; '' in
// v1 rows), as v11 keyed them by regime: a night measured with the L2 hot is never the night
// before one measured cold, so nightly_change no longer reads the L2's difference as a slowdown,
// latest_result keeps one row per mode, and nightly_history names each row's mode. The two tables
// are made again from the measurements (the newest ok row of each key; a nightly key's previous
// row, the newest of an earlier nightly run), which is what the triggers would have kept had the
// key held the mode from the start: a row an older key hid behind a newer one of the other mode
// comes back.
void MigrateV23(Connection& c) {
  c.Exec(R"sql(
DROP TRIGGER measurements_keep_dashboards;
DROP TRIGGER measurements_forget_dashboards;
DROP VIEW latest_result;
DROP VIEW nightly_change;
DROP VIEW nightly_history;

DROP TABLE latest_ok;
CREATE TABLE latest_ok (
  variant TEXT NOT NULL, dtype TEXT NOT NULL, m INTEGER NOT NULL, n INTEGER NOT NULL,
  k INTEGER NOT NULL, device_uuid TEXT NOT NULL, regime TEXT NOT NULL, l2 TEXT NOT NULL,
  measurement_id INTEGER NOT NULL,
  PRIMARY KEY (variant, dtype, m, n, k, device_uuid, regime, l2)
) WITHOUT ROWID;
INSERT INTO latest_ok
SELECT ms.variant, ms.dtype, ms.m, ms.n, ms.k, r.device_uuid, ms.regime, ms.l2, max(ms.id)
FROM measurements AS ms JOIN runs AS r ON r.id = ms.run_id
WHERE ms.status = 'ok'
GROUP BY ms.variant, ms.dtype, ms.m, ms.n, ms.k, r.device_uuid, ms.regime, ms.l2;

DROP TABLE nightly_latest;
CREATE TABLE nightly_latest (
  variant TEXT NOT NULL, dtype TEXT NOT NULL, m INTEGER NOT NULL, n INTEGER NOT NULL,
  k INTEGER NOT NULL, device_uuid TEXT NOT NULL, regime TEXT NOT NULL, l2 TEXT NOT NULL,
  run_id INTEGER NOT NULL, measurement_id INTEGER NOT NULL,
  previous_measurement_id INTEGER,
  PRIMARY KEY (variant, dtype, m, n, k, device_uuid, regime, l2)
) WITHOUT ROWID;
CREATE TEMP TABLE nightly_ok AS
SELECT ms.id, ms.run_id, ms.variant, ms.dtype, ms.m, ms.n, ms.k, r.device_uuid, ms.regime, ms.l2
FROM measurements AS ms JOIN runs AS r ON r.id = ms.run_id
WHERE ms.status = 'ok'
  AND ms.run_id IN (SELECT run_id FROM run_tags WHERE tag = 'nightly');
CREATE INDEX temp.nightly_ok_key
  ON nightly_ok (variant, dtype, m, n, k, device_uuid, regime, l2, run_id, id);
INSERT INTO nightly_latest
SELECT cur.variant, cur.dtype, cur.m, cur.n, cur.k, cur.device_uuid, cur.regime, cur.l2,
       cur.run_id, cur.id,
       (SELECT max(p.id) FROM nightly_ok AS p
        WHERE p.variant = cur.variant AND p.dtype = cur.dtype AND p.m = cur.m AND p.n = cur.n
          AND p.k = cur.k AND p.device_uuid = cur.device_uuid AND p.regime = cur.regime
          AND p.l2 = cur.l2 AND p.run_id < cur.run_id)
FROM nightly_ok AS cur
WHERE cur.id = (SELECT max(o.id) FROM nightly_ok AS o
                WHERE o.variant = cur.variant AND o.dtype = cur.dtype AND o.m = cur.m
                  AND o.n = cur.n AND o.k = cur.k AND o.device_uuid = cur.device_uuid
                  AND o.regime = cur.regime AND o.l2 = cur.l2);
DROP TABLE temp.nightly_ok;

CREATE TRIGGER measurements_keep_dashboards AFTER INSERT ON measurements
BEGIN
  INSERT OR IGNORE INTO measured_variants (variant) VALUES (NEW.variant);
  INSERT INTO latest_ok
  SELECT NEW.variant, NEW.dtype, NEW.m, NEW.n, NEW.k, r.device_uuid, NEW.regime, NEW.l2, NEW.id
  FROM runs AS r WHERE r.id = NEW.run_id AND NEW.status = 'ok'
  ON CONFLICT (variant, dtype, m, n, k, device_uuid, regime, l2) DO UPDATE
    SET measurement_id = excluded.measurement_id
    WHERE excluded.measurement_id > latest_ok.measurement_id;
  INSERT INTO nightly_latest
  SELECT NEW.variant, NEW.dtype, NEW.m, NEW.n, NEW.k, r.device_uuid, NEW.regime, NEW.l2,
         NEW.run_id, NEW.id, NULL
  FROM runs AS r
  WHERE r.id = NEW.run_id AND NEW.status = 'ok'
    AND EXISTS (SELECT 1 FROM run_tags AS t WHERE t.run_id = NEW.run_id AND t.tag = 'nightly')
  ON CONFLICT (variant, dtype, m, n, k, device_uuid, regime, l2) DO UPDATE
    SET previous_measurement_id =
          CASE WHEN excluded.run_id > nightly_latest.run_id THEN nightly_latest.measurement_id
               ELSE nightly_latest.previous_measurement_id END,
        run_id = excluded.run_id, measurement_id = excluded.measurement_id
    WHERE excluded.measurement_id > nightly_latest.measurement_id;
END;

CREATE TRIGGER measurements_forget_dashboards AFTER DELETE ON measurements
BEGIN
  DELETE FROM latest_ok WHERE measurement_id = OLD.id;
  INSERT OR IGNORE INTO latest_ok
  SELECT ms.variant, ms.dtype, ms.m, ms.n, ms.k, r.device_uuid, ms.regime, ms.l2, max(ms.id)
  FROM measurements AS ms JOIN runs AS r ON r.id = ms.run_id
  WHERE ms.variant = OLD.variant AND ms.dtype = OLD.dtype AND ms.m = OLD.m AND ms.n = OLD.n
    AND ms.k = OLD.k AND ms.regime = OLD.regime AND ms.l2 = OLD.l2 AND ms.status = 'ok'
  GROUP BY r.device_uuid;
  UPDATE nightly_latest SET previous_measurement_id = NULL WHERE previous_measurement_id = OLD.id;
  DELETE FROM nightly_latest WHERE measurement_id = OLD.id;
END;

-- latest_result: the newest ok measurement of each variant x dtype x shape x GPU x regime x L2
-- mode.
CREATE VIEW latest_result AS
SELECT ms.variant, ms.dtype, ms.m, ms.n, ms.k, l.regime,
       ms.run_id, ms.id AS measurement_id,
       r.device_name, l.device_uuid, r.device_index,
       ms.tflops, ms.median_ms, ms.noise, ms.samples, ms.bytes_per_second,
       ms.median_sm_mhz, ms.tflops_per_ghz, ms.peak_share, ms.conditioned,
       ms.l2, ms.clock_policy, ms.verification,
       ms.created_at_ms,
       strftime('%Y-%m-%dT%H:%M:%fZ', ms.created_at_ms / 1000.0, 'unixepoch') AS time
FROM latest_ok AS l
JOIN measurements AS ms ON ms.id = l.measurement_id
JOIN runs AS r ON r.id = ms.run_id;

-- nightly_history: every ok measurement of the runs tagged nightly, with its regime and L2 mode.
CREATE VIEW nightly_history AS
SELECT ms.variant, ms.dtype, ms.m, ms.n, ms.k, ms.regime,
       ms.run_id, ms.id AS measurement_id,
       coalesce(r.started_at_ms, r.created_at_ms) AS run_started_at_ms,
       strftime('%Y-%m-%dT%H:%M:%fZ', coalesce(r.started_at_ms, r.created_at_ms) / 1000.0,
                'unixepoch') AS time,
       ms.tflops, ms.median_ms, ms.noise, ms.samples, ms.median_sm_mhz, ms.tflops_per_ghz,
       r.device_name, r.device_uuid, r.state AS run_state, r.git_revision, r.daemon_version,
       ms.created_at_ms, ms.l2
FROM measurements AS ms
JOIN runs AS r ON r.id = ms.run_id
WHERE ms.status = 'ok'
  AND ms.run_id IN (SELECT run_id FROM run_tags WHERE tag = 'nightly');

-- nightly_change: per variant x dtype x shape x GPU x regime x L2 mode, the newest nightly
-- result beside the one of the nightly run before it in the same regime and L2 mode.
CREATE VIEW nightly_change AS
SELECT cur.variant, cur.dtype, cur.m, cur.n, cur.k, nl.device_uuid, nl.regime, cr.device_name,
       cur.run_id,
       strftime('%Y-%m-%dT%H:%M:%fZ', coalesce(cr.started_at_ms, cr.created_at_ms) / 1000.0,
                'unixepoch') AS time,
       cur.tflops, cur.median_ms, cur.noise, cur.median_sm_mhz,
       prev.run_id AS previous_run_id,
       strftime('%Y-%m-%dT%H:%M:%fZ', coalesce(pr.started_at_ms, pr.created_at_ms) / 1000.0,
                'unixepoch') AS previous_time,
       prev.tflops AS previous_tflops, prev.median_ms AS previous_median_ms,
       prev.noise AS previous_noise, prev.median_sm_mhz AS previous_median_sm_mhz,
       CASE WHEN prev.median_ms > 0 THEN cur.median_ms / prev.median_ms - 1.0 END AS slowdown,
       nl.l2
FROM nightly_latest AS nl
JOIN measurements AS cur ON cur.id = nl.measurement_id
JOIN runs AS cr ON cr.id = cur.run_id
LEFT JOIN measurements AS prev ON prev.id = nl.previous_measurement_id
LEFT JOIN runs AS pr ON pr.id = prev.run_id;

PRAGMA user_version = 23;
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
  if (version < 4) MigrateV4(connection);
  if (version < 5) MigrateV5(connection);
  if (version < 6) MigrateV6(connection);
  if (version < 7) MigrateV7(connection);
  if (version < 8) MigrateV8(connection);
  // v8 is the dashboards' change (another branch); v9 needs nothing of it.
  if (version < 9) MigrateV9(connection);
  if (version < 10) MigrateV10(connection);
  if (version < 11) MigrateV11(connection);
  if (version < 12) MigrateV12(connection);
  if (version < 13) MigrateV13(connection);
  if (version < 14) MigrateV14(connection);
  if (version < 15) MigrateV15(connection);
  if (version < 16) MigrateV16(connection);
  if (version < 17) MigrateV17(connection);
  if (version < 18) MigrateV18(connection);
  if (version < 19) MigrateV19(connection);
  if (version < 20) MigrateV20(connection);
  if (version < 21) MigrateV21(connection);
  if (version < 22) MigrateV22(connection);
  if (version < 23) MigrateV23(connection);
  transaction.Commit();
}

}  // namespace ablation::db
