// The thin gRPC adapter: each handler checks the request's bounds, hands it to the core and
// finishes the call with what the core answers, mapping statuses in one place (grpc_status.h).
// Who may call what is decided before a handler runs (auth.h); handlers only ask who the caller
// is (requested_by, ownership) and whether an action within the call is allowed. Callback API;
// nothing here blocks a reaction: runs execute on the GPUs' threads, queries on the reader pool,
// SASS inspection on its own thread, and those threads finish the calls.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "ablation/v1/ablation.grpc.pb.h"
#include "server/core/daemon/daemon_core.h"
#include "server/core/plan/limits.h"
#include "server/rpc/auth.h"

namespace ablation::rpc {

/// The signature of a unary handler of the callback API, so each one is declared in one line.
/// (A declaration through an alias cannot say `override`; each still overrides the generated
/// service's handler of its name, and the service tests call every one of them.)
template <typename Request, typename Response>
using UnaryHandler = grpc::ServerUnaryReactor*(grpc::CallbackServerContext* context,
                                               const Request* request, Response* response);
template <typename Request>
using StreamHandler = grpc::ServerWriteReactor<v1::RunEvent>*(grpc::CallbackServerContext* context,
                                                              const Request* request);

/// The unary calls of each connection (ServerContext::peer(), one per connection) that gRPC has
/// not finished yet: a reply a client does not read stays in the daemon until it does (10,000
/// unread ListVariants calls on one connection took 1.77 GB, since gRPC 1.51 does not hold a
/// finished call's stream against MAX_CONCURRENT_STREAMS while its reply waits on flow control).
class ConnectionCalls {
 public:
  struct Entered {
    bool ok;    ///< within the bound; false: the connection already had `max`
    int calls;  ///< the connection's calls in flight, this one included
  };
  /// Counts a call (Leave when gRPC is done with it, admitted or not).
  Entered Enter(const std::string& peer, int max);
  void Leave(const std::string& peer);

 private:
  mutable std::mutex mu_;
  std::map<std::string, int> calls_;  ///< guarded by mu_
};

/// A unary call's reactor and whether the call was admitted (its connection under the bound).
struct Admitted {
  grpc::ServerUnaryReactor* reactor;
  grpc::Status status;  ///< ok, or RESOURCE_EXHAUSTED naming the bound
};

struct ServiceOptions {
  /// Who the callers are; null: everyone is an anonymous admin (in-process tests).
  const Authorizer* authorizer = nullptr;
  core::RequestLimits limits;
};

class AblationService final : public v1::Ablation::CallbackService {
 public:
  explicit AblationService(core::DaemonCore* core, ServiceOptions options = {});

  /// The limits of calls from now on (SIGHUP): request bounds, reply cap, runs in flight. Those
  /// gRPC was built with (message size, streams, memory) are not changed here.
  void SetLimits(const core::RequestLimits& limits);

  // Runs: on the GPUs' threads.
  StreamHandler<v1::RunRequest> RunAblation;
  StreamHandler<v1::WatchRunRequest> WatchRun;
  UnaryHandler<v1::VerifyRequest, v1::VerifyResponse> Verify;
  UnaryHandler<v1::CancelRunRequest, v1::CancelRunResponse> CancelRun;
  // Queries: on the reader pool.
  UnaryHandler<v1::ListRunsRequest, v1::ListRunsResponse> ListRuns;
  UnaryHandler<v1::GetRunRequest, v1::GetRunResponse> GetRun;
  UnaryHandler<v1::QueryMeasurementsRequest, v1::QueryMeasurementsResponse> QueryMeasurements;
  UnaryHandler<v1::AdviseRequest, v1::AdviseResponse> Advise;
  UnaryHandler<v1::HistoryRequest, v1::HistoryResponse> GetHistory;
  // In-memory answers: inline. (split_services.h declares these handlers alike, per service:
  // each of its methods hands its call to the one here.)
  UnaryHandler<v1::ListVariantsRequest, v1::ListVariantsResponse> ListVariants;
  UnaryHandler<v1::GetDeviceRequest, v1::GetDeviceResponse> GetDevice;
  UnaryHandler<v1::BudgetRequest, v1::BudgetResponse> GetBudget;
  UnaryHandler<v1::ListPresetsRequest, v1::ListPresetsResponse> ListPresets;
  // cuobjdump: on the inspector's thread.
  UnaryHandler<v1::SassRequest, v1::SassResponse> InspectSass;
  // ncu: on the GPU's thread, between measurements.
  UnaryHandler<v1::ProfileRequest, v1::ProfileResponse> Profile;
  // User kernels: adding compiles on the core's compile threads (a bounded queue); the rest
  // inline.
  UnaryHandler<v1::AddKernelRequest, v1::AddKernelResponse> AddKernel;
  UnaryHandler<v1::ListKernelsRequest, v1::ListKernelsResponse> ListKernels;
  UnaryHandler<v1::GetKernelRequest, v1::GetKernelResponse> GetKernel;
  UnaryHandler<v1::RemoveKernelRequest, v1::RemoveKernelResponse> RemoveKernel;

 private:
  core::KernelCaller KernelCallerOf(grpc::CallbackServerContext* context) const;
  /// The reactor of a unary call, counted against its connection (limits.max_concurrent_streams
  /// calls in flight at most); a call past the bound gets a reactor to refuse it with.
  /// `method`: the handler's name (__func__), for the authentication it checks first.
  Admitted Admit(grpc::CallbackServerContext* context, std::string_view method);
  core::Status Bounds(const google::protobuf::Message& request) const {
    return core::CheckRequestBounds(request, Limits());
  }
  core::RequestLimits Limits() const {
    std::lock_guard lock(limits_mu_);
    return limits_;
  }

  core::DaemonCore* core_;
  std::unique_ptr<Authorizer> own_authorizer_;  ///< when none was given
  const Authorizer* auth_;
  mutable std::mutex limits_mu_;
  core::RequestLimits limits_;  ///< guarded by limits_mu_
  core::RunQuota quota_;
  std::atomic<int> watchers_{0};  ///< WatchRun streams gRPC is not done with
  ConnectionCalls calls_;
};

}  // namespace ablation::rpc
