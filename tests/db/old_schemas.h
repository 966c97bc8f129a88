// The schemas of older ablationd versions, as literals: what each version's migration ran, so
// that the tests can build a database of any older version by hand. Never taken from
// migrations.cc: a test must fail if someone edits an old MigrateVn instead of adding a new one.
#pragma once

#include "tests/db/db_test_support.h"

namespace ablation::db::testing {

// The v1 schema exactly as v1 of ablationd created it.
inline constexpr const char* kV1Schema = R"sql(
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
)sql";

inline constexpr const char* kV1Rows = R"sql(
INSERT INTO runs (id, state, device_index, device_name, device_uuid, compute_capability,
                  sm_count, driver_version, cuda_runtime_version, cublas_version, memory_bytes,
                  daemon_version, git_revision, request_json, requested_by, created_at_ms,
                  started_at_ms, finished_at_ms, error, planned)
VALUES (1, 'succeeded', 0, 'NVIDIA H200', 'GPU-1234', '9.0', 132, '560.35', '12.6', '12.6.4',
        150000000000, '0.0.9', 'abc123', '{"variants":["abl_*"]}', 'alice', 1700000000000,
        1700000001000, 1700000060000, '', 3),
       (2, 'failed', 1, 'NVIDIA H200', 'GPU-5678', '9.0', 132, '560.35', '12.6', '12.6.4',
        150000000000, '0.0.9', 'abc123', '{}', 'bob', 1700000100000, NULL, NULL,
        'worker died', 1);
INSERT INTO measurements (id, run_id, sequence, variant, dtype, m, n, k, status, error,
                          median_ms, mean_ms, stddev_ms, min_ms, max_ms, q1_ms, q3_ms,
                          samples, noise, tflops, created_at_ms)
VALUES (1, 1, 0, 'abl_L0_R0_bl0_s1_sw1', 'bf16', 4096, 4096, 4096, 'ok', '',
        1.25, 1.26, 0.01, 1.2, 1.4, 1.24, 1.27, 50, 0.004, 109.9, 1700000010000),
       (2, 1, 1, 'abl_L1_R1_bl0_s3_sw1', 'bf16', 4096, 4096, 4096, 'ok', '',
        0.75, 0.76, 0.005, 0.74, 0.8, 0.745, 0.755, 80, 0.003, 183.2, 1700000020000),
       (3, 1, 2, 'pipe_cp_async', 'bf16', 4096, 4096, 4096, 'failed', 'illegal address',
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1700000030000);
)sql";

// What v2 of ablationd ran on a v1 database, as a literal for the same reason as kV1Schema.
inline constexpr const char* kV1ToV2 = R"sql(
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
UPDATE measurements SET telemetry_note = 'not recorded: measured before schema v2';
CREATE INDEX measurements_shape ON measurements (m, n, k, dtype);
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
)sql";

// A v2 measurement with telemetry, occupancy and samples, as v2 of ablationd wrote it.
inline constexpr const char* kV2Rows = R"sql(
UPDATE runs SET clock_policy = 'observe', l2_bytes = 62914560 WHERE id = 1;
INSERT INTO run_tags (run_id, tag) VALUES (1, 'nightly');
INSERT INTO measurements (id, run_id, sequence, variant, dtype, m, n, k, status, error,
                          median_ms, mean_ms, stddev_ms, min_ms, max_ms, q1_ms, q3_ms,
                          samples, noise, tflops, created_at_ms, total_seconds, l2,
                          clock_policy, verification, telemetry_available, telemetry_note,
                          sm_clock_mhz_mean, power_w_max, throttle_reasons, throttled_samples,
                          registers_per_thread, max_blocks_per_sm, theoretical_occupancy,
                          limiter, threads_per_block)
VALUES (4, 1, 3, 'abl_L1_R1_bl1_s4_sw1', 'bf16', 4096, 4096, 4096, 'ok', '',
        0.5, 0.51, 0.002, 0.49, 0.55, 0.498, 0.503, 40, 0.002, 274.9, 1700000040000, 0.02,
        'cold', 'observe', 'passed', 1, '', 1980, 690.5, 'sw_power_cap', 3, 128, 2, 0.25,
        'registers', 256);
