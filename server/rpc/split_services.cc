#include "server/rpc/split_services.h"

namespace ablation::rpc {

grpc::ServerWriteReactor<v1::RunEvent>* RunsService::RunAblation(grpc::CallbackServerContext* c,
                                                                 const v1::RunRequest* r) {
  return all_->RunAblation(c, r);
}
grpc::ServerWriteReactor<v1::RunEvent>* RunsService::WatchRun(grpc::CallbackServerContext* c,
                                                              const v1::WatchRunRequest* r) {
  return all_->WatchRun(c, r);
}
grpc::ServerUnaryReactor* RunsService::Verify(grpc::CallbackServerContext* c,
                                              const v1::VerifyRequest* r, v1::VerifyResponse* a) {
  return all_->Verify(c, r, a);
}
grpc::ServerUnaryReactor* RunsService::CancelRun(grpc::CallbackServerContext* c,
                                                 const v1::CancelRunRequest* r,
                                                 v1::CancelRunResponse* a) {
  return all_->CancelRun(c, r, a);
}

grpc::ServerUnaryReactor* QueriesService::ListVariants(grpc::CallbackServerContext* c,
                                                       const v1::ListVariantsRequest* r,
                                                       v1::ListVariantsResponse* a) {
  return all_->ListVariants(c, r, a);
}
grpc::ServerUnaryReactor* QueriesService::GetDevice(grpc::CallbackServerContext* c,
                                                    const v1::GetDeviceRequest* r,
                                                    v1::GetDeviceResponse* a) {
  return all_->GetDevice(c, r, a);
}
grpc::ServerUnaryReactor* QueriesService::ListRuns(grpc::CallbackServerContext* c,
                                                   const v1::ListRunsRequest* r,
                                                   v1::ListRunsResponse* a) {
  return all_->ListRuns(c, r, a);
}
grpc::ServerUnaryReactor* QueriesService::GetRun(grpc::CallbackServerContext* c,
                                                 const v1::GetRunRequest* r,
                                                 v1::GetRunResponse* a) {
  return all_->GetRun(c, r, a);
}
grpc::ServerUnaryReactor* QueriesService::QueryMeasurements(grpc::CallbackServerContext* c,
                                                            const v1::QueryMeasurementsRequest* r,
                                                            v1::QueryMeasurementsResponse* a) {
  return all_->QueryMeasurements(c, r, a);
}
grpc::ServerUnaryReactor* QueriesService::GetBudget(grpc::CallbackServerContext* c,
                                                    const v1::BudgetRequest* r,
                                                    v1::BudgetResponse* a) {
  return all_->GetBudget(c, r, a);
}
grpc::ServerUnaryReactor* QueriesService::ListPresets(grpc::CallbackServerContext* c,
                                                      const v1::ListPresetsRequest* r,
                                                      v1::ListPresetsResponse* a) {
  return all_->ListPresets(c, r, a);
}
grpc::ServerUnaryReactor* QueriesService::Advise(grpc::CallbackServerContext* c,
                                                 const v1::AdviseRequest* r,
                                                 v1::AdviseResponse* a) {
  return all_->Advise(c, r, a);
}
grpc::ServerUnaryReactor* QueriesService::GetHistory(grpc::CallbackServerContext* c,
                                                     const v1::HistoryRequest* r,
                                                     v1::HistoryResponse* a) {
  return all_->GetHistory(c, r, a);
}

grpc::ServerUnaryReactor* InspectionService::InspectSass(grpc::CallbackServerContext* c,
                                                         const v1::SassRequest* r,
                                                         v1::SassResponse* a) {
  return all_->InspectSass(c, r, a);
}
grpc::ServerUnaryReactor* InspectionService::Profile(grpc::CallbackServerContext* c,
                                                     const v1::ProfileRequest* r,
                                                     v1::ProfileResponse* a) {
  return all_->Profile(c, r, a);
}

grpc::ServerUnaryReactor* KernelsService::AddKernel(grpc::CallbackServerContext* c,
                                                    const v1::AddKernelRequest* r,
                                                    v1::AddKernelResponse* a) {
  return all_->AddKernel(c, r, a);
}
grpc::ServerUnaryReactor* KernelsService::ListKernels(grpc::CallbackServerContext* c,
                                                      const v1::ListKernelsRequest* r,
                                                      v1::ListKernelsResponse* a) {
  return all_->ListKernels(c, r, a);
}
grpc::ServerUnaryReactor* KernelsService::GetKernel(grpc::CallbackServerContext* c,
                                                    const v1::GetKernelRequest* r,
                                                    v1::GetKernelResponse* a) {
  return all_->GetKernel(c, r, a);
}
grpc::ServerUnaryReactor* KernelsService::RemoveKernel(grpc::CallbackServerContext* c,
                                                       const v1::RemoveKernelRequest* r,
                                                       v1::RemoveKernelResponse* a) {
  return all_->RemoveKernel(c, r, a);
}

void SplitServices::RegisterWith(grpc::ServerBuilder& builder) {
  builder.RegisterService(&runs);
  builder.RegisterService(&queries);
  builder.RegisterService(&inspection);
  builder.RegisterService(&kernels);
}

std::vector<std::string> SplitServices::Names() {
  return {v1::Runs::service_full_name(), v1::Queries::service_full_name(),
          v1::Inspection::service_full_name(), v1::Kernels::service_full_name()};
}

}  // namespace ablation::rpc
