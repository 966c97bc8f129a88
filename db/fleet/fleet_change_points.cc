#include "db/fleet/fleet_change_points.h"

#include <cstdio>

#include "common/history/history.h"
#include "db/fleet/fleet_reader.h"

namespace ablation::fleet {
namespace {

constexpr const char* kSeriesWhere =
    " WHERE hardware_fingerprint = $1 AND variant = $2 AND dtype = $3 AND m = $4 AND n = $5 "
    "AND k = $6 AND regime = $7 AND figures = $8 AND l2 = $9 AND daemon_id = $10";

std::vector<PgParam> KeyParams(const FleetSeriesKey& s) {
  return {s.fingerprint,
          s.variant,
          s.dtype,
          std::to_string(s.m),
          std::to_string(s.n),
          std::to_string(s.k),
          s.regime,
          s.figures,
          s.l2,
          s.daemon_id};
}

std::string Real(double v) {
  char buffer[40];
  std::snprintf(buffer, sizeof buffer, "%.17g", v);
  return buffer;
}

// The device name of a run's rows (the series' rows are one daemon's: a run id names one run).
std::string DeviceOfRun(const std::vector<history::SeriesRow>& rows, int64_t run_id) {
  for (const history::SeriesRow& row : rows)
    if (row.run_id == run_id) return row.device_name;
  return "";
}

std::vector<FleetSeriesKey> Keys(const PgResult& r) {
  std::vector<FleetSeriesKey> out;
  for (int i = 0; i < r.rows(); ++i) {
    out.push_back({r.Text(i, 0), r.Text(i, 1), r.Text(i, 2), r.Int(i, 3), r.Int(i, 4), r.Int(i, 5),
                   r.Text(i, 6), r.Text(i, 7), r.Text(i, 8), r.Text(i, 9)});
  }
  return out;
}

}  // namespace

std::string FleetSeriesKey::Name() const {
  return variant + " " + dtype + " " + std::to_string(m) + "x" + std::to_string(n) + "x" +
         std::to_string(k) + (regime.empty() ? "" : " " + regime) + " (" + figures +
         (l2.empty() ? "" : ", L2 " + l2) + ") on " +
         (fingerprint.empty() ? "no fingerprint" : fingerprint) + ", daemon " +
         daemon_id.substr(0, 8);
}

std::vector<FleetSeriesKey> SeriesOfRun(PgConnection& c, const std::string& daemon_id,
                                        int64_t run_id) {
  return Keys(c.Query(
      "SELECT DISTINCT hardware_fingerprint, variant, dtype, m, n, k, regime, figures, l2, "
      "daemon_id FROM ablationd.fleet_points WHERE daemon_id = $1 AND run_id = $2 "
      "ORDER BY 1, 2, 3, 4, 5, 6, 7, 8, 9, 10",
      {daemon_id, std::to_string(run_id)}, "find the series of run " + std::to_string(run_id)));
}

std::vector<FleetSeriesKey> StaleSeries(PgConnection& c, int limit) {
  return Keys(c.Query(
      R"sql(SELECT q.hardware_fingerprint, q.variant, q.dtype, q.m, q.n, q.k, q.regime, q.figures,
       q.l2, q.daemon_id
FROM (SELECT hardware_fingerprint, variant, dtype, m, n, k, regime, figures, l2, daemon_id,
             count(DISTINCT run_id) AS points
      FROM ablationd.fleet_points GROUP BY 1, 2, 3, 4, 5, 6, 7, 8, 9, 10) q
LEFT JOIN ablationd.fleet_change_point_series s
  USING (hardware_fingerprint, variant, dtype, m, n, k, regime, figures, l2, daemon_id)
WHERE s.points IS DISTINCT FROM q.points
ORDER BY 1, 2, 3, 4, 5, 6, 7, 8, 9, 10
LIMIT $1)sql",
      {std::to_string(limit)}, "find the series whose change points are not computed"));
}

SeriesChangePoints RecomputeChangePoints(PgConnection& c, const FleetSeriesKey& series,
                                         const history::ChangePointOptions& options) {
  const std::vector<PgParam> key = KeyParams(series);
  const std::string name = series.Name();
  PgTransaction transaction(c);
  // One lock per series (its key hashed), held to the commit: exporters replacing the same
  // series take turns, and each reads the rows committed before it got the lock.
  std::string lock_key;
  for (const PgParam& p : key) lock_key += *p + '\x1f';
  c.Query("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", {lock_key},
          "lock the change points of " + name);
  const std::vector<history::SeriesRow> rows = ReadSeriesRows(c, kSeriesWhere, key);
  // The series' change points go with its row (ON DELETE CASCADE).
  c.Query(std::string("DELETE FROM ablationd.fleet_change_point_series") + kSeriesWhere, key,
          "clear the change points of " + name);
  SeriesChangePoints result;
  if (rows.empty()) {
    transaction.Commit();
    return result;
  }
  // One daemon's rows, named by the host it exported from last (ReadSeriesRows).
  const std::string& node = rows.back().node;
  const std::string host_name = node.substr(0, node.rfind('/'));
  // The client's own computation over the same rows (client/fleet.cc FleetHistory).
  const v1::HistoryResponse history = history::BuildHistory(rows, options);
  if (history.series_size() != 1) {
    throw FleetError("the rows of " + name + " made " + std::to_string(history.series_size()) +
                     " series, not one");
  }
  const v1::Series& s = history.series(0);
  result.points = s.points_size();
  result.change_points = s.change_points_size();
  std::vector<PgParam> params = key;
  params.insert(params.end(), {host_name, s.device_name(), std::to_string(result.points),
                               std::to_string(result.change_points),
                               std::to_string(s.points(s.points_size() - 1).time_ms()),
                               Real(options.min_relative_change), Real(options.significance)});
  c.Query(R"sql(INSERT INTO ablationd.fleet_change_point_series (hardware_fingerprint, variant,
  dtype, m, n, k, regime, figures, l2, daemon_id, host_name, device_name, points, change_points,
  last_time, min_relative_change, significance)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14,
  to_timestamp($15::double precision / 1000), $16, $17))sql",
          params, "record the change points of " + name);
  for (const v1::ChangePoint& change : s.change_points()) {
    const v1::HistoryPoint& p = s.points(change.index());
    std::vector<PgParam> values = key;
    values.insert(values.end(), {std::to_string(p.run_id()), std::to_string(p.measurement_id()),
                                 host_name, DeviceOfRun(rows, p.run_id()),
                                 std::to_string(p.time_ms()), std::to_string(change.index()),
                                 Real(change.before_median_ms()), Real(change.after_median_ms()),
                                 Real(change.relative_change()), Real(change.p_value())});
    c.Query(R"sql(INSERT INTO ablationd.fleet_change_points (hardware_fingerprint, variant, dtype,
  m, n, k, regime, figures, l2, daemon_id, run_id, measurement_id, host_name, device_name, time,
  point_index, before_median_ms, after_median_ms, relative_change, p_value)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14,
  to_timestamp($15::double precision / 1000), $16, $17, $18, $19, $20))sql",
            values, "record a change point of " + name);
  }
  transaction.Commit();
  return result;
}

}  // namespace ablation::fleet
