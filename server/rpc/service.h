// The thin gRPC adapter: each handler hands its request to the core and finishes the call with
// what the core answers, mapping statuses in one place (grpc_status.h). Callback API; nothing
// here blocks a reaction: runs execute on the GPUs' threads, queries on the reader pool, SASS
// inspection on its own thread, and those threads finish the calls.
#pragma once

#include <grpcpp/grpcpp.h>

#include "ablation/v1/ablation.grpc.pb.h"
#include "server/core/daemon_core.h"

namespace ablation::rpc {

/// The signature of a unary handler of the callback API, so each one is declared in one line.
/// (A declaration through an alias cannot say `override`; each still overrides the generated
/// service's handler of its name, and the service tests call every one of them.)
template <typename Request, typename Response>
using UnaryHandler = grpc::ServerUnaryReactor*(grpc::CallbackServerContext* context,
                                               const Request* request, Response* response);

class AblationService final : public v1::Ablation::CallbackService {
 public:
  explicit AblationService(core::DaemonCore* core) : core_(core) {}

  // Runs: on the GPUs' threads.
  grpc::ServerWriteReactor<v1::RunEvent>* RunAblation(grpc::CallbackServerContext* context,
                                                      const v1::RunRequest* request) override;
  UnaryHandler<v1::VerifyRequest, v1::VerifyResponse> Verify;
  UnaryHandler<v1::CancelRunRequest, v1::CancelRunResponse> CancelRun;
  // Queries: on the reader pool.
  UnaryHandler<v1::ListRunsRequest, v1::ListRunsResponse> ListRuns;
  UnaryHandler<v1::GetRunRequest, v1::GetRunResponse> GetRun;
  UnaryHandler<v1::QueryMeasurementsRequest, v1::QueryMeasurementsResponse> QueryMeasurements;
  UnaryHandler<v1::AdviseRequest, v1::AdviseResponse> Advise;
  // In-memory answers: inline.
  UnaryHandler<v1::ListVariantsRequest, v1::ListVariantsResponse> ListVariants;
  UnaryHandler<v1::GetDeviceRequest, v1::GetDeviceResponse> GetDevice;
  UnaryHandler<v1::BudgetRequest, v1::BudgetResponse> GetBudget;
  UnaryHandler<v1::ListPresetsRequest, v1::ListPresetsResponse> ListPresets;
  // cuobjdump: on the inspector's thread.
  UnaryHandler<v1::SassRequest, v1::SassResponse> InspectSass;
  // ncu: on the GPU's thread, between measurements.
  UnaryHandler<v1::ProfileRequest, v1::ProfileResponse> Profile;

 private:
  core::DaemonCore* core_;
};

}  // namespace ablation::rpc
