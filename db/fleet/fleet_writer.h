// One finished run, its measurements and verifications, written to the fleet database in one
// PostgreSQL transaction, idempotently: the key is (daemon_id, run_id), and a run already there
// is left as it is (ON CONFLICT DO NOTHING), so an export repeated after a crash between
// PostgreSQL's commit and the outbox's delete writes nothing twice.
#pragma once

#include <string>
#include <vector>

#include "ablation/v1/ablation.pb.h"
#include "db/fleet/pg.h"

namespace ablation::fleet {

/// Who exports: the daemon's identity (its SQLite's daemon_identity) and where it runs.
struct DaemonIdentity {
  std::string daemon_id;
  std::string host_name;
  std::string node_labels;
};

/// The run as GetRun gives it: with samples (compare reads them) and counters.
struct RunExport {
  v1::Run run;
  std::vector<v1::Measurement> measurements;
  std::vector<v1::VerifyResult> verifications;
};

enum class ExportOutcome {
  kExported,      ///< written now
  kAlreadyThere,  ///< a previous attempt committed it; nothing written
};

/// Throws FleetError (the transaction rolled back) when PostgreSQL refuses or is away.
ExportOutcome ExportRun(PgConnection& connection, const DaemonIdentity& daemon,
                        const RunExport& run);

}  // namespace ablation::fleet
