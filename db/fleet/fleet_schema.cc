#include "db/fleet/fleet_schema.h"

#include <string>

namespace ablation::fleet {
namespace {

// pg_advisory_xact_lock's key: "abl" "fleet" as a number, shared by every exporter.
constexpr const char* kMigrationLock = "SELECT pg_advisory_xact_lock(4242170917)";

// v1: daemons, their runs, measurements and verifications (each row's full message as jsonb,
// with the columns that filters and dashboards use beside it), and the views the client and the
// dashboards read (deploy/k8s/grafana/).
void MigrateV1(PgConnection& c) {
  c.Exec(R"sql(
CREATE TABLE daemons (
  daemon_id       text        PRIMARY KEY,
  host_name       text        NOT NULL,
  node_labels     text        NOT NULL DEFAULT '',
  first_export_at timestamptz NOT NULL DEFAULT now(),
  last_export_at  timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE runs (
  daemon_id            text        NOT NULL REFERENCES daemons (daemon_id),
  run_id               bigint      NOT NULL,
  host_name            text        NOT NULL,
  kind                 text        NOT NULL,
  state                text        NOT NULL,
  tags                 text[]      NOT NULL DEFAULT '{}',
  created_at           timestamptz,
  started_at           timestamptz,
  finished_at          timestamptz,
  device_name          text        NOT NULL DEFAULT '',
  device_uuid          text        NOT NULL DEFAULT '',
  hardware_fingerprint text        NOT NULL DEFAULT '',
  regime               text        NOT NULL DEFAULT '',
  node_labels          text        NOT NULL DEFAULT '',
  run                  jsonb       NOT NULL,
  exported_at          timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (daemon_id, run_id)
);
CREATE TABLE measurements (
  daemon_id      text             NOT NULL,
  run_id         bigint           NOT NULL,
  measurement_id bigint           NOT NULL,
  variant        text             NOT NULL,
  dtype          text             NOT NULL,
  m              bigint           NOT NULL,
  n              bigint           NOT NULL,
  k              bigint           NOT NULL,
  regime         text             NOT NULL DEFAULT '',
  status         text             NOT NULL,
  median_ms      double precision,
  noise          double precision,
  tflops         double precision,
  created_at     timestamptz,
  measurement    jsonb            NOT NULL,
  PRIMARY KEY (daemon_id, measurement_id),
  FOREIGN KEY (daemon_id, run_id) REFERENCES runs (daemon_id, run_id)
);
CREATE INDEX measurements_series ON measurements (variant, dtype, m, n, k, regime);
CREATE INDEX measurements_run ON measurements (daemon_id, run_id);
CREATE TABLE verifications (
  daemon_id       text    NOT NULL,
  run_id          bigint  NOT NULL,
  verification_id bigint  NOT NULL,
  variant         text    NOT NULL,
  passed          boolean NOT NULL,
  verification    jsonb   NOT NULL,
  PRIMARY KEY (daemon_id, verification_id),
  FOREIGN KEY (daemon_id, run_id) REFERENCES runs (daemon_id, run_id)
);

-- Series points: ok measurements of ablation runs, with what keys a series (db/schema.md).
CREATE VIEW fleet_points AS
SELECT r.daemon_id, r.host_name, r.hardware_fingerprint, r.device_name, r.device_uuid,
       x.run_id, x.measurement_id, x.variant, x.dtype, x.m, x.n, x.k, x.regime,
       coalesce(r.started_at, r.created_at) AS time, x.median_ms, x.noise, x.tflops, r.tags
FROM measurements x JOIN runs r USING (daemon_id, run_id)
WHERE x.status = 'ok' AND r.kind = 'ablation';

-- Throughput per device model and variant per day (the dashboards' main panel).
CREATE VIEW fleet_throughput AS
SELECT date_trunc('day', time) AS day, device_name, variant, dtype, m, n, k, regime,
       count(*) AS points, count(DISTINCT daemon_id) AS daemons,
       percentile_cont(0.5) WITHIN GROUP (ORDER BY tflops) AS median_tflops,
       max(tflops) AS max_tflops
FROM fleet_points
GROUP BY 1, device_name, variant, dtype, m, n, k, regime;

-- Each point against the median of up to seven points before it in its series (one
-- fingerprint, never mixed): the dashboards' quick view of steps. The change points proper
-- (E-divisive means with a permutation test) are `ablation-client history --fleet-db`.
CREATE VIEW fleet_steps AS
SELECT *, CASE WHEN previous_median_ms > 0 THEN median_ms / previous_median_ms - 1 END
            AS relative_step
FROM (
  SELECT p.*,
         (SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY q.median_ms)
          FROM (SELECT b.median_ms FROM fleet_points b
                WHERE b.hardware_fingerprint = p.hardware_fingerprint AND b.variant = p.variant
                  AND b.dtype = p.dtype AND b.m = p.m AND b.n = p.n AND b.k = p.k
                  AND b.regime = p.regime
                  AND (b.time, b.daemon_id, b.measurement_id) < (p.time, p.daemon_id,
                                                                  p.measurement_id)
                ORDER BY b.time DESC LIMIT 7) q) AS previous_median_ms
  FROM fleet_points p) s;

-- The daemons and how recently each exported: a node that went quiet shows.
CREATE VIEW fleet_daemons AS
SELECT d.daemon_id, d.host_name, d.node_labels, d.first_export_at, d.last_export_at,
       count(r.run_id) AS runs, max(r.finished_at) AS last_run_finished_at,
       count(*) FILTER (WHERE r.state = 'failed') AS failed_runs
FROM daemons d LEFT JOIN runs r USING (daemon_id)
GROUP BY d.daemon_id;
)sql",
         "create the fleet schema v1");
}

// v2: the change points of every series (E-divisive means, common/history), computed by the
// exporters from the fleet's rows after each run they commit (db/fleet/fleet_change_points.h):
// fleet_change_points holds one row per change (the point where the new segment starts), and
// fleet_change_point_series one row per series computed, with or without changes, so that a
// series left behind (a failed computation, a database migrated from v1) is found and computed.
// A series is one hardware fingerprint's, never mixed, keyed as fleet_points keys it.
void MigrateV2(PgConnection& c) {
  c.Exec(R"sql(
CREATE TABLE fleet_change_point_series (
  hardware_fingerprint text             NOT NULL,
  variant              text             NOT NULL,
  dtype                text             NOT NULL,
  m                    bigint           NOT NULL,
  n                    bigint           NOT NULL,
  k                    bigint           NOT NULL,
  regime               text             NOT NULL,
  device_name          text             NOT NULL DEFAULT '',
  points               integer          NOT NULL,
  change_points        integer          NOT NULL,
  last_time            timestamptz,
  min_relative_change  double precision NOT NULL,
  significance         double precision NOT NULL,
  computed_at          timestamptz      NOT NULL DEFAULT clock_timestamp(),
  PRIMARY KEY (hardware_fingerprint, variant, dtype, m, n, k, regime)
);
CREATE TABLE fleet_change_points (
  hardware_fingerprint text             NOT NULL,
  variant              text             NOT NULL,
  dtype                text             NOT NULL,
  m                    bigint           NOT NULL,
  n                    bigint           NOT NULL,
  k                    bigint           NOT NULL,
  regime               text             NOT NULL,
  daemon_id            text             NOT NULL,
  run_id               bigint           NOT NULL,
  measurement_id       bigint           NOT NULL,
  host_name            text             NOT NULL,
  device_name          text             NOT NULL DEFAULT '',
  time                 timestamptz      NOT NULL,
  point_index          integer          NOT NULL,
  before_median_ms     double precision NOT NULL,
  after_median_ms      double precision NOT NULL,
  relative_change      double precision NOT NULL,
  p_value              double precision NOT NULL,
  computed_at          timestamptz      NOT NULL DEFAULT clock_timestamp(),
  PRIMARY KEY (hardware_fingerprint, variant, dtype, m, n, k, regime, daemon_id, run_id),
  FOREIGN KEY (hardware_fingerprint, variant, dtype, m, n, k, regime)
    REFERENCES fleet_change_point_series ON DELETE CASCADE,
  FOREIGN KEY (daemon_id, run_id) REFERENCES runs (daemon_id, run_id)
);
CREATE INDEX fleet_change_points_time ON fleet_change_points (time);
)sql",
         "create the fleet schema v2 (change points)");
}

// v3: figures that do not depend on a kernel's neighbours (the daemon's schema v18). Each
// measurement carries its solo span's median, noise and TFLOPS (the variant alone at the cap)
// where it has one; a series point takes them, `figures` saying which ('solo' or 'window'), and
// a series never mixes the two: the change points are keyed by it too. The views are made again
// with the column (the dashboards read them by name). IF NOT EXISTS: a database taken back to an
// older version by hand (the migration test) may keep the columns.
void MigrateV3(PgConnection& c) {
  c.Exec(R"sql(
ALTER TABLE measurements ADD COLUMN IF NOT EXISTS solo_median_ms double precision;
ALTER TABLE measurements ADD COLUMN IF NOT EXISTS solo_noise double precision;
ALTER TABLE measurements ADD COLUMN IF NOT EXISTS solo_tflops double precision;
DROP VIEW IF EXISTS fleet_steps;
DROP VIEW IF EXISTS fleet_throughput;
DROP VIEW IF EXISTS fleet_points;
CREATE VIEW fleet_points AS
SELECT r.daemon_id, r.host_name, r.hardware_fingerprint, r.device_name, r.device_uuid,
       x.run_id, x.measurement_id, x.variant, x.dtype, x.m, x.n, x.k, x.regime,
       coalesce(r.started_at, r.created_at) AS time,
       coalesce(x.solo_median_ms, x.median_ms) AS median_ms,
       CASE WHEN x.solo_median_ms IS NULL THEN x.noise ELSE x.solo_noise END AS noise,
       coalesce(x.solo_tflops, x.tflops) AS tflops, r.tags,
       CASE WHEN x.solo_median_ms IS NULL THEN 'window' ELSE 'solo' END AS figures
FROM measurements x JOIN runs r USING (daemon_id, run_id)
WHERE x.status = 'ok' AND r.kind = 'ablation';
CREATE VIEW fleet_throughput AS
SELECT date_trunc('day', time) AS day, device_name, variant, dtype, m, n, k, regime, figures,
       count(*) AS points, count(DISTINCT daemon_id) AS daemons,
       percentile_cont(0.5) WITHIN GROUP (ORDER BY tflops) AS median_tflops,
       max(tflops) AS max_tflops
FROM fleet_points
GROUP BY 1, device_name, variant, dtype, m, n, k, regime, figures;
CREATE VIEW fleet_steps AS
SELECT *, CASE WHEN previous_median_ms > 0 THEN median_ms / previous_median_ms - 1 END
            AS relative_step
FROM (
  SELECT p.*,
         (SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY q.median_ms)
          FROM (SELECT b.median_ms FROM fleet_points b
                WHERE b.hardware_fingerprint = p.hardware_fingerprint AND b.variant = p.variant
                  AND b.dtype = p.dtype AND b.m = p.m AND b.n = p.n AND b.k = p.k
                  AND b.regime = p.regime AND b.figures = p.figures
                  AND (b.time, b.daemon_id, b.measurement_id) < (p.time, p.daemon_id,
                                                                  p.measurement_id)
                ORDER BY b.time DESC LIMIT 7) q) AS previous_median_ms
  FROM fleet_points p) s;
ALTER TABLE fleet_change_points DROP CONSTRAINT fleet_change_points_pkey;
-- The foreign key to the series has a name PostgreSQL made up (and truncated): found by what it
-- references.
DO $$
DECLARE name text;
BEGIN
  SELECT conname INTO name FROM pg_constraint
  WHERE conrelid = 'fleet_change_points'::regclass
    AND confrelid = 'fleet_change_point_series'::regclass;
  EXECUTE format('ALTER TABLE fleet_change_points DROP CONSTRAINT %I', name);
END $$;
ALTER TABLE fleet_change_point_series DROP CONSTRAINT fleet_change_point_series_pkey;
ALTER TABLE fleet_change_point_series ADD COLUMN figures text NOT NULL DEFAULT 'window';
ALTER TABLE fleet_change_points ADD COLUMN figures text NOT NULL DEFAULT 'window';
ALTER TABLE fleet_change_point_series
  ADD PRIMARY KEY (hardware_fingerprint, variant, dtype, m, n, k, regime, figures);
ALTER TABLE fleet_change_points ADD PRIMARY KEY (hardware_fingerprint, variant, dtype, m, n, k,
  regime, figures, daemon_id, run_id);
ALTER TABLE fleet_change_points ADD FOREIGN KEY (hardware_fingerprint, variant, dtype, m, n, k,
  regime, figures) REFERENCES fleet_change_point_series ON DELETE CASCADE;
)sql",
         "migrate the fleet schema to v3 (solo figures)");
}

