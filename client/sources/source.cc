#include "client/sources/source.h"

#include "client/cli/calls.h"
#include "client/cli/exit_codes.h"
#include "client/cli/parse.h"
#include "client/output/enum_words.h"
#include "client/output/paging.h"
#include "common/history/history.h"
#include "db/fleet/conninfo.h"
#include "db/fleet/fleet_reader.h"

namespace ablation::client {
namespace {

// ---- the daemon

class DaemonSource final : public ResultSource {
 public:
  explicit DaemonSource(const CommandContext& context) : context_(context) {}

  std::string Name() const override { return "the daemon at " + context_.global.server; }
  bool fleet() const override { return false; }

  int Run(const std::string& run, const RunRead& read, v1::GetRunResponse* out) override {
    std::int64_t id = 0;
    if (std::string error = ParseRunId(run, &id, true); !error.empty()) {
      context_.err << "error: " << error << '\n';
      return kExitUsage;
    }
    v1::GetRunRequest request;
    request.set_run_id(id);
    request.set_include_samples(read.samples);
    request.set_include_counters(read.counters);
    grpc::ClientContext call;
    SetDeadline(call, context_.global, kDefaultQueryTimeoutS);
    const grpc::Status status = context_.stub.GetRun(&call, request, out);
    return status.ok() ? kExitOk : ReportRpcError(status, context_);
  }

  int Runs(const v1::ListRunsRequest& request, int limit, const std::string& node,
           Listed<v1::Run>* out) override {
    if (!NoNode(node)) return kExitUsage;
    const grpc::Status status = CollectPages<v1::ListRunsRequest, v1::ListRunsResponse>(
        request, limit,
        [&](const v1::ListRunsRequest& page, v1::ListRunsResponse* response) {
          grpc::ClientContext call;
          SetDeadline(call, context_.global, kDefaultQueryTimeoutS);
          return context_.stub.ListRuns(&call, page, response);
        },
        [](const v1::ListRunsResponse& response) { return response.runs(); }, &out->items,
        &out->more);
    return status.ok() ? kExitOk : ReportRpcError(status, context_);
  }

  int Measurements(const v1::QueryMeasurementsRequest& request, int limit, const std::string& node,
                   Listed<v1::Measurement>* out) override {
    if (!NoNode(node)) return kExitUsage;
    const grpc::Status status =
        CollectPages<v1::QueryMeasurementsRequest, v1::QueryMeasurementsResponse>(
            request, limit,
            [&](const v1::QueryMeasurementsRequest& page, v1::QueryMeasurementsResponse* r) {
              grpc::ClientContext call;
              SetDeadline(call, context_.global, kDefaultQueryTimeoutS);
              return context_.stub.QueryMeasurements(&call, page, r);
            },
            [](const v1::QueryMeasurementsResponse& r) { return r.measurements(); }, &out->items,
            &out->more);
    return status.ok() ? kExitOk : ReportRpcError(status, context_);
  }

  int History(const v1::HistoryRequest& request, const std::string& node,
              v1::HistoryResponse* out) override {
    if (!NoNode(node)) return kExitUsage;
    grpc::ClientContext call;
    SetDeadline(call, context_.global, kDefaultQueryTimeoutS);
    const grpc::Status status = context_.stub.GetHistory(&call, request, out);
    return status.ok() ? kExitOk : ReportRpcError(status, context_);
  }

  int Catalog(std::vector<v1::Preset>* presets, std::vector<v1::Variant>* variants) override {
    v1::ListPresetsResponse listed;
    grpc::ClientContext presets_call;
    SetDeadline(presets_call, context_.global, kDefaultQueryTimeoutS);
    grpc::Status status =
        context_.stub.ListPresets(&presets_call, v1::ListPresetsRequest(), &listed);
    if (!status.ok()) return ReportRpcError(status, context_);
    presets->assign(listed.presets().begin(), listed.presets().end());
    v1::ListVariantsResponse known;
    grpc::ClientContext variants_call;
    SetDeadline(variants_call, context_.global, kDefaultQueryTimeoutS);
    status = context_.stub.ListVariants(&variants_call, v1::ListVariantsRequest(), &known);
    if (!status.ok()) return ReportRpcError(status, context_);
    variants->assign(known.variants().begin(), known.variants().end());
    return kExitOk;
  }

