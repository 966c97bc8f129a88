// Where stored results are read: the daemon (GetRun, ListRuns, QueryMeasurements, GetHistory,
// ListPresets, ListVariants) or a fleet's PostgreSQL (--fleet-db, or ABLATION_FLEET_DB: read-only,
// no daemon reached; db/fleet/fleet_reader.h). One interface, so that runs, show, results,
// history, compare and report read either alike and none of them chooses with an `if`.
//
// Runs are named as typed: from the daemon an id or 'latest'; from a fleet NODE:ID, NODE a host
// name, HOST/ID-PREFIX or a daemon id's prefix (run ids are each daemon's own). Every call prints
// what went wrong on context.err and returns an exit code (kExitOk when it read).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "client/cli/options.h"

namespace ablation::client {

struct RunRead {
  bool samples = false;   // the raw samples of every measurement
  bool counters = false;  // the hardware counters (the daemon keeps them; a fleet has none)
};

// Rows of a list, with the daemon of each where they come from a fleet ("" from the daemon).
template <class M>
struct Listed {
  std::vector<M> items;
  std::vector<std::string> nodes;  // empty from the daemon; else one per item
  bool more = false;               // the limit cut the list short
};

class ResultSource {
 public:
  virtual ~ResultSource() = default;
  // "the daemon at 127.0.0.1:50051", "the fleet database": for messages.
  virtual std::string Name() const = 0;
  virtual bool fleet() const = 0;

  // One run with its measurements and verifications.
  virtual int Run(const std::string& run, const RunRead& read, v1::GetRunResponse* out) = 0;
  // Runs, newest first, at most `limit` (0: all); `node` ('' all) keeps a fleet's daemon's.
  virtual int Runs(const v1::ListRunsRequest& request, int limit, const std::string& node,
                   Listed<v1::Run>* out) = 0;
  // The measurements that match (QueryMeasurementsRequest's filters), at most `limit` (0: all).
  virtual int Measurements(const v1::QueryMeasurementsRequest& request, int limit,
                           const std::string& node, Listed<v1::Measurement>* out) = 0;
  // A variant's series with their change points (one per hardware fingerprint, never mixed).
  virtual int History(const v1::HistoryRequest& request, const std::string& node,
                      v1::HistoryResponse* out) = 0;
  // What a report's sections and baselines come from: the daemon's presets and variants. A fleet
  // keeps neither; its report has the run's own rows, each library baseline known by its name.
  virtual int Catalog(std::vector<v1::Preset>* presets, std::vector<v1::Variant>* variants) = 0;
};

// The fleet database where --fleet-db (or ABLATION_FLEET_DB) names one, else the daemon.
std::unique_ptr<ResultSource> OpenSource(const CommandContext& context);

// The daemon, whatever --fleet-db says: what `run` and `sweep` read back of the run they made.
std::unique_ptr<ResultSource> DaemonResults(const CommandContext& context);

}  // namespace ablation::client