// v4, the change points: a series is one daemon's (a node's), so a second node of one
// fingerprint, whose chip is a few percent apart, is a series of its own and never a change in
// the first one's. The stored change points are derived rows: the tables are made anew with the
// daemon in their key, and the exporters compute every series again (fleet::StaleSeries).
void MigrateV4ChangePoints(PgConnection& c) {
  c.Exec(R"sql(
DROP TABLE IF EXISTS fleet_change_points;
DROP TABLE IF EXISTS fleet_change_point_series;
CREATE TABLE fleet_change_point_series (
  hardware_fingerprint text             NOT NULL,
  variant              text             NOT NULL,
  dtype                text             NOT NULL,
  m                    bigint           NOT NULL,
  n                    bigint           NOT NULL,
  k                    bigint           NOT NULL,
  regime               text             NOT NULL,
  figures              text             NOT NULL,
  daemon_id            text             NOT NULL REFERENCES daemons (daemon_id),
  host_name            text             NOT NULL DEFAULT '',
  device_name          text             NOT NULL DEFAULT '',
  points               integer          NOT NULL,
  change_points        integer          NOT NULL,
  last_time            timestamptz,
  min_relative_change  double precision NOT NULL,
  significance         double precision NOT NULL,
  computed_at          timestamptz      NOT NULL DEFAULT clock_timestamp(),
  PRIMARY KEY (hardware_fingerprint, variant, dtype, m, n, k, regime, figures, daemon_id)
);
CREATE TABLE fleet_change_points (
  hardware_fingerprint text             NOT NULL,
  variant              text             NOT NULL,
  dtype                text             NOT NULL,
  m                    bigint           NOT NULL,
  n                    bigint           NOT NULL,
  k                    bigint           NOT NULL,
  regime               text             NOT NULL,
  figures              text             NOT NULL,
  daemon_id            text             NOT NULL,
  run_id               bigint           NOT NULL,
  measurement_id       bigint           NOT NULL,
  host_name            text             NOT NULL,
  device_name          text             NOT NULL DEFAULT '',
  time                 timestamptz      NOT NULL,
  point_index          integer          NOT NULL,
  before_median_ms     double precision NOT NULL,
  after_median_ms      double precision NOT NULL,
  relative_change      double precision NOT NULL,
  p_value              double precision NOT NULL,
  computed_at          timestamptz      NOT NULL DEFAULT clock_timestamp(),
  PRIMARY KEY (hardware_fingerprint, variant, dtype, m, n, k, regime, figures, daemon_id, run_id),
  FOREIGN KEY (hardware_fingerprint, variant, dtype, m, n, k, regime, figures, daemon_id)
    REFERENCES fleet_change_point_series ON DELETE CASCADE,
  FOREIGN KEY (daemon_id, run_id) REFERENCES runs (daemon_id, run_id)
);
CREATE INDEX fleet_change_points_time ON fleet_change_points (time);
)sql",
         "migrate the fleet schema to v4 (change points per daemon)");
}