 private:
  // --node names a fleet's daemon: from one daemon it is a mistake, said so.
  bool NoNode(const std::string& node) const {
    if (node.empty()) return true;
    context_.err << "error: --node reads a fleet database's daemons: give --fleet-db\n";
    return false;
  }

  const CommandContext& context_;
};

// ---- a fleet's PostgreSQL

class FleetSource final : public ResultSource {
 public:
  explicit FleetSource(const CommandContext& context) : context_(context) {}

  std::string Name() const override { return "the fleet database"; }
  bool fleet() const override { return true; }

  int Run(const std::string& run, const RunRead& read, v1::GetRunResponse* out) override {
    (void)read;  // the fleet keeps every exported measurement whole; counters stay with the daemon
    std::string node;
    std::int64_t run_id = 0;
    if (std::string error = ParseNodeRun(run, &node, &run_id); !error.empty()) {
      context_.err << "error: " << error << '\n';
      return kExitUsage;
    }
    return Read([&](fleet::FleetReader& reader) {
      *out = reader.Run(node, run_id);
      return kExitOk;
    });
  }

  int Runs(const v1::ListRunsRequest& request, int limit, const std::string& node,
           Listed<v1::Run>* out) override {
    return Read([&](fleet::FleetReader& reader) {
      fleet::FleetRunFilter f;
      f.tag = request.tag();
      f.state = EnumWord(request.state());
      f.node = node;
      f.limit = limit;
      for (fleet::FleetRun& r : reader.Runs(f, &out->more)) {
        out->nodes.push_back(r.node);
        out->items.push_back(std::move(r.run));
      }
      return kExitOk;
    });
  }

  int Measurements(const v1::QueryMeasurementsRequest& request, int limit, const std::string& node,
                   Listed<v1::Measurement>* out) override {
    return Read([&](fleet::FleetReader& reader) {
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
      f.newest_first = request.newest_first();
      f.samples = request.include_samples();
      for (fleet::FleetMeasurement& m : reader.Measurements(f, &out->more)) {
        out->nodes.push_back(m.node);
        out->items.push_back(std::move(m.measurement));
      }
      return kExitOk;
    });
  }

  int History(const v1::HistoryRequest& request, const std::string& node,
              v1::HistoryResponse* out) override {
    if (request.run_id() != 0) {
      context_.err << "error: --in-run names one daemon's run; with --fleet-db use --node and "
                      "--since instead\n";
      return kExitUsage;
    }
    if (!request.device().empty()) {
      context_.err << "error: --device names one daemon's GPU; with --fleet-db use --node\n";
      return kExitUsage;
    }
    return Read([&](fleet::FleetReader& reader) {
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
      *out = history::BuildHistory(reader.SeriesRows(f));
      if (out->series().empty()) {
        context_.err << "error: no ok measurement of '" << request.variant_glob()
                     << "' matches in the fleet database (fleet reads take a variant's full "
                        "name or a glob: abl_L1_*)\n";
        return kExitFailed;
      }
      return kExitOk;
    });
  }

  int Catalog(std::vector<v1::Preset>* presets, std::vector<v1::Variant>* variants) override {
    presets->clear();
    variants->clear();
    return kExitOk;
  }

 private:
  // Connects and reads, turning the fleet layer's errors into one line and an exit code.
  template <class F>
  int Read(F&& read) {
    const std::string& conninfo = context_.global.fleet_db;
    if (std::string error = fleet::CheckConnInfo(conninfo); !error.empty()) {
      context_.err << "error: --fleet-db: " << error << '\n';
      return kExitUsage;
    }
    try {
      fleet::FleetReader reader(conninfo);
      return read(reader);
    } catch (const fleet::FleetError& e) {
      context_.err << "error: " << e.what() << '\n';
      return kExitFailed;
    }
  }

  const CommandContext& context_;
};

}  // namespace

std::unique_ptr<ResultSource> DaemonResults(const CommandContext& context) {
  return std::make_unique<DaemonSource>(context);
}

std::unique_ptr<ResultSource> OpenSource(const CommandContext& context) {
  if (!context.global.fleet_db.empty()) return std::make_unique<FleetSource>(context);
  return std::make_unique<DaemonSource>(context);
}

}  // namespace ablation::client