INSERT INTO measurement_samples (measurement_id, sample_count, sample_ms)
VALUES (4, 1, X'000000000000E03F');
)sql";

// What v3 of ablationd ran on a v2 database.
inline constexpr const char* kV2ToV3 = R"sql(
ALTER TABLE measurements ADD COLUMN bytes_per_second REAL;
ALTER TABLE measurements ADD COLUMN fragment_loads_per_second REAL;

PRAGMA user_version = 3;
)sql";

// What v4 of ablationd ran on a v3 database: the dashboard views.
inline constexpr const char* kV3ToV4 = R"sql(
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
)sql";

// Schema v4 from nothing.
inline void BuildV4(RawDb& raw) {
  raw.Exec(kV1Schema);
  raw.Exec(kV1ToV2);
  raw.Exec(kV2ToV3);
  raw.Exec(kV3ToV4);
}

// Schema v4 with the v1 and v2 rows (kV1Rows, kV2Rows), then `rows`: the migration tests'
// starting point.
inline void BuildV4WithRows(RawDb& raw, const char* rows) {
  BuildV4(raw);
  raw.Exec(kV1Rows);
  raw.Exec(kV2Rows);
  raw.Exec(rows);
}

// What v22 added (the entry a dispatching variant ran), undone: a fresh database taken back to
// v21.
inline void UndoV22(RawDb& raw) { raw.Exec("ALTER TABLE measurements DROP COLUMN dispatched_to"); }

// What v21 added (a kernel of its own contract's roofline), undone with what came after it: a
// fresh database taken back to v20.
inline void UndoV21(RawDb& raw) {
  UndoV22(raw);
  for (const char* column :
       {"roofline_bytes_per_second", "roofline_bandwidth", "roofline_memory_share",
        "roofline_compute_share", "roofline_compute_roof", "roofline_intensity", "roofline_bound"})
    raw.Exec(std::string("ALTER TABLE measurements DROP COLUMN ") + column);
}

// What v20 added (a user kernel's version), undone with what came after it: a fresh database
// taken back to v19.
inline void UndoV20(RawDb& raw) {
  UndoV21(raw);
  raw.Exec("DROP INDEX user_kernels_live_version");
  raw.Exec("ALTER TABLE user_kernels DROP COLUMN version");
  raw.Exec(
      "CREATE UNIQUE INDEX user_kernels_live_name ON user_kernels (name) WHERE removed_at_ms IS "
      "NULL");
}

// What v19 added (a build's cubin encoding and size), undone with what came after it: a fresh
// database taken back to v18.
inline void UndoV19(RawDb& raw) {
  UndoV20(raw);
  raw.Exec("ALTER TABLE user_kernel_builds DROP COLUMN cubin_encoding");
  raw.Exec("ALTER TABLE user_kernel_builds DROP COLUMN cubin_bytes");
}

// What v18 added (solo figures and the library algorithm on every measurement, the library
// choices), undone with what came after it: a fresh database taken back to v17, for the tests of
// older migrations.
inline void UndoV18(RawDb& raw) {
  UndoV19(raw);
  for (const char* column :
       {"solo_measured",     "solo_tflops",        "solo_median_ms",        "solo_noise",
        "solo_samples",      "solo_median_cycles", "solo_sm_mhz",           "solo_peak_share",
        "solo_energy_j",     "solo_power_w",       "solo_joules_per_tflop", "solo_busy_share",
        "solo_gpu_seconds",  "solo_launches",      "solo_conditioned",      "solo_note",
        "solo_cost_seconds", "library_pick",       "library_algo_id",       "library_tile",
        "library_stages",    "library_split_k",    "library_reduction",     "library_swizzle",
        "library_custom",    "library_cluster",    "library_candidates",    "library_rank",
        "library_config"})
    raw.Exec(std::string("ALTER TABLE measurements DROP COLUMN ") + column);
  raw.Exec("DROP TABLE library_choices");
  raw.Exec("ALTER TABLE measurement_samples DROP COLUMN solo_sample_ms");
}

}  // namespace ablation::db::testing
