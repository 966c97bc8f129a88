#include "client/fleet.h"

#include "client/enum_words.h"
#include "client/exit_codes.h"
#include "common/history/history.h"
#include "db/fleet/conninfo.h"
#include "db/fleet/fleet_reader.h"

namespace ablation::client {
namespace {

// Connects and reads, turning the fleet layer's errors into one line and an exit code.
template <class F>
int WithReader(const CommandContext& context, F&& read) {
  const std::string& conninfo = context.global.fleet_db;
  if (std::string error = fleet::CheckConnInfo(conninfo); !error.empty()) {
    context.err << "error: --fleet-db: " << error << '\n';
    return kExitUsage;
  }
  try {
    fleet::FleetReader reader(conninfo);
    return read(reader);
  } catch (const fleet::FleetError& e) {
    context.err << "error: " << e.what() << '\n';
    return kExitFailed;
  }
}

}  // namespace

std::string ParseNodeRun(const std::string& text, std::string* node, std::int64_t* run_id) {
  const size_t colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == text.size()) {
    return "'" + text + "' names no fleet run; use NODE:RUN_ID (a host name, HOST/ID-PREFIX or a " +
           "daemon id's prefix, then the run's id on that daemon)";
  }
  const std::string id = text.substr(colon + 1);
  if (id.find_first_not_of("0123456789") != std::string::npos || id.size() > 18 ||
      std::stoll(id) <= 0) {
    return "'" + id + "' in '" + text + "' is not a run id (a positive number)";
  }
  *node = text.substr(0, colon);
  *run_id = std::stoll(id);
  return "";
}

int FleetHistory(const v1::HistoryRequest& request, const std::string& node,
                 const CommandContext& context, v1::HistoryResponse* history) {
  if (request.run_id() != 0) {
    context.err << "error: --in-run names one daemon's run; with --fleet-db use --node and "
                   "--since instead\n";
    return kExitUsage;
  }
  if (!request.device().empty()) {
    context.err << "error: --device names one daemon's GPU; with --fleet-db use --node\n";
    return kExitUsage;
  }
  return WithReader(context, [&](fleet::FleetReader& reader) {
    fleet::FleetSeriesFilter f;
    f.variant_glob = request.variant_glob();
    f.dtype = request.dtype();
    f.m = request.shape().m();
    f.n = request.shape().n();
    f.k = request.shape().k();
    f.regime = EnumWord(request.regime());
    f.tag = request.tag();
    f.since_ms = request.since_ms();
    f.node = node;
    *history = history::BuildHistory(reader.SeriesRows(f));
    if (history->series().empty()) {
      context.err << "error: no ok measurement of '" << request.variant_glob()
                  << "' matches in the fleet database (fleet reads take a variant's full name "
                     "or a glob: abl_L1_*)\n";
      return kExitFailed;
    }
    return kExitOk;
  });
}

int FleetMeasurements(const v1::QueryMeasurementsRequest& request, int limit, bool oldest_first,
                      const std::string& node, const CommandContext& context,
                      std::vector<v1::Measurement>* measurements, std::vector<std::string>* nodes,
                      bool* more) {
  return WithReader(context, [&](fleet::FleetReader& reader) {
    fleet::FleetMeasurementFilter f;
    f.variant_glob = request.variant_glob();
    f.dtype = request.dtype();
    f.m = request.shape().m();
    f.n = request.shape().n();
    f.k = request.shape().k();
    f.tag = request.tag();
    f.since_ms = request.since_ms();
    f.until_ms = request.until_ms();
    f.status = EnumWord(request.status());
    f.node = node;
    f.run_id = request.run_id();
    f.limit = limit;
    f.newest_first = !oldest_first;
    f.samples = request.include_samples();
    for (fleet::FleetMeasurement& m : reader.Measurements(f, more)) {
      nodes->push_back(m.node);
      measurements->push_back(std::move(m.measurement));
    }
    return kExitOk;
  });
}

int FleetRun(const std::string& node_run, const CommandContext& context,
             v1::GetRunResponse* response) {
  std::string node;
  std::int64_t run_id = 0;
  if (std::string error = ParseNodeRun(node_run, &node, &run_id); !error.empty()) {
    context.err << "error: " << error << '\n';
    return kExitUsage;
  }
  return WithReader(context, [&](fleet::FleetReader& reader) {
    *response = reader.Run(node, run_id);
    return kExitOk;
  });
}

}  // namespace ablation::client
