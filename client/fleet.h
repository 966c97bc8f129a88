// ablation-client's reads of a fleet's PostgreSQL (--fleet-db, or ABLATION_FLEET_DB): history,
// results and compare across the daemons that export to it, read-only (db/fleet/fleet_reader.h),
// with no daemon reached. A daemon is named "host/abcd1234" (its host name and the first digits
// of its identity); a run as "NODE:ID", NODE a host name, that form, or a daemon id's prefix.
#pragma once

#include <string>
#include <vector>

#include "client/options.h"

namespace ablation::client {

/// The series of `request` over every daemon (one per fingerprint, never mixed), with change
/// points found here as the daemon finds them (common/history). `node` ('' all) keeps one
/// daemon's points. An error is printed; returns an exit code.
int FleetHistory(const v1::HistoryRequest& request, const std::string& node,
                 const CommandContext& context, v1::HistoryResponse* history);

/// The measurements that match, newest first unless `oldest_first`; `nodes` names each one's
/// daemon. `request` as results builds it (run_id filters every daemon's run of that id).
int FleetMeasurements(const v1::QueryMeasurementsRequest& request, int limit, bool oldest_first,
                      const std::string& node, const CommandContext& context,
                      std::vector<v1::Measurement>* measurements, std::vector<std::string>* nodes,
                      bool* more);

/// "NODE:ID": one daemon's run with its samples, as GetRun gives it.
int FleetRun(const std::string& node_run, const CommandContext& context,
             v1::GetRunResponse* response);

/// Splits "NODE:ID" (ID a positive number); "" on success, else what is wrong.
std::string ParseNodeRun(const std::string& text, std::string* node, std::int64_t* run_id);

}  // namespace ablation::client
