#include "server/rpc/service.h"

#include <memory>
#include <mutex>

#include <spdlog/spdlog.h>

#include "server/core/queries/listings.h"
#include "server/rpc/audit.h"
#include "server/rpc/grpc_status.h"
#include "server/rpc/run_stream.h"

namespace ablation::rpc {

ConnectionCalls::Entered ConnectionCalls::Enter(const std::string& peer, int max) {
  std::lock_guard lock(mu_);
  const int n = ++calls_[peer];
  return {max <= 0 || n <= max, n};
}

void ConnectionCalls::Leave(const std::string& peer) {
  std::lock_guard lock(mu_);
  auto it = calls_.find(peer);
  if (it != calls_.end() && --it->second <= 0) calls_.erase(it);
}

namespace {

// A refusal as the audit trail keeps it: its code and first line, at most 200 characters (a
// compile error's log, which may quote anything the source made the compiler read, is the
// caller's answer, not the daemon's log).
std::string AuditOutcome(const core::Status& st) {
  std::string line = st.message().substr(0, st.message().find('\n'));
  if (line.size() > 200) line = line.substr(0, 200) + "...";
  return line;
}

// A unary call's reactor that holds its place among its connection's calls until gRPC is done
// with it (OnDone: the reply and status written out, or the call cancelled).
class CountedReactor final : public grpc::ServerUnaryReactor {
 public:
  CountedReactor(ConnectionCalls* calls, std::string peer)
      : calls_(calls), peer_(std::move(peer)) {}
  void OnDone() override {
    calls_->Leave(peer_);
    delete this;
  }

 private:
  ConnectionCalls* calls_;
  std::string peer_;
};

// A handler the core answers inline (in-memory lookups), once the call is admitted (its
// connection under its bound of calls in flight) and the request within bounds.
template <typename Body>
grpc::ServerUnaryReactor* Inline(const Admitted& call, const core::Status& bounds, Body&& body) {
  call.reactor->Finish(!call.status.ok() ? call.status : ToGrpc(bounds.ok() ? body() : bounds));
  return call.reactor;
}

// A reply larger than limits.max_reply_bytes is refused here, by name, rather than by gRPC's
// send limit with a generic message (a run's raw samples made one 732 MB reply before).
grpc::Status ReplyTooLarge(size_t bytes, int max_bytes) {
  return {grpc::StatusCode::RESOURCE_EXHAUSTED,
          "the reply would be " + std::to_string(bytes) + " bytes, more than " +
              std::to_string(max_bytes) +
              " (limits.max_reply_bytes): ask without samples (include_samples=false) or page "
              "through them with QueryMeasurements (page_size, page_token)"};
}

// A handler the core answers later, from one of its threads: `start` hands the core a callback
// that fills the response and finishes the call.
template <typename Response, typename Start>
grpc::ServerUnaryReactor* Later(const Admitted& call, const core::Status& bounds,
                                int max_reply_bytes, Response* response, Start&& start) {
  auto* reactor = call.reactor;
  if (!call.status.ok() || !bounds.ok()) {
    reactor->Finish(!call.status.ok() ? call.status : ToGrpc(bounds));
    return reactor;
  }
  start([reactor, response, max_reply_bytes](const core::Status& s, const Response& r) {
    if (const size_t bytes = r.ByteSizeLong(); s.ok() && bytes > size_t(max_reply_bytes))
      return reactor->Finish(ReplyTooLarge(bytes, max_reply_bytes));
    *response = r;
    reactor->Finish(ToGrpc(s));
  });
  return reactor;
}

class VerifyReactor;

// Verify as the core sees it: an observer that collects the results and answers at the end,
// through the call's reactor while it is there.
class VerifyCall final : public core::RunObserver {
 public:
  VerifyCall(VerifyReactor* reactor, v1::VerifyResponse* response, std::function<void()> on_end)
      : reactor_(reactor), response_(response), on_end_(std::move(on_end)) {}
  void OnEvent(const v1::RunEvent& event) override {
    std::lock_guard lock(mu_);
    if (event.has_queued()) collected_.set_run_id(event.queued().run_id());
  }
  void OnVerified(const v1::VerifyResult& result) override {
    std::lock_guard lock(mu_);
    *collected_.add_results() = result;
  }
  void OnEnd(const core::Status& status) override;
  /// The run to cancel when the client leaves; 0 until the run is queued.
  int64_t CancelRequested() {
    std::lock_guard lock(mu_);
    cancel_requested_ = true;
    return collected_.run_id();
  }
  bool cancel_requested() {
    std::lock_guard lock(mu_);
    return cancel_requested_;
  }
  void DetachReactor() {
    std::lock_guard lock(mu_);
    reactor_ = nullptr;
  }

