// ablation.v1's services by what they serve (Runs, Queries, Inspection, Kernels), served beside
// Ablation by its handlers: each method here hands its call to AblationService's handler of the
// same name, which authenticates it (by the method's name, so a role is the same under either
// service), bounds it and answers it. Nothing here decides anything.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "ablation/v1/ablation.grpc.pb.h"
#include "server/rpc/service.h"

namespace ablation::rpc {

// Its handlers are declared alike AblationService's of the same names (service.h).
class RunsService final : public v1::Runs::CallbackService {
 public:
  explicit RunsService(AblationService* all) : all_(all) {}
  StreamHandler<v1::RunRequest> RunAblation;
  StreamHandler<v1::WatchRunRequest> WatchRun;
  UnaryHandler<v1::VerifyRequest, v1::VerifyResponse> Verify;
  UnaryHandler<v1::CancelRunRequest, v1::CancelRunResponse> CancelRun;

 private:
  AblationService* all_;
};

// Its handlers are declared alike AblationService's of the same names (service.h).
class QueriesService final : public v1::Queries::CallbackService {
 public:
  explicit QueriesService(AblationService* all) : all_(all) {}
  UnaryHandler<v1::ListVariantsRequest, v1::ListVariantsResponse> ListVariants;
  UnaryHandler<v1::GetDeviceRequest, v1::GetDeviceResponse> GetDevice;
  UnaryHandler<v1::ListRunsRequest, v1::ListRunsResponse> ListRuns;
  UnaryHandler<v1::GetRunRequest, v1::GetRunResponse> GetRun;
  UnaryHandler<v1::QueryMeasurementsRequest, v1::QueryMeasurementsResponse> QueryMeasurements;
  UnaryHandler<v1::BudgetRequest, v1::BudgetResponse> GetBudget;
  UnaryHandler<v1::ListPresetsRequest, v1::ListPresetsResponse> ListPresets;
  UnaryHandler<v1::AdviseRequest, v1::AdviseResponse> Advise;
  UnaryHandler<v1::HistoryRequest, v1::HistoryResponse> GetHistory;

 private:
  AblationService* all_;
};

// Its handlers are declared alike AblationService's of the same names (service.h).
class InspectionService final : public v1::Inspection::CallbackService {
 public:
  explicit InspectionService(AblationService* all) : all_(all) {}
  UnaryHandler<v1::SassRequest, v1::SassResponse> InspectSass;
  UnaryHandler<v1::ProfileRequest, v1::ProfileResponse> Profile;

 private:
  AblationService* all_;
};

// Its handlers are declared alike AblationService's of the same names (service.h).
class KernelsService final : public v1::Kernels::CallbackService {
 public:
  explicit KernelsService(AblationService* all) : all_(all) {}
  UnaryHandler<v1::AddKernelRequest, v1::AddKernelResponse> AddKernel;
  UnaryHandler<v1::ListKernelsRequest, v1::ListKernelsResponse> ListKernels;
  UnaryHandler<v1::GetKernelRequest, v1::GetKernelResponse> GetKernel;
  UnaryHandler<v1::RemoveKernelRequest, v1::RemoveKernelResponse> RemoveKernel;

 private:
  AblationService* all_;
};

/// The four, built over one AblationService, registered with a builder.
struct SplitServices {
  explicit SplitServices(AblationService* all)
      : runs(all), queries(all), inspection(all), kernels(all) {}
  void RegisterWith(grpc::ServerBuilder& builder);
  /// Their full names ("ablation.v1.Runs", ...), for health and the list of what is served.
  static std::vector<std::string> Names();

  RunsService runs;
  QueriesService queries;
  InspectionService inspection;
  KernelsService kernels;
};

}  // namespace ablation::rpc
