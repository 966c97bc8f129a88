// One stored ok measurement as a point of a series: what BuildHistory (history.h) reads. The
// daemon reads these from its SQLite (db::Store::SeriesRows), the client from a fleet's
// PostgreSQL (db/fleet/fleet_reader.h); both hand them over ordered by series, then by time.
#pragma once

#include <cstdint>
#include <string>

namespace ablation::history {

struct SeriesRow {
  std::string fingerprint, variant, dtype, regime, device_name, device_uuid;
  int64_t m = 0, n = 0, k = 0;
  int64_t run_id = 0, measurement_id = 0, time_ms = 0;
  double median_ms = 0, noise = 0, tflops = 0;
  /// What the point's figures are: "solo" (the variant alone at the cap: Measurement.solo, v18)
  /// or "window" (its window's; rows without a solo span). A series never mixes the two: a
  /// figure taken beside other kernels is not the same quantity as one taken alone.
  std::string figures = "window";
  /// The L2 mode its samples ran under, as stored ("cold_rotated", "cold", "hot"; "" unknown):
  /// part of the series' key, like the regime.
  std::string l2;
  /// The daemon that measured it, where rows come from several ("" from one daemon's store):
  /// part of the series' key, so rows come ordered by it before their time.
  std::string node;
  /// A user variant's build, its kernel's version and source digest (0, 0, "" otherwise, and
  /// from a fleet's database, which keeps no builds).
  int64_t user_build_id = 0, version = 0;
  std::string source_sha256;
};

}  // namespace ablation::history