 private:
  std::mutex mu_;
  VerifyReactor* reactor_;
  v1::VerifyResponse* response_;
  std::function<void()> on_end_;
  v1::VerifyResponse collected_;
  bool cancel_requested_ = false;
};

// A Verify call whose client may leave (Ctrl-C, its deadline): the run is then cancelled at its
// next item, and the answer goes nowhere.
class VerifyReactor final : public grpc::ServerUnaryReactor {
 public:
  explicit VerifyReactor(core::RunManager* runs) : runs_(runs) {}
  void set_call(std::shared_ptr<VerifyCall> call) { call_ = std::move(call); }
  void OnCancel() override {
    if (const int64_t run_id = call_->CancelRequested(); run_id > 0) {
      v1::CancelRunResponse ignored;
      (void)runs_->Cancel(run_id, &ignored);
      spdlog::info("verify run {}: the client left (cancelled or past its deadline)", run_id);
    }
  }
  void OnDone() override {
    call_->DetachReactor();
    delete this;
  }

 private:
  core::RunManager* runs_;
  std::shared_ptr<VerifyCall> call_;
};

void VerifyCall::OnEnd(const core::Status& status) {
  VerifyReactor* reactor = nullptr;
  {
    std::lock_guard lock(mu_);
    std::swap(reactor, reactor_);
    if (reactor) *response_ = collected_;
  }
  // Outside mu_: Finish may lead to OnDone, which takes it.
  if (reactor) reactor->Finish(ToGrpc(status));
  if (on_end_) on_end_();
}

}  // namespace

Admitted AblationService::Admit(grpc::CallbackServerContext* context, std::string_view method) {
  // First: an unauthenticated call does nothing.
  grpc::Status refused = auth_->Refusal(*context, method);
  std::string peer = context->peer();
  const int max = Limits().max_concurrent_streams;
  const ConnectionCalls::Entered entered = calls_.Enter(peer, max);
  auto* reactor = new CountedReactor(&calls_, std::move(peer));
  // Far past the bound, the client reads nothing: the call is reset rather than answered, since
  // an answer it does not read would wait in the daemon with the call's memory (~20 KB a call).
  if (max > 0 && entered.calls > 2 * max) context->TryCancel();
  if (!refused.ok()) return {reactor, refused};
  if (entered.ok) return {reactor, grpc::Status::OK};
  return {reactor,
          grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED,
                       "this connection has " + std::to_string(entered.calls - 1) +
                           " calls whose replies it has not read yet, the most one may have "
                           "(limits.max_concurrent_streams): read them before asking more")};
}

void AblationService::SetLimits(const core::RequestLimits& limits) {
  {
    std::lock_guard lock(limits_mu_);
    limits_ = limits;
  }
  quota_.SetLimits(limits);
}

AblationService::AblationService(core::DaemonCore* core, ServiceOptions options)
    : core_(core), auth_(options.authorizer), limits_(options.limits), quota_(options.limits) {
  if (!auth_) {
    own_authorizer_ =
        std::make_unique<Authorizer>(core::TokenTable(), core::Role::kAdmin, core::Role::kAdmin);
    auth_ = own_authorizer_.get();
  }
}

grpc::ServerWriteReactor<v1::RunEvent>* AblationService::RunAblation(
    grpc::CallbackServerContext* context, const v1::RunRequest* request) {
  if (grpc::Status refused = auth_->Refusal(*context, __func__); !refused.ok())
    return RunStream::Refuse(refused);
  const core::Identity caller = auth_->Caller(*context);
  if (core::Status st = Bounds(*request); !st.ok()) return RunStream::Refuse(ToGrpc(st));
  if (request->clocks().mode() == v1::CLOCK_MODE_LOCK) {
    grpc::Status st = auth_->Allow(Action::kLockClocks, caller);
    AuditLog::Get().Action(
        "lock_clocks", caller, context->peer(),
        "sm=" + request->clocks().sm_mhz() + " mem=" + request->clocks().mem_mhz(),
        st.ok() ? "allowed" : st.error_message());
    if (!st.ok()) return RunStream::Refuse(st);
  }
  if (core::Status st = quota_.Reserve(caller.name); !st.ok()) return RunStream::Refuse(ToGrpc(st));
  // Who asked is who authenticated; a requested_by in the request is not believed or stored.
  v1::RunRequest run = *request;
  run.clear_requested_by();
  return RunStream::Start(&core_->runs(), run, caller.name,
                          [this, name = caller.name] { quota_.Release(name); });
}

