// The schema, as a ladder of versions recorded in PRAGMA user_version.
#pragma once

#include "db/sqlite.h"

namespace ablation::db {

// The version this code writes and reads. Raise it with a new MigrateVn, never by editing an
// older one: databases in the field hold every older version.
inline constexpr int kSchemaVersion = 23;

// PRAGMA user_version of the open database (0: empty, never migrated).
int SchemaVersion(Connection& connection);

// Throws Error(kIncompatible) naming both versions when the database is newer than this code:
// an older daemon must not write rows a newer schema would misread. Writes nothing.
void RefuseNewerSchema(Connection& connection);

// Brings a read-write connection to kSchemaVersion in one IMMEDIATE transaction, so a crash
// mid-way leaves the previous version intact and two daemons opening at once cannot both
// migrate. Expects WAL, busy_timeout and foreign_keys to be set already.
void Migrate(Connection& connection);

}  // namespace ablation::db
