#include "server/rpc/service.h"

#include <memory>
#include <mutex>

#include "server/core/catalog.h"
#include "server/rpc/grpc_status.h"
#include "server/rpc/run_stream.h"

namespace ablation::rpc {
namespace {

// A handler the core answers inline (in-memory lookups).
template <typename Body>
grpc::ServerUnaryReactor* Inline(grpc::CallbackServerContext* context, Body&& body) {
  auto* reactor = context->DefaultReactor();
  reactor->Finish(ToGrpc(body()));
  return reactor;
}

// A handler the core answers later, from one of its threads: `start` hands the core a callback
// that fills the response and finishes the call.
template <typename Response, typename Start>
grpc::ServerUnaryReactor* Later(grpc::CallbackServerContext* context, Response* response,
                                Start&& start) {
  auto* reactor = context->DefaultReactor();
  start([reactor, response](const core::Status& s, const Response& r) {
    *response = r;
    reactor->Finish(ToGrpc(s));
  });
  return reactor;
}

// Verify as the core sees it: an observer that collects the results and answers at the end.
class VerifyCall final : public core::RunObserver {
 public:
  VerifyCall(grpc::ServerUnaryReactor* reactor, v1::VerifyResponse* response)
      : reactor_(reactor), response_(response) {}
  void OnEvent(const v1::RunEvent& event) override {
    std::lock_guard lock(mu_);
    if (event.has_queued()) collected_.set_run_id(event.queued().run_id());
  }
  void OnVerified(const v1::VerifyResult& result) override {
    std::lock_guard lock(mu_);
    *collected_.add_results() = result;
  }
  void OnEnd(const core::Status& status) override {
    std::lock_guard lock(mu_);
    *response_ = collected_;
    reactor_->Finish(ToGrpc(status));
  }

 private:
  std::mutex mu_;
  grpc::ServerUnaryReactor* reactor_;
  v1::VerifyResponse* response_;
  v1::VerifyResponse collected_;
};

}  // namespace

grpc::ServerWriteReactor<v1::RunEvent>* AblationService::RunAblation(
    grpc::CallbackServerContext* context, const v1::RunRequest* request) {
  return RunStream::Start(&core_->runs(), *request, context->peer());
}

grpc::ServerUnaryReactor* AblationService::Verify(grpc::CallbackServerContext* context,
                                                  const v1::VerifyRequest* request,
                                                  v1::VerifyResponse* response) {
  auto* reactor = context->DefaultReactor();
  auto call = std::make_shared<VerifyCall>(reactor, response);
  core::Status st = core_->runs().SubmitVerify(*request, context->peer(), call);
  if (!st.ok()) reactor->Finish(ToGrpc(st));
  return reactor;
}

grpc::ServerUnaryReactor* AblationService::ListVariants(grpc::CallbackServerContext* context,
                                                        const v1::ListVariantsRequest* request,
                                                        v1::ListVariantsResponse* response) {
  return Inline(context, [&] { return core::ListVariants(core_->registry(), *request, response); });
}

grpc::ServerUnaryReactor* AblationService::GetDevice(grpc::CallbackServerContext* context,
                                                     const v1::GetDeviceRequest* request,
                                                     v1::GetDeviceResponse* response) {
  return Inline(context, [&] { return core::GetDevice(core_->runs(), *request, response); });
}

grpc::ServerUnaryReactor* AblationService::GetBudget(grpc::CallbackServerContext* context,
                                                     const v1::BudgetRequest* request,
                                                     v1::BudgetResponse* response) {
  return Inline(context, [&] { return core::GetBudget(core_->registry(), *request, response); });
}

grpc::ServerUnaryReactor* AblationService::ListPresets(grpc::CallbackServerContext* context,
                                                       const v1::ListPresetsRequest* request,
                                                       v1::ListPresetsResponse* response) {
  return Inline(context, [&] {
    return core::ListPresets(core_->presets(), core_->registry(), *request, response);
  });
}

grpc::ServerUnaryReactor* AblationService::CancelRun(grpc::CallbackServerContext* context,
                                                     const v1::CancelRunRequest* request,
                                                     v1::CancelRunResponse* response) {
  return Inline(context, [&]() -> core::Status {
    if (request->run_id() <= 0) return core::InvalidArgument("run_id: must be a positive run id");
    return core_->runs().Cancel(request->run_id(), response);
  });
}

grpc::ServerUnaryReactor* AblationService::ListRuns(grpc::CallbackServerContext* context,
                                                    const v1::ListRunsRequest* request,
                                                    v1::ListRunsResponse* response) {
  return Later(context, response,
               [&](auto done) { core_->queries().ListRuns(*request, std::move(done)); });
}

grpc::ServerUnaryReactor* AblationService::GetRun(grpc::CallbackServerContext* context,
                                                  const v1::GetRunRequest* request,
                                                  v1::GetRunResponse* response) {
  return Later(context, response,
               [&](auto done) { core_->queries().GetRun(*request, std::move(done)); });
}

grpc::ServerUnaryReactor* AblationService::QueryMeasurements(
    grpc::CallbackServerContext* context, const v1::QueryMeasurementsRequest* request,
    v1::QueryMeasurementsResponse* response) {
  return Later(context, response,
               [&](auto done) { core_->queries().QueryMeasurements(*request, std::move(done)); });
}

grpc::ServerUnaryReactor* AblationService::Advise(grpc::CallbackServerContext* context,
                                                  const v1::AdviseRequest* request,
                                                  v1::AdviseResponse* response) {
  return Later(context, response,
               [&](auto done) { core_->queries().Advise(*request, std::move(done)); });
}

grpc::ServerUnaryReactor* AblationService::InspectSass(grpc::CallbackServerContext* context,
                                                       const v1::SassRequest* request,
                                                       v1::SassResponse* response) {
  // The worker names the kernel on the GPU's thread, cuobjdump runs on the inspector's thread,
  // and that thread finishes the call.
  return Later(context, response, [&](auto done) {
    if (core::Status st = core_->sass().Inspect(*request, done); !st.ok()) done(st, {});
  });
}

grpc::ServerUnaryReactor* AblationService::Profile(grpc::CallbackServerContext* context,
                                                   const v1::ProfileRequest* request,
                                                   v1::ProfileResponse* response) {
  // ncu runs on the GPU's thread (the GPU is held, nothing is timed meanwhile); that thread
  // finishes the call.
  return Later(context, response, [&](auto done) {
    if (core::Status st = core_->profiler().Profile(core_->runs(), *request, done); !st.ok())
      done(st, {});
  });
}

}  // namespace ablation::rpc