grpc::ServerWriteReactor<v1::RunEvent>* AblationService::WatchRun(
    grpc::CallbackServerContext* context, const v1::WatchRunRequest* request) {
  if (grpc::Status refused = auth_->Refusal(*context, __func__); !refused.ok())
    return RunStream::Refuse(refused);
  // The daemon's watchers together are bounded (limits.max_watchers), whoever opens them.
  const int max = Limits().max_watchers;
  if (watchers_.fetch_add(1) >= max) {
    watchers_.fetch_sub(1);
    return RunStream::Refuse(grpc::Status(
        grpc::StatusCode::RESOURCE_EXHAUSTED,
        "the daemon has " + std::to_string(max) +
            " WatchRun streams open, the most it keeps (limits.max_watchers): try again when "
            "one ends, or follow the run with GetRun"));
  }
  return RunStream::Watch(&core_->runs(), &core_->queries(), request->run_id(),
                          [this] { watchers_.fetch_sub(1); });
}

grpc::ServerUnaryReactor* AblationService::Verify(grpc::CallbackServerContext* context,
                                                  const v1::VerifyRequest* request,
                                                  v1::VerifyResponse* response) {
  auto* reactor = new VerifyReactor(&core_->runs());
  if (grpc::Status refused = auth_->Refusal(*context, __func__); !refused.ok()) {
    reactor->set_call(std::make_shared<VerifyCall>(reactor, response, nullptr));
    reactor->Finish(refused);
    return reactor;
  }
  const core::Identity caller = auth_->Caller(*context);
  core::Status st = Bounds(*request);
  if (st.ok()) st = quota_.Reserve(caller.name);
  if (!st.ok()) {
    reactor->set_call(std::make_shared<VerifyCall>(reactor, response, nullptr));
    reactor->Finish(ToGrpc(st));
    return reactor;
  }
  auto call = std::make_shared<VerifyCall>(reactor, response,
                                           [this, name = caller.name] { quota_.Release(name); });
  reactor->set_call(call);
  st = Guarded([&] { return core_->runs().SubmitVerify(*request, caller.name, call); });
  if (!st.ok()) {
    quota_.Release(caller.name);
    reactor->Finish(ToGrpc(st));
  } else if (call->cancel_requested()) {
    // The client left while the run was being queued: OnCancel could not name it yet.
    v1::CancelRunResponse ignored;
    (void)core_->runs().Cancel(call->CancelRequested(), &ignored);
  }
  return reactor;
}

grpc::ServerUnaryReactor* AblationService::ListVariants(grpc::CallbackServerContext* context,
                                                        const v1::ListVariantsRequest* request,
                                                        v1::ListVariantsResponse* response) {
  return Inline(Admit(context, __func__), Bounds(*request), [&] {
    return core::ListVariants(core_->registry(), core_->user_kernels().Variants(), *request,
                              response, core_->runs().DeviceResidency(0));
  });
}

grpc::ServerUnaryReactor* AblationService::GetDevice(grpc::CallbackServerContext* context,
                                                     const v1::GetDeviceRequest* request,
                                                     v1::GetDeviceResponse* response) {
  return Inline(Admit(context, __func__), Bounds(*request),
                [&] { return core::GetDevice(core_->runs(), *request, response); });
}

grpc::ServerUnaryReactor* AblationService::GetBudget(grpc::CallbackServerContext* context,
                                                     const v1::BudgetRequest* request,
                                                     v1::BudgetResponse* response) {
  return Inline(Admit(context, __func__), Bounds(*request),
                [&] { return core::GetBudget(core_->registry(), *request, response); });
}

grpc::ServerUnaryReactor* AblationService::ListPresets(grpc::CallbackServerContext* context,
                                                       const v1::ListPresetsRequest* request,
                                                       v1::ListPresetsResponse* response) {
  return Inline(Admit(context, __func__), Bounds(*request), [&] {
    const std::shared_ptr<const core::Presets> presets = core_->presets();
    const std::shared_ptr<const kernels::Registry> catalog = core_->runs().Catalog();
    return core::ListPresets(presets.get(), *catalog, *request, response);
  });
}