// v4, the views: fleet_steps compares a point with its own daemon's before it, and
// fleet_node_comparison puts the daemons of one fingerprint side by side (each one's median
// against the median of the fingerprint's daemons): the spread between chips, seen as such.
void MigrateV4Views(PgConnection& c) {
  c.Exec(R"sql(
DROP VIEW IF EXISTS fleet_node_comparison;
DROP VIEW IF EXISTS fleet_steps;
DROP VIEW IF EXISTS fleet_throughput;
DROP VIEW IF EXISTS fleet_daemons;
DROP VIEW IF EXISTS fleet_points;
CREATE VIEW fleet_points AS
SELECT r.daemon_id, r.host_name, r.hardware_fingerprint, r.device_name, r.device_uuid,
       x.run_id, x.measurement_id, x.variant, x.dtype, x.m, x.n, x.k, x.regime,
       coalesce(r.started_at, r.created_at) AS time,
       coalesce(x.solo_median_ms, x.median_ms) AS median_ms,
       CASE WHEN x.solo_median_ms IS NULL THEN x.noise ELSE x.solo_noise END AS noise,
       coalesce(x.solo_tflops, x.tflops) AS tflops, r.tags,
       CASE WHEN x.solo_median_ms IS NULL THEN 'window' ELSE 'solo' END AS figures
FROM measurements x JOIN runs r USING (daemon_id, run_id)
WHERE x.status = 'ok' AND r.kind = 'ablation';
CREATE VIEW fleet_throughput AS
SELECT date_trunc('day', time) AS day, device_name, variant, dtype, m, n, k, regime, figures,
       count(*) AS points, count(DISTINCT daemon_id) AS daemons,
       percentile_cont(0.5) WITHIN GROUP (ORDER BY tflops) AS median_tflops,
       max(tflops) AS max_tflops
FROM fleet_points
GROUP BY 1, device_name, variant, dtype, m, n, k, regime, figures;
CREATE VIEW fleet_steps AS
SELECT *, CASE WHEN previous_median_ms > 0 THEN median_ms / previous_median_ms - 1 END
            AS relative_step
FROM (
  SELECT p.*,
         (SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY q.median_ms)
          FROM (SELECT b.median_ms FROM fleet_points b
                WHERE b.hardware_fingerprint = p.hardware_fingerprint AND b.variant = p.variant
                  AND b.dtype = p.dtype AND b.m = p.m AND b.n = p.n AND b.k = p.k
                  AND b.regime = p.regime AND b.figures = p.figures
                  AND b.daemon_id = p.daemon_id
                  AND (b.time, b.measurement_id) < (p.time, p.measurement_id)
                ORDER BY b.time DESC LIMIT 7) q) AS previous_median_ms
  FROM fleet_points p) s;
CREATE VIEW fleet_daemons AS
SELECT d.daemon_id, d.host_name, d.node_labels, d.first_export_at, d.last_export_at,
       count(r.run_id) AS runs, max(r.finished_at) AS last_run_finished_at,
       count(*) FILTER (WHERE r.state = 'failed') AS failed_runs
FROM daemons d LEFT JOIN runs r USING (daemon_id)
GROUP BY d.daemon_id;
CREATE VIEW fleet_node_comparison AS
WITH per_node AS (
  SELECT hardware_fingerprint, variant, dtype, m, n, k, regime, figures, daemon_id,
         max(host_name) AS host_name, max(device_name) AS device_name,
         count(DISTINCT run_id) AS runs, max(time) AS last_time,
         percentile_cont(0.5) WITHIN GROUP (ORDER BY median_ms) AS median_ms,
         percentile_cont(0.5) WITHIN GROUP (ORDER BY tflops) AS median_tflops
  FROM fleet_points
  GROUP BY hardware_fingerprint, variant, dtype, m, n, k, regime, figures, daemon_id),
of_fingerprint AS (
  SELECT hardware_fingerprint, variant, dtype, m, n, k, regime, figures, count(*) AS nodes,
         percentile_cont(0.5) WITHIN GROUP (ORDER BY median_ms) AS fingerprint_median_ms
  FROM per_node GROUP BY hardware_fingerprint, variant, dtype, m, n, k, regime, figures)
SELECT p.*, f.nodes, f.fingerprint_median_ms,
       p.median_ms / nullif(f.fingerprint_median_ms, 0) - 1 AS relative_to_fingerprint
FROM per_node p JOIN of_fingerprint f
  USING (hardware_fingerprint, variant, dtype, m, n, k, regime, figures);
)sql",
         "migrate the fleet schema to v4 (views per daemon)");
}

