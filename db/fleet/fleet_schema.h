// The fleet database's schema in PostgreSQL, as a ladder of versions recorded in its table
// fleet_schema, created and migrated by the daemons that export to it (db/schema.md, "Fleet
// database"). Tables are keyed by (daemon_id, run_id): run ids are each daemon's own.
//
// Since v4 every table and view is in the PostgreSQL schema `ablationd` (kFleetSchemaName), not in
// the connection's default (`public` of a database others share too), and every statement names
// it, so that neither a role's search_path nor a connection pooler decides where a row goes.
#pragma once

#include "db/fleet/pg.h"

namespace ablation::fleet {

inline constexpr int kFleetSchemaVersion = 5;
/// Where the fleet's tables and views are (v4). The SQL here and in the dashboards
/// (deploy/k8s/grafana/) spells it out: "ablationd.runs".
inline constexpr const char* kFleetSchemaName = "ablationd";

/// The recorded version: ablationd.fleet_schema's, else (a database of v3 or before) that of the
/// fleet_schema table the connection's search_path finds; 0 when there is neither.
int FleetSchemaVersion(PgConnection& connection);

/// Brings the database to kFleetSchemaVersion in one transaction under an advisory lock, so two
/// daemons starting at once do not both migrate. A newer version is refused (FleetError naming
/// both): an older daemon must not write rows a newer schema would misread. A database of v3 or
/// before has its tables where the search_path put them (public): they are moved into
/// `ablationd` with every row (ALTER TABLE ... SET SCHEMA), and a fleet_schema table of version
/// 4 or later is left in their old place, so that a daemon not yet upgraded refuses to export (its
/// runs wait in its outbox) instead of making the tables there anew.
void MigrateFleet(PgConnection& connection);

/// For readers: FleetError unless the database is at exactly kFleetSchemaVersion, saying what to
/// do (no daemon exported yet; upgrade the client).
void RequireFleetSchema(PgConnection& connection);

}  // namespace ablation::fleet
