// Reads of the fleet database for ablation-client (history, results, compare --fleet-db), each
// in a READ ONLY transaction: the client can look across a fleet's daemons and never write.
// A daemon is named in its rows as "host/abcd1234" (host name, the first 8 hex digits of its
// identity), since run ids are each daemon's own. Variants are named as to a daemon: a full name,
// a glob, or a short ablation name (L1_R1_s3), which the reads resolve (ResolveVariant).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ablation/v1/ablation.pb.h"
#include "common/history/series_row.h"
#include "db/fleet/pg.h"

namespace ablation::fleet {

struct FleetSeriesFilter {
  std::string variant_glob;  // required: a name, a short name or a glob (*, ?, [...])
  std::string dtype;         // '' any
  int64_t m = 0, n = 0, k = 0;
  std::string regime;  // stored word ('burst'); '' any
  std::string tag;
  int64_t since_ms = 0;
  std::string node;  // a host name or a daemon id's prefix; '' every daemon
};

struct FleetMeasurementFilter {
  std::string variant_glob;  // '' any; else as FleetSeriesFilter's
  std::string dtype;
  int64_t m = 0, n = 0, k = 0;
  std::string tag;
  int64_t since_ms = 0, until_ms = 0;
  std::string status;  // stored word ('ok'); '' any
  std::string node;
  int64_t run_id = 0;  // with node: that daemon's run
  int limit = 100;     // 0: all
  bool newest_first = true;
  bool samples = false;
};

struct FleetMeasurement {
  std::string node;
  v1::Measurement measurement;
};

struct FleetRunFilter {
  std::string tag;
  std::string state;  // stored word ('succeeded'); '' any
  std::string node;
  int limit = 50;  // 0: all
};

struct FleetRun {
  std::string node;
  v1::Run run;  // as the daemon exported it (its ok / failed counts included)
};

class FleetReader {
 public:
  /// Connects and checks the schema version; throws FleetError saying what is wrong.
  explicit FleetReader(const std::string& conninfo);

  /// What stored variant names are matched against for `selector`: a glob as given, a short
  /// ablation name as its canonical one (common/variant_names.h), a name as given. A name (not a
  /// glob) that no measurement of the fleet has throws FleetError naming the nearest ones, so
  /// that a typo is an error rather than an empty table. SeriesRows and Measurements call it.
  std::string ResolveVariant(const std::string& selector);

  /// Ok measurements of ablation runs ordered by series (fingerprint, variant, dtype, shape,
  /// regime, figures, daemon), then by the run's start and id: as history::BuildHistory reads
  /// them, one series per daemon.
  std::vector<history::SeriesRow> SeriesRows(const FleetSeriesFilter& filter);
  /// `more` tells whether the limit cut the answer short.
  std::vector<FleetMeasurement> Measurements(const FleetMeasurementFilter& filter, bool* more);
  /// One daemon's run with its measurements (samples included) and verifications; `node` as in
  /// the filters. Throws FleetError when no daemon, or more than one, matches, or no such run.
  v1::GetRunResponse Run(const std::string& node, int64_t run_id);
  /// Every daemon's runs, newest first (by their start, else their creation); `more` tells
  /// whether the limit cut the answer short.
  std::vector<FleetRun> Runs(const FleetRunFilter& filter, bool* more);

 private:
  std::unique_ptr<PgConnection> connection_;
};

/// The rows of fleet_points that `where_sql` keeps (" WHERE ..." over the view's columns with
/// $1, $2, ... bound to `params`; "" for all), ordered as FleetReader::SeriesRows orders them, in
/// the caller's transaction; each row's daemon's full id in `daemon_ids` when given. The client's
/// history and the exporter's change points (fleet_change_points.h) read series through it alike.
std::vector<history::SeriesRow> ReadSeriesRows(PgConnection& connection,
                                               const std::string& where_sql,
                                               const std::vector<PgParam>& params,
                                               std::vector<std::string>* daemon_ids = nullptr);

/// A glob as a PostgreSQL regular expression anchored at both ends ('abl_*' -> '^abl_.*$').
std::string GlobToRegex(const std::string& glob);

}  // namespace ablation::fleet