grpc::ServerUnaryReactor* AblationService::CancelRun(grpc::CallbackServerContext* context,
                                                     const v1::CancelRunRequest* request,
                                                     v1::CancelRunResponse* response) {
  const core::Identity caller = auth_->Caller(*context);
  const int64_t run_id = request->run_id();
  core::Status bounds =
      run_id > 0 ? core::Status::Ok() : core::InvalidArgument("run_id: must be a positive run id");
  grpc::Status others = auth_->Allow(Action::kCancelOthersRun, caller);
  const std::string target = "run " + std::to_string(run_id);
  auto audited = [caller, target, peer = context->peer()](const core::Status& st) {
    AuditLog::Get().Action("cancel_run", caller, peer, target, st.ok() ? "ok" : st.message());
    return st;
  };
  if (others.ok() || !bounds.ok())
    return Inline(Admit(context, __func__), bounds, [&] {
      return audited(Guarded([&] { return core_->runs().Cancel(run_id, response, caller.name); }));
    });
  // Not an admin: the run must be the caller's own. Who asked for it is in the store, read on
  // the reader pool (requested_by never changes once a run exists).
  const Admitted call = Admit(context, __func__);
  auto* reactor = call.reactor;
  if (!call.status.ok()) {
    reactor->Finish(call.status);
    return reactor;
  }
  core_->queries().FindRun(run_id, [this, reactor, response, caller, run_id, others, audited](
                                       const core::Status& st, const v1::Run& run) {
    if (!st.ok()) return reactor->Finish(ToGrpc(st));
    if (run.requested_by() != caller.name) {
      const std::string why =
          "run " + std::to_string(run_id) + " is not yours: " + others.error_message();
      audited(core::FailedPrecondition(why));
      return reactor->Finish({others.error_code(), why});
    }
    reactor->Finish(ToGrpc(audited(core_->runs().Cancel(run_id, response, caller.name))));
  });
  return reactor;
}

// The queries below look alike: each is admitted, bounded and answered later by the reader pool
// (Later); what differs is the call, which a table could not name without losing the types.
grpc::ServerUnaryReactor* AblationService::ListRuns(grpc::CallbackServerContext* context,
                                                    const v1::ListRunsRequest* request,
                                                    v1::ListRunsResponse* response) {
  return Later(Admit(context, __func__), Bounds(*request), Limits().max_reply_bytes, response,
               [&](auto done) { core_->queries().ListRuns(*request, std::move(done)); });
}

grpc::ServerUnaryReactor* AblationService::GetRun(grpc::CallbackServerContext* context,
                                                  const v1::GetRunRequest* request,
                                                  v1::GetRunResponse* response) {
  return Later(Admit(context, __func__), Bounds(*request), Limits().max_reply_bytes, response,
               [&](auto done) { core_->queries().GetRun(*request, std::move(done)); });
}

grpc::ServerUnaryReactor* AblationService::QueryMeasurements(
    grpc::CallbackServerContext* context, const v1::QueryMeasurementsRequest* request,
    v1::QueryMeasurementsResponse* response) {
  return Later(Admit(context, __func__), Bounds(*request), Limits().max_reply_bytes, response,
               [&](auto done) { core_->queries().QueryMeasurements(*request, std::move(done)); });
}

// Alike to ListRuns and the queries around it (said there).
grpc::ServerUnaryReactor* AblationService::GetHistory(grpc::CallbackServerContext* context,
                                                      const v1::HistoryRequest* request,
                                                      v1::HistoryResponse* response) {
  return Later(Admit(context, __func__), Bounds(*request), Limits().max_reply_bytes, response,
               [&](auto done) { core_->queries().GetHistory(*request, std::move(done)); });
}

grpc::ServerUnaryReactor* AblationService::Advise(grpc::CallbackServerContext* context,
                                                  const v1::AdviseRequest* request,
                                                  v1::AdviseResponse* response) {
  return Later(Admit(context, __func__), Bounds(*request), Limits().max_reply_bytes, response,
               [&](auto done) { core_->queries().Advise(*request, std::move(done)); });
}

grpc::ServerUnaryReactor* AblationService::InspectSass(grpc::CallbackServerContext* context,
                                                       const v1::SassRequest* request,
                                                       v1::SassResponse* response) {
  // The worker names the kernel on the GPU's thread, cuobjdump runs on the inspector's thread,
  // and that thread finishes the call.
  return Later(Admit(context, __func__), Bounds(*request), Limits().max_reply_bytes, response,
               [&](auto done) {
                 if (core::Status st = core_->sass().Inspect(*request, done); !st.ok())
                   done(st, {});
               });
}

