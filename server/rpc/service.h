// The thin gRPC adapter: validate, convert proto <-> core, map core errors to grpc::Status.
// Callback API; no reaction blocks on the GPU: runs execute on the core's threads.
#pragma once

#include <grpcpp/grpcpp.h>

#include "ablation/v1/ablation.grpc.pb.h"
#include "db/store.h"
#include "kernels/registry.h"
#include "server/core/presets.h"
#include "server/core/run_manager.h"
#include "server/core/sass_inspect.h"
#include "server/core/status.h"

namespace ablation::rpc {

/// The one place where core and storage errors become gRPC status codes.
grpc::Status ToGrpc(const core::Status& status);
grpc::Status ToGrpc(const std::exception& error);

class AblationService final : public v1::Ablation::CallbackService {
 public:
  AblationService(core::RunManager* runs, db::Store* store, const kernels::Registry* registry);

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

  /// What ListPresets serves and RunRequest.preset names (the run manager holds the same one).
  grpc::ServerUnaryReactor* Advise(grpc::CallbackServerContext* context,
                                   const v1::AdviseRequest* request,
                                   v1::AdviseResponse* response) override;
  grpc::ServerUnaryReactor* InspectSass(grpc::CallbackServerContext* context,
                                        const v1::SassRequest* request,
                                        v1::SassResponse* response) override;
  void SetPresets(std::shared_ptr<const core::PresetCatalog> presets) { presets_ = std::move(presets); }

 private:
  core::RunManager* runs_;
  db::Store* store_;
  const kernels::Registry* registry_;
  std::shared_ptr<const core::PresetCatalog> presets_;
  std::unique_ptr<core::SassInspector> sass_;  ///< cuobjdump runs on its thread
};

}  // namespace ablation::rpc
