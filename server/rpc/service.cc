#include "server/rpc/service.h"

#include <deque>
#include <memory>
#include <mutex>
#include <utility>

#include <spdlog/spdlog.h>

#include "db/error.h"
#include "server/core/advise.h"
#include "server/core/convert.h"
#include "server/core/variant_names.h"

namespace ablation::rpc {

grpc::Status ToGrpc(const core::Status& s) {
  using core::Code;
  switch (s.code()) {
    case Code::kOk:
      return grpc::Status::OK;
    case Code::kInvalidArgument:
      return {grpc::StatusCode::INVALID_ARGUMENT, s.message()};
    case Code::kNotFound:
      return {grpc::StatusCode::NOT_FOUND, s.message()};
    case Code::kFailedPrecondition:
      return {grpc::StatusCode::FAILED_PRECONDITION, s.message()};
    case Code::kUnavailable:
      return {grpc::StatusCode::UNAVAILABLE, s.message()};
    case Code::kInternal:
      return {grpc::StatusCode::INTERNAL, s.message()};
  }
  return {grpc::StatusCode::UNKNOWN, s.message()};
}

grpc::Status ToGrpc(const std::exception& e) {
  if (const auto* d = dynamic_cast<const db::Error*>(&e)) {
    switch (d->code()) {
      case db::Error::Code::kInvalidArgument:
        return {grpc::StatusCode::INVALID_ARGUMENT, d->what()};
      case db::Error::Code::kNotFound:
        return {grpc::StatusCode::NOT_FOUND, d->what()};
      case db::Error::Code::kIncompatible:
        return {grpc::StatusCode::FAILED_PRECONDITION, d->what()};
      case db::Error::Code::kStorage:
        break;
    }
  }
  spdlog::error("internal error: {}", e.what());
  return {grpc::StatusCode::INTERNAL, e.what()};
}

namespace {

// Runs a unary handler body, turning exceptions into statuses, and finishes the reactor.
template <typename Body>
grpc::ServerUnaryReactor* Unary(grpc::CallbackServerContext* context, Body&& body) {
  auto* reactor = context->DefaultReactor();
  grpc::Status status;
  try {
    status = body();
  } catch (const std::exception& e) {
    status = ToGrpc(e);
  }
  reactor->Finish(status);
  return reactor;
}

// Runs a unary handler whose answer comes later, from another thread: `submit` hands the core a
// callback that fills the response and finishes the call, and returns the core's status (ok: it
// took the work); a refusal (a status that is not ok) or an exception finishes the call at once.
template <typename Response, typename Submit>
grpc::ServerUnaryReactor* Deferred(grpc::CallbackServerContext* context, Response* response,
                                   Submit&& submit) {
  auto* reactor = context->DefaultReactor();
  core::Status st;
  try {
    st = submit([reactor, response](const core::Status& s, const Response& r) {
      *response = r;
      reactor->Finish(ToGrpc(s));
    });
  } catch (const std::exception& e) {
    reactor->Finish(ToGrpc(e));
    return reactor;
  }
  if (!st.ok()) reactor->Finish(ToGrpc(st));
  return reactor;
}

v1::Variant ToProto(const kernels::Variant& v) {
  v1::Variant p;
  p.set_name(v.name);
  p.set_family(v.family);
  p.set_description(v.description);
  for (const auto& [k, val] : v.params) (*p.mutable_params())[k] = val;
  for (auto d : v.dtypes) p.add_dtypes(std::string(kernels::ToString(d)));
  p.set_tile_m(v.tile.m);
  p.set_tile_n(v.tile.n);
  p.set_tile_k(v.tile.k);
  p.set_threads(v.threads);
  p.set_smem_bytes(v.smem_bytes);
  return p;
}

grpc::Status CheckPageSize(int32_t size) {
  if (size < 0) return {grpc::StatusCode::INVALID_ARGUMENT, "page_size: cannot be negative"};
  if (size > 1000) return {grpc::StatusCode::INVALID_ARGUMENT, "page_size: at most 1000"};
  return grpc::Status::OK;
}

// The write side of one RunAblation stream. The core holds it through a shared_ptr and may call
// OnEvent after the client went away: Detach() turns that into a no-op.
class RunStream final : public grpc::ServerWriteReactor<v1::RunEvent>, public core::RunObserver {
 public:
  RunStream(core::RunManager* runs, const v1::RunRequest& request, const std::string& peer)
      : runs_(runs) {}

