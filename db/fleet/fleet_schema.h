// The fleet database's schema in PostgreSQL, as a ladder of versions recorded in its table
// fleet_schema, created and migrated by the daemons that export to it (db/schema.md, "Fleet
// database"). Tables are keyed by (daemon_id, run_id): run ids are each daemon's own.
#pragma once

#include "db/fleet/pg.h"

namespace ablation::fleet {

inline constexpr int kFleetSchemaVersion = 3;

/// The recorded version: 0 when the database has no fleet_schema table yet.
int FleetSchemaVersion(PgConnection& connection);

/// Brings the database to kFleetSchemaVersion in one transaction under an advisory lock, so two
/// daemons starting at once do not both migrate. A newer version is refused (FleetError naming
/// both): an older daemon must not write rows a newer schema would misread.
void MigrateFleet(PgConnection& connection);

/// For readers: FleetError unless the database is at exactly kFleetSchemaVersion, saying what to
/// do (no daemon exported yet; upgrade the client).
void RequireFleetSchema(PgConnection& connection);

}  // namespace ablation::fleet