grpc::ServerUnaryReactor* AblationService::Profile(grpc::CallbackServerContext* context,
                                                   const v1::ProfileRequest* request,
                                                   v1::ProfileResponse* response) {
  // ncu runs on the GPU's thread (the GPU is held, nothing is timed meanwhile); that thread
  // finishes the call. A profile holds the GPU as a run does: it takes a share of the caller's
  // quota of runs in flight, given back when it is answered.
  const Admitted call = Admit(context, __func__);  // first: nothing is reserved for a refused call
  const core::Identity caller = auth_->Caller(*context);
  core::Status bounds = Bounds(*request);
  if (call.status.ok() && bounds.ok()) bounds = quota_.Reserve(caller.name);
  return Later(call, bounds, Limits().max_reply_bytes, response, [&](auto done) {
    auto release = [this, name = caller.name, done](const core::Status& st,
                                                    const v1::ProfileResponse& r) {
      quota_.Release(name);
      done(st, r);
    };
    if (core::Status st = core_->profiler().Profile(core_->runs(), *request, release); !st.ok())
      release(st, {});
  });
}

core::KernelCaller AblationService::KernelCallerOf(grpc::CallbackServerContext* context) const {
  const core::Identity who = auth_->Caller(*context);
  core::KernelCaller caller;
  caller.name = who.name == "anonymous" ? "" : who.name;
  caller.admin = who.role == core::Role::kAdmin;
  caller.run = who.role == core::Role::kRun || caller.admin;
  return caller;
}

grpc::ServerUnaryReactor* AblationService::AddKernel(grpc::CallbackServerContext* context,
                                                     const v1::AddKernelRequest* request,
                                                     v1::AddKernelResponse* response) {
  const Admitted call = Admit(context, __func__);
  auto* reactor = call.reactor;
  if (!call.status.ok()) {
    reactor->Finish(call.status);
    return reactor;
  }
  if (core::Status st = Bounds(*request); !st.ok()) {
    reactor->Finish(ToGrpc(st));
    return reactor;
  }
  // Compiling takes seconds (NVRTC, once per knob set, in the compiler's sandboxed child
  // process): on the core's compile threads, whose queue is bounded; the thread that compiled
  // (or this one, for a refusal) finishes the call. The audit line says how it ended in one
  // line: a compile error's log is the caller's answer, never the daemon's log.
  // A compile error is told apart from a refused request by the trailer "ablation-reason:
  // compile_error" (the client's exit code says which; docs/using.md).
  const core::KernelCaller caller = KernelCallerOf(context);
  core_->AddKernel(
      caller, *request,
      [reactor, response, context, check = request->check_only(), who = auth_->Caller(*context),
       peer = context->peer()](const core::Status& st, const v1::AddKernelResponse& added) {
        AuditLog::Get().Action(check ? "check_kernel" : "add_kernel", who, peer,
                               added.kernel().name(), st.ok() ? "ok" : AuditOutcome(st));
        if (st.ok()) *response = added;
        if (!st.reason().empty()) context->AddTrailingMetadata("ablation-reason", st.reason());
        reactor->Finish(ToGrpc(st));
      });
  return reactor;
}

grpc::ServerUnaryReactor* AblationService::ListKernels(grpc::CallbackServerContext* context,
                                                       const v1::ListKernelsRequest* request,
                                                       v1::ListKernelsResponse* response) {
  return Inline(Admit(context, __func__), Bounds(*request),
                [&] { return Guarded([&] { return core_->ListKernels(*request, response); }); });
}

grpc::ServerUnaryReactor* AblationService::GetKernel(grpc::CallbackServerContext* context,
                                                     const v1::GetKernelRequest* request,
                                                     v1::GetKernelResponse* response) {
  const core::KernelCaller caller = KernelCallerOf(context);
  return Inline(Admit(context, __func__), Bounds(*request), [&] {
    return Guarded([&] { return core_->GetKernel(caller, *request, response); });
  });
}

grpc::ServerUnaryReactor* AblationService::RemoveKernel(grpc::CallbackServerContext* context,
                                                        const v1::RemoveKernelRequest* request,
                                                        v1::RemoveKernelResponse*) {
  const core::KernelCaller caller = KernelCallerOf(context);
  return Inline(Admit(context, __func__), Bounds(*request), [&] {
    const core::Status st = Guarded([&] { return core_->RemoveKernel(caller, *request); });
    AuditLog::Get().Action("remove_kernel", auth_->Caller(*context), context->peer(),
                           request->name(), st.ok() ? "ok" : st.message());
    return st;
  });
}

}  // namespace ablation::rpc