  // Submits after construction: the core may emit the Queued event synchronously.
  void Begin(std::shared_ptr<RunStream> self_ref, const v1::RunRequest& request,
             const std::string& peer) {
    (void)self_ref;
    int64_t id = 0;
    core::Status st = runs_->SubmitRun(request, peer, observer_, &id);
    std::lock_guard lock(mu_);
    if (!st.ok()) {
      detached_ = true;
      FinishOnce(ToGrpc(st));
      return;
    }
    run_id_ = id;
  }

  void OnEvent(const v1::RunEvent& event) override {
    std::lock_guard lock(mu_);
    if (detached_ || finished_) return;
    if (event.has_failed() && !event.failed().code().empty()) {
      // A failure that is a status of its own ends the stream with that status.
      terminal_ = true;
      final_status_ = grpc::Status(event.failed().code() == "FAILED_PRECONDITION"
                                       ? grpc::StatusCode::FAILED_PRECONDITION
                                       : grpc::StatusCode::INTERNAL,
                                   event.failed().reason());
      if (!writing_) FinishOnce(final_status_);
      return;
    }
    pending_.push_back(event);
    if (event.has_finished() || event.has_failed()) terminal_ = true;
    if (!writing_) {
      writing_ = true;
      StartWrite(&pending_.front());
    }
  }

  void OnWriteDone(bool ok) override {
    std::lock_guard lock(mu_);
    pending_.pop_front();
    if (!ok) {
      // The client is gone: stop the run at its next measurement boundary.
      writing_ = false;
      CancelRunLocked();
      FinishOnce(grpc::Status(grpc::StatusCode::CANCELLED, "client went away"));
      return;
    }
    if (!pending_.empty()) {
      StartWrite(&pending_.front());
      return;
    }
    writing_ = false;
    if (terminal_) FinishOnce(final_status_);
  }

  void OnCancel() override {
    std::lock_guard lock(mu_);
    CancelRunLocked();
    if (!writing_) FinishOnce(grpc::Status(grpc::StatusCode::CANCELLED, "cancelled by client"));
  }

  void OnDone() override {
    {
      std::lock_guard lock(mu_);
      detached_ = true;
    }
    observer_.reset();  // the core's copy keeps this object alive only as a no-op sink
    self_.reset();
  }

  std::shared_ptr<core::RunObserver> observer_;
  std::shared_ptr<RunStream> self_;

 private:
  void CancelRunLocked() {
    if (run_id_ > 0 && !terminal_) {
      std::string state;
      (void)runs_->Cancel(run_id_, &state);
      spdlog::info("run {}: client disconnected, {}", run_id_, state);
    }
  }
  void FinishOnce(const grpc::Status& status) {
    if (finished_) return;
    finished_ = true;
    Finish(status);
  }

