// The change points of the fleet's series, kept in PostgreSQL (ablationd.fleet_change_points and
// ablationd.fleet_change_point_series, schema v2, keyed by daemon since v4) for the dashboards:
// computed where the data is, by the exporters, after a run is committed. A series is one
// hardware fingerprint's (never mixed), variant, dtype, shape, regime, figures and L2 mode (v5) on
// one daemon:
// two nodes of one fingerprint differ by their chips' spread, which is no change over time, so
// each node's points are a series of their own (fleet_node_comparison sets them side by side). It
// is read from fleet_points exactly as `ablation-client --fleet-db ... history VARIANT` reads it,
// and run through the same history::BuildHistory (E-divisive means, permutation test, noise
// floor: common/history), so the table holds what the client reports for the whole series.
//
// A series is replaced in one transaction under an advisory lock of its own: two exporters
// computing it at once wait for each other, and the later one, reading after the earlier
// committed, leaves the answer over every committed run. Computing again is idempotent.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/history/change_points.h"
#include "db/fleet/pg.h"

namespace ablation::fleet {

struct FleetSeriesKey {
  std::string fingerprint, variant, dtype;
  int64_t m = 0, n = 0, k = 0;
  std::string regime;              // stored word ('burst'), '' when none
  std::string figures = "window";  // 'solo' or 'window' (fleet_points.figures)
  std::string l2;                  // the L2 mode as stored ('cold_rotated'), '' when none (v5)
  std::string daemon_id;           // the node's daemon: its points alone are the series

  bool operator==(const FleetSeriesKey&) const = default;
  auto operator<=>(const FleetSeriesKey&) const = default;
  /// "abl_L1_... bf16 256x256x256 burst (window, L2 cold_rotated) on 0123456789abcdef, daemon
  /// feedface" for messages.
  std::string Name() const;
};

/// The series that a daemon's run has a point in (its ok measurements of an ablation run).
std::vector<FleetSeriesKey> SeriesOfRun(PgConnection& connection, const std::string& daemon_id,
                                        int64_t run_id);

/// Series whose stored change points are missing or older than their points: never computed (a
/// database migrated from v1, a computation that failed) or computed over another number of runs.
std::vector<FleetSeriesKey> StaleSeries(PgConnection& connection, int limit = 1000);

struct SeriesChangePoints {
  int points = 0;         ///< the series' points (runs) read
  int change_points = 0;  ///< rows written to fleet_change_points
};

/// Reads the series (one daemon's points), finds its change points and replaces the series' rows
/// in one transaction (a series with no points left: its rows removed). Throws FleetError.
SeriesChangePoints RecomputeChangePoints(PgConnection& connection, const FleetSeriesKey& series,
                                         const history::ChangePointOptions& options = {});

}  // namespace ablation::fleet