// v5, the L2 mode: a measurement's (cold_rotated, cold, hot; '' unknown) in a column of its own,
// filled for the rows already there from their messages, and part of a series' key as in the
// daemon's own store (history::SeriesRow::l2): a night measured with the L2 hot is not a step in
// the cold series. The change points are derived rows: their tables are made anew with the mode
// in their key, and the exporters compute every series again (fleet::StaleSeries). A database
// made as an older version by hand (the migration tests) may have the column already.
void MigrateV5(PgConnection& c) {
  c.Exec(R"sql(
ALTER TABLE measurements ADD COLUMN IF NOT EXISTS l2 text NOT NULL DEFAULT '';
UPDATE measurements SET l2 = CASE measurement->>'l2'
    WHEN 'L2_MODE_COLD_ROTATED' THEN 'cold_rotated' WHEN 'L2_MODE_COLD' THEN 'cold'
    WHEN 'L2_MODE_HOT' THEN 'hot' ELSE '' END
  WHERE measurement ? 'l2';
DROP VIEW IF EXISTS fleet_node_comparison;
DROP VIEW IF EXISTS fleet_steps;
DROP VIEW IF EXISTS fleet_throughput;
DROP VIEW IF EXISTS fleet_points;
DROP TABLE IF EXISTS fleet_change_points;
DROP TABLE IF EXISTS fleet_change_point_series;
CREATE TABLE fleet_change_point_series (
  hardware_fingerprint text             NOT NULL,
  variant              text             NOT NULL,
  dtype                text             NOT NULL,
  m                    bigint           NOT NULL,
  n                    bigint           NOT NULL,
  k                    bigint           NOT NULL,
  regime               text             NOT NULL,
  figures              text             NOT NULL,
  l2                   text             NOT NULL,
  daemon_id            text             NOT NULL REFERENCES daemons (daemon_id),
  host_name            text             NOT NULL DEFAULT '',
  device_name          text             NOT NULL DEFAULT '',
  points               integer          NOT NULL,
  change_points        integer          NOT NULL,
  last_time            timestamptz,
  min_relative_change  double precision NOT NULL,
  significance         double precision NOT NULL,
  computed_at          timestamptz      NOT NULL DEFAULT clock_timestamp(),
  PRIMARY KEY (hardware_fingerprint, variant, dtype, m, n, k, regime, figures, l2, daemon_id)
);
CREATE TABLE fleet_change_points (
  hardware_fingerprint text             NOT NULL,
  variant              text             NOT NULL,
  dtype                text             NOT NULL,
  m                    bigint           NOT NULL,
  n                    bigint           NOT NULL,
  k                    bigint           NOT NULL,
  regime               text             NOT NULL,
  figures              text             NOT NULL,
  l2                   text             NOT NULL,
  daemon_id            text             NOT NULL,
  run_id               bigint           NOT NULL,
  measurement_id       bigint           NOT NULL,
  host_name            text             NOT NULL,
  device_name          text             NOT NULL DEFAULT '',
  time                 timestamptz      NOT NULL,
  point_index          integer          NOT NULL,
  before_median_ms     double precision NOT NULL,
  after_median_ms      double precision NOT NULL,
  relative_change      double precision NOT NULL,
  p_value              double precision NOT NULL,
  computed_at          timestamptz      NOT NULL DEFAULT clock_timestamp(),
  PRIMARY KEY (hardware_fingerprint, variant, dtype, m, n, k, regime, figures, l2, daemon_id,
               run_id),
  FOREIGN KEY (hardware_fingerprint, variant, dtype, m, n, k, regime, figures, l2, daemon_id)
    REFERENCES fleet_change_point_series ON DELETE CASCADE,
  FOREIGN KEY (daemon_id, run_id) REFERENCES runs (daemon_id, run_id)
);
CREATE INDEX fleet_change_points_time ON fleet_change_points (time);
CREATE VIEW fleet_points AS
SELECT r.daemon_id, r.host_name, r.hardware_fingerprint, r.device_name, r.device_uuid,
       x.run_id, x.measurement_id, x.variant, x.dtype, x.m, x.n, x.k, x.regime,
       coalesce(r.started_at, r.created_at) AS time,
       coalesce(x.solo_median_ms, x.median_ms) AS median_ms,
       CASE WHEN x.solo_median_ms IS NULL THEN x.noise ELSE x.solo_noise END AS noise,
       coalesce(x.solo_tflops, x.tflops) AS tflops, r.tags,
       CASE WHEN x.solo_median_ms IS NULL THEN 'window' ELSE 'solo' END AS figures, x.l2
FROM measurements x JOIN runs r USING (daemon_id, run_id)
WHERE x.status = 'ok' AND r.kind = 'ablation';
CREATE VIEW fleet_throughput AS
SELECT date_trunc('day', time) AS day, device_name, variant, dtype, m, n, k, regime, figures, l2,
       count(*) AS points, count(DISTINCT daemon_id) AS daemons,
       percentile_cont(0.5) WITHIN GROUP (ORDER BY tflops) AS median_tflops,
       max(tflops) AS max_tflops
FROM fleet_points
GROUP BY 1, device_name, variant, dtype, m, n, k, regime, figures, l2;
CREATE VIEW fleet_steps AS
SELECT *, CASE WHEN previous_median_ms > 0 THEN median_ms / previous_median_ms - 1 END
            AS relative_step
FROM (
  SELECT p.*,
         (SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY q.median_ms)
          FROM (SELECT b.median_ms FROM fleet_points b
                WHERE b.hardware_fingerprint = p.hardware_fingerprint AND b.variant = p.variant
                  AND b.dtype = p.dtype AND b.m = p.m AND b.n = p.n AND b.k = p.k
                  AND b.regime = p.regime AND b.figures = p.figures AND b.l2 = p.l2
                  AND b.daemon_id = p.daemon_id
                  AND (b.time, b.measurement_id) < (p.time, p.measurement_id)
                ORDER BY b.time DESC LIMIT 7) q) AS previous_median_ms
  FROM fleet_points p) s;
CREATE VIEW fleet_node_comparison AS
WITH per_node AS (
  SELECT hardware_fingerprint, variant, dtype, m, n, k, regime, figures, l2, daemon_id,
         max(host_name) AS host_name, max(device_name) AS device_name,
         count(DISTINCT run_id) AS runs, max(time) AS last_time,
         percentile_cont(0.5) WITHIN GROUP (ORDER BY median_ms) AS median_ms,
         percentile_cont(0.5) WITHIN GROUP (ORDER BY tflops) AS median_tflops
  FROM fleet_points
  GROUP BY hardware_fingerprint, variant, dtype, m, n, k, regime, figures, l2, daemon_id),
of_fingerprint AS (
  SELECT hardware_fingerprint, variant, dtype, m, n, k, regime, figures, l2, count(*) AS nodes,
         percentile_cont(0.5) WITHIN GROUP (ORDER BY median_ms) AS fingerprint_median_ms
  FROM per_node GROUP BY hardware_fingerprint, variant, dtype, m, n, k, regime, figures, l2)
SELECT p.*, f.nodes, f.fingerprint_median_ms,
       p.median_ms / nullif(f.fingerprint_median_ms, 0) - 1 AS relative_to_fingerprint
FROM per_node p JOIN of_fingerprint f
  USING (hardware_fingerprint, variant, dtype, m, n, k, regime, figures, l2);
)sql",
         "migrate the fleet schema to v5 (the L2 mode)");
}

