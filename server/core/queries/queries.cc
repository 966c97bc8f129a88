#include "server/core/queries/queries.h"

#include <algorithm>

#include "common/history/history.h"
#include "server/core/plan/variant_names.h"
#include "server/core/queries/advise.h"

namespace ablation::core {
namespace {

constexpr int32_t kMaxPageSize = 1000;

Status CheckPageSize(int32_t size) {
  if (size < 0) return InvalidArgument("page_size: cannot be negative");
  if (size > kMaxPageSize) return InvalidArgument("page_size: at most 1000");
  return Status::Ok();
}

Status ToMeasurementFilter(const v1::QueryMeasurementsRequest& r, db::MeasurementFilter* f) {
  if (Status st = CheckPageSize(r.page_size()); !st.ok()) return st;
  if (!r.dtype().empty() && !kernels::ParseDType(r.dtype()))
    return InvalidArgument("dtype: unknown dtype '" + r.dtype() +
                           "'; known: bf16, fp16, fp32, tf32, int8");
  const auto& shape = r.shape();
  if (shape.m() < 0 || shape.n() < 0 || shape.k() < 0)
    return InvalidArgument("shape: M, N and K cannot be negative");
  if (r.since_ms() < 0 || r.until_ms() < 0)
    return InvalidArgument("since_ms/until_ms: cannot be negative");
  if (r.until_ms() > 0 && r.since_ms() >= r.until_ms())
    return InvalidArgument("since_ms: must be before until_ms");
  if (!v1::MeasurementStatus_IsValid(r.status()))
    return InvalidArgument("status: unknown measurement status " + std::to_string(r.status()));
  f->variant_glob = r.variant_glob();
  // A short name (L1_R1_s3) selects its canonical variant, as everywhere else.
  if (!f->variant_glob.empty() && !IsGlob(f->variant_glob)) {
    if (auto parsed = ParseAblationName(f->variant_glob)) f->variant_glob = parsed->Canonical();
  }
  f->dtype = r.dtype();
  f->m = shape.m();
  f->n = shape.n();
  f->k = shape.k();
  f->run_id = r.run_id();
  f->tag = r.tag();
  f->since_ms = r.since_ms();
  f->until_ms = r.until_ms();
  f->status = r.status();
  f->page_size = r.page_size();
  f->page_token = r.page_token();
  f->include_samples = r.include_samples();
  f->newest_first = r.newest_first();
  return Status::Ok();
}

void FillSmem(const Advice& a, v1::SmemBudget* s) {
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
}

void FillMeasured(const MeasuredAnswer& ans, v1::MeasuredAdvice* m) {
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
}

void FillVerdict(const RuleVerdict& v, v1::AdviseResponse* r) {
  switch (v.check) {
    case RuleCheck::kUnmeasured:
      r->set_rule_check(v1::RULE_CHECK_UNMEASURED);
      break;
    case RuleCheck::kAgrees:
      r->set_rule_check(v1::RULE_CHECK_AGREES);
      break;
    case RuleCheck::kContradicted:
      r->set_rule_check(v1::RULE_CHECK_CONTRADICTED);
      break;
  }
  r->set_measured_gain(v.gain);
  r->set_rule_expects(v.expected);
  r->set_rule_verdict(v.verdict);
  r->set_lead(v.lead);
}

}  // namespace

template <typename Response, typename Answer>
void Queries::OnReader(Done<Response> done, Answer answer) {
  const bool queued = readers_->Submit([done, answer](db::Store& reader) {
    Response response;
    Status st;
    try {
      st = answer(reader, &response);
    } catch (const std::exception& e) {
      st = StatusFromException(e);
    }
    done(st, st.ok() ? response : Response());
  });
  if (!queued) done({Code::kUnavailable, "the daemon is shutting down"}, Response());
}

void Queries::ListRuns(const v1::ListRunsRequest& request, Done<v1::ListRunsResponse> done) {
  if (Status st = CheckPageSize(request.page_size()); !st.ok()) return done(st, {});
  if (!v1::RunState_IsValid(request.state()))
    return done(InvalidArgument("state: unknown run state " + std::to_string(request.state())), {});
  db::RunFilter filter;
  filter.tag = request.tag();
  filter.state = request.state();
  filter.page_size = request.page_size();
  filter.page_token = request.page_token();
  OnReader(std::move(done), [filter](db::Store& reader, v1::ListRunsResponse* response) {
    db::RunPage page = reader.ListRuns(filter);
    for (auto& run : page.runs) *response->add_runs() = std::move(run);
    response->set_next_page_token(page.next_page_token);
    return Status::Ok();
  });
}

void Queries::GetRun(const v1::GetRunRequest& request, Done<v1::GetRunResponse> done) {
  OnReader(std::move(done), [request](db::Store& reader, v1::GetRunResponse* response) {
    std::optional<v1::Run> run =
        request.run_id() > 0 ? reader.GetRun(request.run_id()) : reader.LatestRun();
    if (!run)
      return NotFound(request.run_id() > 0
                          ? "run_id: run " + std::to_string(request.run_id()) + " does not exist"
                          : "no run has been stored yet");
    auto measurements = reader.MeasurementsOfRun(run->id(), request.include_samples());
    if (request.include_counters()) reader.FillCounters(measurements);
    std::vector<int64_t> builds;
    for (const auto& m : measurements)
      if (m.user_build_id() > 0 &&
          std::find(builds.begin(), builds.end(), m.user_build_id()) == builds.end())
        builds.push_back(m.user_build_id());
    for (auto& b : reader.UserBuildIdentities(builds)) *response->add_user_builds() = std::move(b);
    for (auto& m : measurements) *response->add_measurements() = std::move(m);
    for (auto& v : reader.VerificationsOfRun(run->id()))
      *response->add_verifications() = std::move(v);
    *response->mutable_run() = std::move(*run);
    return Status::Ok();
  });
}

void Queries::FindRun(int64_t run_id, Done<v1::Run> done) {
  OnReader(std::move(done), [run_id](db::Store& reader, v1::Run* response) {
    std::optional<v1::Run> run = reader.GetRun(run_id);
    if (!run) return NotFound("run_id: run " + std::to_string(run_id) + " does not exist");
    *response = std::move(*run);
    return Status::Ok();
  });
}

void Queries::QueryMeasurements(const v1::QueryMeasurementsRequest& request,
                                Done<v1::QueryMeasurementsResponse> done) {
  db::MeasurementFilter filter;
  if (Status st = ToMeasurementFilter(request, &filter); !st.ok()) return done(st, {});
  const bool counters = request.include_counters();
  // By value: the filter and whether counters were asked for, nothing of the caller's.
  OnReader(std::move(done), [=](db::Store& reader, v1::QueryMeasurementsResponse* response) {
    db::MeasurementPage page = reader.QueryMeasurements(filter);
    if (counters) reader.FillCounters(page.measurements);
    for (auto& m : page.measurements) *response->add_measurements() = std::move(m);
    response->set_next_page_token(page.next_page_token);
    return Status::Ok();
  });
}

void Queries::GetHistory(const v1::HistoryRequest& request, Done<v1::HistoryResponse> done) {
  db::SeriesFilter f;
  f.variant_glob = request.variant_glob();
  if (f.variant_glob.empty())
    return done(InvalidArgument("variant: required (a name or glob)"), {});
  if (!IsGlob(f.variant_glob)) {
    if (auto parsed = ParseAblationName(f.variant_glob)) f.variant_glob = parsed->Canonical();
  }
  if (!request.dtype().empty() && !kernels::ParseDType(request.dtype()))
    return done(InvalidArgument("dtype: unknown dtype '" + request.dtype() +
                                "'; known: bf16, fp16, fp32, tf32, int8"),
                {});
  const auto& shape = request.shape();
  if (shape.m() < 0 || shape.n() < 0 || shape.k() < 0)
    return done(InvalidArgument("shape: M, N and K cannot be negative"), {});
  if (request.since_ms() < 0) return done(InvalidArgument("since_ms: cannot be negative"), {});
  if (request.run_id() < 0) return done(InvalidArgument("run_id: cannot be negative"), {});
  if (!v1::Regime_IsValid(request.regime()))
    return done(InvalidArgument("regime: unknown regime " + std::to_string(request.regime())), {});
  const std::string& device = request.device();
  if (device.find_first_not_of("0123456789") == std::string::npos && device.size() > 4)
    return done(InvalidArgument("device: '" + device + "' is neither a GPU index nor a UUID"), {});
  f.dtype = request.dtype();
  f.m = shape.m();
  f.n = shape.n();
  f.k = shape.k();
  f.device = device;
  if (request.regime() != v1::REGIME_UNSPECIFIED) f.regime = db::EnumText(request.regime());
  f.since_ms = request.since_ms();
  f.tag = request.tag();
  f.run_id = request.run_id();
  OnReader(std::move(done), [f](db::Store& reader, v1::HistoryResponse* response) {
    // A name never measured is a mistake worth saying; a glob that matches nothing is no series.
    if (!IsGlob(f.variant_glob) && !reader.VariantMeasured(f.variant_glob)) {
      return NotFound("variant: no measurement of '" + f.variant_glob +
                      "' was ever stored (ablation-client variants lists the names)");
    }
    *response = history::BuildHistory(reader.SeriesRows(f));
    return Status::Ok();
  });
}

void Queries::Advise(const v1::AdviseRequest& request, Done<v1::AdviseResponse> done) {
  if (request.device() < 0) return done(InvalidArgument("device: must be 0 or more"), {});
  core::Advice a;
  Status st =
      core::Advise({request.bm(), request.bn(), request.bk(), request.dtype(), request.arch()}, &a);
  if (!st.ok()) return done(st, {});
  v1::AdviseResponse base;
  base.set_ratio(a.ratio);
  base.set_element_bytes(a.element_bytes);
  base.set_rule(std::string(ToString(a.rule)));
  base.set_rule_reason(a.rule_reason);
  base.set_arch(request.arch());
  base.set_arch_gpus(a.arch_gpus);
  FillSmem(a, base.mutable_smem());
  std::optional<std::string> tag = PipeTypeTag(request.dtype());
  if (!tag) {
    base.mutable_measured()->set_summary(
        "the pipe_ family has no " + request.dtype() +
        " variants (fp16, int8, fp32 only): nothing measured to compare");
    FillVerdict(CheckRule(a.rule, MeasuredAnswer{}, {}), &base);
    return done(Status::Ok(), base);
  }
  const auto names = PipeVariantNames(*tag, request.bm(), request.bn(), request.bk());
  for (const auto& n : names) base.mutable_measured()->add_variants(n);
  const std::string uuid = runs_ ? runs_->Device(request.device()).identity.uuid() : "";
  const PipelineRule rule = a.rule;
  OnReader(std::move(done),
           [base, names, uuid, rule](db::Store& reader, v1::AdviseResponse* response) {
             *response = base;
             const MeasuredAnswer measured = MeasuredOnGpu(reader, names, uuid);
             FillMeasured(measured, response->mutable_measured());
             FillVerdict(CheckRule(rule, measured, names), response);
             return Status::Ok();
           });
}

}  // namespace ablation::core