  core::RunManager* runs_;
  std::recursive_mutex mu_;
  std::deque<v1::RunEvent> pending_;
  bool writing_ = false;
  bool terminal_ = false;
  bool finished_ = false;
  bool detached_ = false;
  int64_t run_id_ = 0;
  grpc::Status final_status_ = grpc::Status::OK;
};

}  // namespace

AblationService::AblationService(core::RunManager* runs, db::Store* store,
                                 const kernels::Registry* registry)
    : runs_(runs),
      store_(store),
      registry_(registry),
      sass_(std::make_unique<core::SassInspector>(core::SassInspectorOptions{}, runs, registry)) {}

grpc::ServerWriteReactor<v1::RunEvent>* AblationService::RunAblation(
    grpc::CallbackServerContext* context, const v1::RunRequest* request) {
  // The object is owned by itself (self_) until OnDone, and shared with the core as observer.
  auto stream = std::make_shared<RunStream>(runs_, *request, context->peer());
  stream->self_ = stream;
  stream->observer_ = stream;
  stream->Begin(stream, *request, context->peer());
  return stream.get();
}

grpc::ServerUnaryReactor* AblationService::Verify(grpc::CallbackServerContext* context,
                                                  const v1::VerifyRequest* request,
                                                  v1::VerifyResponse* response) {
  return Deferred(context, response, [&](auto done) {
    return runs_->SubmitVerify(*request, context->peer(), std::move(done));
  });
}

grpc::ServerUnaryReactor* AblationService::ListVariants(grpc::CallbackServerContext* context,
                                                        const v1::ListVariantsRequest* request,
                                                        v1::ListVariantsResponse* response) {
  return Unary(context, [&]() -> grpc::Status {
    if (request->glob().empty()) {
      for (const auto& v : registry_->All()) *response->add_variants() = ToProto(v);
      return grpc::Status::OK;
    }
    std::vector<const kernels::Variant*> found;
    core::Status st = core::Resolve(*registry_, request->glob(), "glob", &found);
    if (!st.ok()) return ToGrpc(st);
    for (const auto* v : found) *response->add_variants() = ToProto(*v);
    return grpc::Status::OK;
  });
}

grpc::ServerUnaryReactor* AblationService::GetDevice(grpc::CallbackServerContext* context,
                                                     const v1::GetDeviceRequest* request,
                                                     v1::GetDeviceResponse* response) {
  return Unary(context, [&]() -> grpc::Status {
    if (request->device() < 0)
      return {grpc::StatusCode::INVALID_ARGUMENT, "device: must be 0 or more"};
    core::DeviceSnapshot snap = runs_->Device(request->device());
    response->set_available(snap.available);
    response->set_unavailable_reason(snap.unavailable_reason);
    *response->mutable_device() = snap.identity;
    response->mutable_device()->set_index(request->device());
    response->set_device_count(snap.device_count);
    response->set_queued_runs(snap.queued);
    response->set_running_run_id(snap.running_run_id);
    *response->mutable_live() = core::ToProto(snap.live);
    for (int mhz : snap.supported_sm_clocks_mhz) response->add_supported_sm_clocks_mhz(mhz);
    for (int mhz : snap.supported_mem_clocks_mhz) response->add_supported_mem_clocks_mhz(mhz);
    return grpc::Status::OK;
  });
}

grpc::ServerUnaryReactor* AblationService::ListRuns(grpc::CallbackServerContext* context,
                                                    const v1::ListRunsRequest* request,
                                                    v1::ListRunsResponse* response) {
  return Unary(context, [&]() -> grpc::Status {
    if (auto s = CheckPageSize(request->page_size()); !s.ok()) return s;
    if (!request->state().empty() && !db::IsRunState(request->state()))
      return {grpc::StatusCode::INVALID_ARGUMENT,
              "state: unknown run state '" + request->state() +
                  "'; known: queued, running, succeeded, partial, failed, cancelled"};
    db::RunFilter filter;
    filter.tag = request->tag();
    filter.state = request->state();
    filter.page_size = request->page_size();
    filter.page_token = request->page_token();
    db::RunPage page = store_->ListRuns(filter);
    for (const auto& r : page.runs) *response->add_runs() = core::ToProto(r);
    response->set_next_page_token(page.next_page_token);
    return grpc::Status::OK;
  });
}

grpc::ServerUnaryReactor* AblationService::GetRun(grpc::CallbackServerContext* context,
                                                  const v1::GetRunRequest* request,
                                                  v1::GetRunResponse* response) {
  return Unary(context, [&]() -> grpc::Status {
    std::optional<db::RunRecord> run =
        request->run_id() > 0 ? store_->GetRun(request->run_id()) : store_->LatestRun();
    if (!run) {
      return {grpc::StatusCode::NOT_FOUND,
              request->run_id() > 0 ? "run_id: run " + std::to_string(request->run_id()) +
                                          " does not exist"
                                    : "no run has been stored yet"};
    }
    *response->mutable_run() = core::ToProto(*run);
    for (const auto& m : store_->MeasurementsOfRun(run->id, request->include_samples()))
      *response->add_measurements() = core::ToProto(m);
    for (const auto& v : store_->VerificationsOfRun(run->id))
      *response->add_verifications() = core::ToProto(v);
    return grpc::Status::OK;
  });
}

grpc::ServerUnaryReactor* AblationService::QueryMeasurements(
    grpc::CallbackServerContext* context, const v1::QueryMeasurementsRequest* request,
    v1::QueryMeasurementsResponse* response) {
  return Unary(context, [&]() -> grpc::Status {
    if (auto s = CheckPageSize(request->page_size()); !s.ok()) return s;
    if (!request->dtype().empty() && !kernels::ParseDType(request->dtype()))
      return {grpc::StatusCode::INVALID_ARGUMENT,
              "dtype: unknown dtype '" + request->dtype() + "'; known: bf16, fp16, fp32, tf32, int8"};
    const auto& shape = request->shape();
    if (shape.m() < 0 || shape.n() < 0 || shape.k() < 0)
      return {grpc::StatusCode::INVALID_ARGUMENT, "shape: M, N and K cannot be negative"};
    if (request->since_ms() < 0 || request->until_ms() < 0)
      return {grpc::StatusCode::INVALID_ARGUMENT, "since_ms/until_ms: cannot be negative"};
    if (request->until_ms() > 0 && request->since_ms() >= request->until_ms())
      return {grpc::StatusCode::INVALID_ARGUMENT, "since_ms: must be before until_ms"};
    if (!request->status().empty() && request->status() != db::kMeasurementOk &&
        request->status() != db::kMeasurementFailed && request->status() != db::kMeasurementSkipped)
      return {grpc::StatusCode::INVALID_ARGUMENT,
              "status: unknown status '" + request->status() + "'; known: ok, failed, skipped"};
    db::MeasurementFilter filter;
    filter.variant_glob = request->variant_glob();
    // A short name (L1_R1_s3) selects its canonical variant, as everywhere else.
    if (!filter.variant_glob.empty() && !core::IsGlob(filter.variant_glob)) {
      if (auto parsed = core::ParseAblationName(filter.variant_glob))
        filter.variant_glob = parsed->Canonical();
    }
    filter.dtype = request->dtype();
    filter.m = shape.m();
    filter.n = shape.n();
    filter.k = shape.k();
    filter.run_id = request->run_id();
    filter.tag = request->tag();
    filter.since_ms = request->since_ms();
    filter.until_ms = request->until_ms();
    filter.status = request->status();
    filter.page_size = request->page_size();
    filter.page_token = request->page_token();
    filter.include_samples = request->include_samples();
    db::MeasurementPage page = store_->QueryMeasurements(filter);
    for (const auto& m : page.measurements) *response->add_measurements() = core::ToProto(m);
    response->set_next_page_token(page.next_page_token);
    return grpc::Status::OK;
  });
}

grpc::ServerUnaryReactor* AblationService::CancelRun(grpc::CallbackServerContext* context,
                                                     const v1::CancelRunRequest* request,
                                                     v1::CancelRunResponse* response) {
  return Unary(context, [&]() -> grpc::Status {
    if (request->run_id() <= 0)
      return {grpc::StatusCode::INVALID_ARGUMENT, "run_id: must be a positive run id"};
    std::string state;
    core::Status st = runs_->Cancel(request->run_id(), &state);
    if (!st.ok()) return ToGrpc(st);
    response->set_state(state);
    return grpc::Status::OK;
  });
}

grpc::ServerUnaryReactor* AblationService::ListPresets(grpc::CallbackServerContext* context,
                                                       const v1::ListPresetsRequest* request,
                                                       v1::ListPresetsResponse* response) {
  return Unary(context, [&]() -> grpc::Status {
    static const core::PresetCatalog kNoPresets;
    const core::PresetCatalog& presets = presets_ ? *presets_ : kNoPresets;
    if (!request->name().empty()) {
      const core::Preset* preset = presets.Find(request->name());
      if (!preset) {
        std::string known;
        for (const auto* p : presets.All()) known += (known.empty() ? "" : ", ") + p->name;
        return {grpc::StatusCode::NOT_FOUND,
                "name: no preset '" + request->name() + "'; known: " + known};
      }
      *response->add_presets() = core::ToProto(*preset, *registry_);
      return grpc::Status::OK;
    }
    for (const auto* p : presets.All()) *response->add_presets() = core::ToProto(*p, *registry_);
    return grpc::Status::OK;
  });
}

grpc::ServerUnaryReactor* AblationService::Advise(grpc::CallbackServerContext* context,
                                                  const v1::AdviseRequest* request,
                                                  v1::AdviseResponse* response) {
  return Unary(context, [&]() -> grpc::Status {
    if (request->device() < 0)
      return {grpc::StatusCode::INVALID_ARGUMENT, "device: must be 0 or more"};
    core::Advice a;
    core::Status st = core::Advise(
        {request->bm(), request->bn(), request->bk(), request->dtype(), request->arch()}, &a);
    if (!st.ok()) return ToGrpc(st);
    response->set_ratio(a.ratio);
    response->set_element_bytes(a.element_bytes);
    response->set_rule(std::string(core::ToString(a.rule)));
    response->set_rule_reason(a.rule_reason);
    response->set_arch(request->arch());
    response->set_arch_gpus(a.arch_gpus);
    v1::SmemBudget* s = response->mutable_smem();
    s->set_a_bytes(a.smem.a_bytes);
    s->set_b_bytes(a.smem.b_bytes);
    s->set_single_bytes(a.smem.single_bytes);
    s->set_double_bytes(a.smem.double_bytes);
    s->set_smem_per_sm(a.smem.smem_per_sm);
    s->set_smem_per_block_max(a.smem.smem_per_block_max);
    s->set_cliff_bytes(a.smem.cliff_bytes);
    s->set_blocks_per_sm_single(a.smem.blocks_single);
    s->set_blocks_per_sm_double(a.smem.blocks_double);
    s->set_double_fits(a.smem.double_fits);
    s->set_double_under_cliff(a.smem.double_under_cliff);
    s->set_verdict(a.smem_verdict);

    v1::MeasuredAdvice* m = response->mutable_measured();
    std::optional<std::string> tag = core::PipeTypeTag(request->dtype());
    if (!tag) {
      m->set_summary("the pipe_ family has no " + request->dtype() +
                     " variants (fp16, int8, fp32 only): nothing measured to compare");
      return grpc::Status::OK;
    }
    const auto names = core::PipeVariantNames(*tag, request->bm(), request->bn(), request->bk());
    for (const auto& n : names) m->add_variants(n);
    core::DeviceSnapshot snap = runs_->Device(request->device());
    core::MeasuredAnswer ans = core::MeasuredOnGpu(*store_, names, snap.identity.uuid());
    m->set_measured(ans.measured);
    m->set_summary(ans.summary);
    m->set_note(ans.note);
    m->mutable_shape()->set_m(ans.m);
    m->mutable_shape()->set_n(ans.n);
    m->mutable_shape()->set_k(ans.k);
    m->set_winner(ans.winner);
    m->set_winner_vs_baseline(ans.winner_vs_baseline);
    m->set_winner_vs_runner_up(ans.winner_vs_runner_up);
    for (const auto& p : ans.points) {
      v1::MeasuredPoint* q = m->add_points();
      q->set_variant(p.variant);
      q->mutable_shape()->set_m(p.m);
      q->mutable_shape()->set_n(p.n);
      q->mutable_shape()->set_k(p.k);
      q->set_tflops(p.tflops);
      q->set_median_ms(p.median_ms);
      q->set_run_id(p.run_id);
      q->set_measurement_id(p.measurement_id);
      q->set_created_at_ms(p.created_at_ms);
    }
    return grpc::Status::OK;
  });
}

grpc::ServerUnaryReactor* AblationService::InspectSass(grpc::CallbackServerContext* context,
                                                       const v1::SassRequest* request,
                                                       v1::SassResponse* response) {
  // Like Verify: the worker names the kernel on the GPU's thread, cuobjdump runs on the
  // inspector's thread, and that thread finishes the call.
  return Deferred(context, response,
                  [&](auto done) { return sass_->Inspect(*request, std::move(done)); });
}

grpc::ServerUnaryReactor* AblationService::GetBudget(grpc::CallbackServerContext* context,
                                                     const v1::BudgetRequest* request,
                                                     v1::BudgetResponse* response) {
  return Unary(context, [&]() -> grpc::Status {
    if (core::IsGlob(request->variant()))
      return {grpc::StatusCode::INVALID_ARGUMENT, "variant: one variant, not a pattern"};
    std::vector<const kernels::Variant*> found;
    core::Status st = core::Resolve(*registry_, request->variant(), "variant", &found);
    if (!st.ok()) return ToGrpc(st);
    const kernels::Variant& v = *found.front();
    const int element_bytes = v.dtypes.empty() ? 2 : kernels::ElementBytes(v.dtypes.front());
    const int64_t stage_bytes = int64_t(v.tile.m) * v.tile.k * element_bytes +
                                int64_t(v.tile.k) * v.tile.n * element_bytes;
    int stages = 0;
    for (const auto& [key, value] : v.params)
      if (key == "stages") stages = std::atoi(value.c_str());
    // Families without a stages knob: as many stages as their allocation holds tiles.
    if (stages <= 0 && stage_bytes > 0)
      stages = int(std::max<int64_t>(1, (v.smem_bytes + stage_bytes / 2) / stage_bytes));
    core::VariantBudget budget;
    st = core::BudgetForVariant(v.name, v.tile.m, v.tile.n, v.tile.k, element_bytes, stages,
                                v.smem_bytes, request->arch(), &budget);
    if (!st.ok()) return ToGrpc(st);
    response->set_variant(v.name);
    response->set_arch(std::string(budget.arch->arch));
    response->set_gpus(std::string(budget.arch->gpus));
    response->set_smem_per_sm(budget.arch->smem_per_sm);
    response->set_smem_per_block_max(budget.arch->smem_per_block_max);
    response->set_cliff_bytes(budget.cliff_bytes);
    for (const auto& r : budget.rows) {
      auto* row = response->add_rows();
      row->set_stages(r.stages);
      row->set_bytes(r.bytes);
      row->set_blocks_per_sm(r.blocks_per_sm);
      row->set_over_cliff(r.over_cliff);
      row->set_fits(r.fits);
      row->set_this_variant(r.this_variant);
    }
    response->set_verdict(budget.verdict);
    return grpc::Status::OK;
  });
}

}  // namespace ablation::rpc