// The objects of a fleet database of v3 or before, in the order they can be moved.
constexpr const char* kLegacyTables[] = {"daemons",
                                         "runs",
                                         "measurements",
                                         "verifications",
                                         "fleet_change_point_series",
                                         "fleet_change_points",
                                         "fleet_schema"};
constexpr const char* kLegacyViews[] = {"fleet_steps", "fleet_throughput", "fleet_daemons",
                                        "fleet_points"};

bool Exists(PgConnection& c, const std::string& qualified_name) {
  return c.Query("SELECT to_regclass($1) IS NOT NULL", {qualified_name},
                 "look for " + qualified_name)
             .Text(0, 0) == "t";
}

// The schema (quoted as an identifier) of a fleet_schema table of v3 or before that the
// search_path finds; "" when there is none.
std::string LegacySchema(PgConnection& c) {
  PgResult r = c.Query(
      "SELECT quote_ident(n.nspname) FROM pg_class t JOIN pg_namespace n ON n.oid = t.relnamespace "
      "WHERE t.oid = to_regclass('fleet_schema') AND n.nspname <> $1",
      {std::string(kFleetSchemaName)}, "look for an older fleet schema");
  return r.rows() == 0 ? "" : r.Text(0, 0);
}

int RecordedVersion(PgConnection& c, const std::string& table) {
  return static_cast<int>(
      c.Query("SELECT coalesce(max(version), 0) FROM " + table, {}, "read its version").Int(0, 0));
}

