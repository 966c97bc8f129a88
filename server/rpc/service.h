// The thin gRPC adapter: each handler hands its request to the core and finishes the call with
// what the core answers, mapping statuses in one place (grpc_status.h). Callback API; nothing
// here blocks a reaction: runs execute on the GPUs' threads, queries on the reader pool, SASS
// inspection on its own thread, and those threads finish the calls.
#pragma once

#include <grpcpp/grpcpp.h>

#include "ablation/v1/ablation.grpc.pb.h"
#include "server/core/daemon_core.h"

namespace ablation::rpc {

class AblationService final : public v1::Ablation::CallbackService {
 public:
  explicit AblationService(core::DaemonCore* core) : core_(core) {}

  grpc::ServerWriteReactor<v1::RunEvent>* RunAblation(grpc::CallbackServerContext* context,
                                                      const v1::RunRequest* request) override;
  grpc::ServerUnaryReactor* Verify(grpc::CallbackServerContext* context,
                                   const v1::VerifyRequest* request,
                                   v1::VerifyResponse* response) override;
  grpc::ServerUnaryReactor* ListVariants(grpc::CallbackServerContext* context,
                                         const v1::ListVariantsRequest* request,
                                         v1::ListVariantsResponse* response) override;
  grpc::ServerUnaryReactor* GetDevice(grpc::CallbackServerContext* context,
                                      const v1::GetDeviceRequest* request,
                                      v1::GetDeviceResponse* response) override;
  grpc::ServerUnaryReactor* ListRuns(grpc::CallbackServerContext* context,
                                     const v1::ListRunsRequest* request,
                                     v1::ListRunsResponse* response) override;
  grpc::ServerUnaryReactor* GetRun(grpc::CallbackServerContext* context,
                                   const v1::GetRunRequest* request,
                                   v1::GetRunResponse* response) override;
  grpc::ServerUnaryReactor* QueryMeasurements(grpc::CallbackServerContext* context,
                                              const v1::QueryMeasurementsRequest* request,
                                              v1::QueryMeasurementsResponse* response) override;
  grpc::ServerUnaryReactor* CancelRun(grpc::CallbackServerContext* context,
                                      const v1::CancelRunRequest* request,
                                      v1::CancelRunResponse* response) override;
  grpc::ServerUnaryReactor* GetBudget(grpc::CallbackServerContext* context,
                                      const v1::BudgetRequest* request,
                                      v1::BudgetResponse* response) override;
  grpc::ServerUnaryReactor* ListPresets(grpc::CallbackServerContext* context,
                                        const v1::ListPresetsRequest* request,
                                        v1::ListPresetsResponse* response) override;
  grpc::ServerUnaryReactor* Advise(grpc::CallbackServerContext* context,
                                   const v1::AdviseRequest* request,
                                   v1::AdviseResponse* response) override;
  grpc::ServerUnaryReactor* InspectSass(grpc::CallbackServerContext* context,
                                        const v1::SassRequest* request,
                                        v1::SassResponse* response) override;

 private:
  core::DaemonCore* core_;
};

}  // namespace ablation::rpc