// Moves the tables of v3 or before from `legacy` into kFleetSchemaName with their rows, indexes
// and constraints; the views are dropped (v4 makes them again). A fleet_schema of version 4 stays
// behind for the daemons not yet upgraded (MigrateFleet says why).
void MoveIntoFleetSchema(PgConnection& c, const std::string& legacy) {
  for (const char* view : kLegacyViews) {
    c.Exec("DROP VIEW IF EXISTS " + legacy + "." + view,
           "drop the older view " + legacy + "." + view);
  }
  for (const char* table : kLegacyTables) {
    if (!Exists(c, legacy + "." + table)) continue;
    c.Exec("ALTER TABLE " + legacy + "." + table + " SET SCHEMA " + kFleetSchemaName,
           "move " + legacy + "." + table + " into schema " + kFleetSchemaName);
  }
  c.Exec("CREATE TABLE " + legacy + ".fleet_schema (version integer NOT NULL); INSERT INTO " +
             legacy + ".fleet_schema VALUES (" + std::to_string(kFleetSchemaVersion) +
             "); COMMENT ON TABLE " + legacy +
             ".fleet_schema IS 'The fleet''s tables are in schema " + kFleetSchemaName +
             " since fleet schema v4: this row keeps older daemons from " +
             "making them here again. Drop it once every daemon is upgraded.'",
         "leave a version marker in " + legacy);
}

}  // namespace

int FleetSchemaVersion(PgConnection& connection) {
  const std::string current = std::string(kFleetSchemaName) + ".fleet_schema";
  if (Exists(connection, current)) return RecordedVersion(connection, current);
  if (Exists(connection, "fleet_schema")) return RecordedVersion(connection, "fleet_schema");
  return 0;
}

void MigrateFleet(PgConnection& connection) {
  PgTransaction transaction(connection);
  connection.Exec(kMigrationLock, "take the migration lock");
  const std::string current = std::string(kFleetSchemaName) + ".fleet_schema";
  const bool moved = Exists(connection, current);
  std::string legacy = moved ? "" : LegacySchema(connection);
  int version = moved ? RecordedVersion(connection, current) : 0;
  if (!legacy.empty()) {
    version = RecordedVersion(connection, legacy + ".fleet_schema");
    // A marker (v4 on: the tables of v3 or before are the only ones ever outside the fleet's
    // schema) whose tables were dropped with their schema: a database to make anew.
    if (version >= 4) {
      version = 0;
      legacy.clear();
    }
  }
  if (version > kFleetSchemaVersion) {
    throw FleetError("the fleet database has schema version " + std::to_string(version) +
                     ", newer than version " + std::to_string(kFleetSchemaVersion) +
                     " that this ablationd knows; nothing was exported: upgrade ablationd");
  }
  if (version == kFleetSchemaVersion) return;  // the destructor rolls back the empty work
  // CREATE SCHEMA wants CREATE on the database even with IF NOT EXISTS: a schema an
  // administrator made (and gave this role) is used as it is.
  PgResult schema = connection.Query("SELECT to_regnamespace($1) IS NULL", {kFleetSchemaName},
                                     "look for schema " + std::string(kFleetSchemaName));
  if (schema.Text(0, 0) == "t") {
    connection.Exec(std::string("CREATE SCHEMA ") + kFleetSchemaName,
                    "create schema " + std::string(kFleetSchemaName));
  }
  if (!legacy.empty()) MoveIntoFleetSchema(connection, legacy);
  // The ladder's unqualified DDL lands in the fleet's schema (and the views bind to its tables);
  // LOCAL: until the commit only.
  connection.Exec(std::string("SET LOCAL search_path = ") + kFleetSchemaName,
                  "use schema " + std::string(kFleetSchemaName));
  if (version < 1) MigrateV1(connection);
  if (version < 2) MigrateV2(connection);
  if (version < 3) MigrateV3(connection);
  if (version < 4) {
    MigrateV4ChangePoints(connection);
    MigrateV4Views(connection);
  }
  if (version < 5) MigrateV5(connection);
  connection.Exec("CREATE TABLE IF NOT EXISTS " + current + " (version integer NOT NULL)",
                  "create fleet_schema");
  connection.Query("DELETE FROM " + current, {}, "clear the version");
  connection.Query("INSERT INTO " + current + " (version) VALUES ($1)",
                   {std::to_string(kFleetSchemaVersion)}, "record the version");
  transaction.Commit();
}

void RequireFleetSchema(PgConnection& connection) {
  const int version = FleetSchemaVersion(connection);
  if (version == 0) {
    throw FleetError(
        "the fleet database has no fleet schema yet: no daemon has exported to it (ablationd "
        "--fleet-db creates it)");
  }
  if (version != kFleetSchemaVersion) {
    throw FleetError("the fleet database has schema version " + std::to_string(version) +
                     "; this client reads version " + std::to_string(kFleetSchemaVersion) +
                     (version > kFleetSchemaVersion ? ": upgrade ablation-client"
                                                    : ": upgrade the daemons that export to it"));
  }
}

}  // namespace ablation::fleet
