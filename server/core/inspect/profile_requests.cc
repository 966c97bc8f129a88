// The two ways to ask for counters: the Profile RPC (variants x shapes, answered when the last
// launch is profiled) and `run --profile` (each item after its timing). Both profile on the GPU's
// thread, which holds the GPU: the RPC through RunManager::Describe, whose callback runs there
// between measurements, one variant per callback so that a run in progress goes on between
// them; the run hook because it is called there.
#include <algorithm>
#include <memory>

#include <spdlog/spdlog.h>

#include "server/core/inspect/profiler.h"
#include "server/core/plan/verification_policy.h"
#include "server/core/runs/run_manager.h"
#include "server/core/userkernels/task_builds.h"

namespace ablation::core {
namespace {

using Kernel = std::pair<std::string, std::string>;  // (variant, dtype)

v1::Shape ShapeOf(const kernels::Problem& p) {
  v1::Shape s;
  s.set_m(p.m);
  s.set_n(p.n);
  s.set_k(p.k);
  return s;
}

std::string DTypeOf(const kernels::Problem& p) { return std::string(kernels::ToString(p.dtype)); }

bool IsHostRefusal(ProfileRefusal r) {
  return r == ProfileRefusal::kNoTool || r == ProfileRefusal::kPermission ||
         r == ProfileRefusal::kDriver;
}

constexpr int kMaxWarmup = 1000;  // the one-shot worker's own limit

// One Profile call, shared by the Describe callbacks that profile it variant by variant.
struct ProfileCall {
  Profiler* profiler = nullptr;
  RunManager* runs = nullptr;
  db::Store* store = nullptr;
  int device = 0;
  int warmup = 3;
  std::vector<std::string> words;
  std::string device_uuid;
  std::vector<Kernel> kernels;              ///< distinct, in plan order
  std::vector<PlannedMeasurement> items;    ///< the plan's: shape-major
  std::vector<v1::ProfiledKernel> results;  ///< one per item
  size_t next = 0;                          ///< the kernel profiled by the next callback
  v1::ProfileResponse response;
  Profiler::Done done;
};

Status ProfileNext(std::shared_ptr<ProfileCall> call);

// On the GPU's thread: every shape of one kernel, then the next kernel's turn is queued.
void ProfileKernel(const std::shared_ptr<ProfileCall>& call, const Status& st,
                   const std::vector<worker::v1::DescribeResult>& described) {
  if (!st.ok()) return call->done(st, {});
  const Kernel kernel = call->kernels[call->next];
  size_t shape = 0;  // described[] holds one result per shape of the kernel, in plan order
  for (size_t i = 0; i < call->items.size(); ++i) {
    const PlannedMeasurement& item = call->items[i];
    if (item.variant->name != kernel.first || DTypeOf(item.problem) != kernel.second) continue;
    // The build that runs this shape (the sm90 family's guarded or unclustered ones), whose
    // symbol is what Nsight Compute must filter for.
    const worker::v1::DescribeResult d =
        shape < described.size() ? described[shape] : worker::v1::DescribeResult();
    ++shape;
    v1::ProfiledKernel& k = call->results[i];
    k.set_variant(kernel.first);
    k.set_dtype(kernel.second);
    *k.mutable_shape() = ShapeOf(item.problem);
    if (!d.ok()) {
      k.set_error("the worker cannot name its kernel: " +
                  (d.error().empty() ? std::string("no answer") : d.error()));
      continue;
    }
    k.set_symbol(d.kernel_symbol());
    call->response.set_arch(d.arch());
    std::vector<CounterSelection> counters;
    if (Status sel = SelectCounters(call->words, d.arch(), &counters); !sel.ok())
      return call->done(FailedPrecondition(sel.message()), {});
    ProfileTarget target{kernel.first, kernel.second,     k.shape(),
                         call->device, d.kernel_symbol(), d.binary(),
                         d.arch(),     call->warmup,      1};
    target.library_algo = d.library_algo();
    ProfileResult r = call->profiler->ProfileLaunch(target, counters);
    if (IsHostRefusal(r.refusal)) return call->done(FailedPrecondition(r.message), {});
    if (r.refusal != ProfileRefusal::kNone) {
      k.set_error(r.message);
      continue;
    }
    if (d.library()) {  // the library's choice, as ncu named it
      k.set_library(true);
      k.set_symbol(r.kernel_name);
    }
    for (auto& c : r.counters) *k.add_counters() = std::move(c);
    try {
      call->store->InsertProfiledKernel(k, call->device_uuid, d.arch());
    } catch (const std::exception& e) {
      return call->done({Code::kInternal, std::string("storing the counters: ") + e.what()}, {});
    }
  }
  if (++call->next < call->kernels.size()) {
    if (Status next = ProfileNext(call); !next.ok()) call->done(next, {});
    return;
  }
  for (auto& k : call->results) *call->response.add_kernels() = std::move(k);
  call->done(Status::Ok(), call->response);
}

Status ProfileNext(std::shared_ptr<ProfileCall> call) {
  const Kernel kernel = call->kernels[call->next];
  std::vector<RunManager::DescribeItem> shapes;
  for (const PlannedMeasurement& item : call->items) {
    if (item.variant->name == kernel.first && DTypeOf(item.problem) == kernel.second)
      shapes.push_back({kernel.first, kernel.second, ShapeOf(item.problem)});
  }
  return call->runs->Describe(
      call->device, shapes,
      [call](const Status& st, const std::vector<worker::v1::DescribeResult>& described) {
        ProfileKernel(call, st, described);
      });
}

}  // namespace

Status Profiler::Profile(RunManager& runs, const v1::ProfileRequest& request, Done done) {
  if (request.variants().empty())
    return InvalidArgument("variants: give at least one variant (a name, short name or glob)");
  if (request.device() < 0) return InvalidArgument("device: must be 0 or more");
  if (request.warmup_launches() < 0 || request.warmup_launches() > kMaxWarmup)
    return InvalidArgument("warmup_launches: 0 to " + std::to_string(kMaxWarmup));
  v1::RunRequest as_run;
  *as_run.mutable_variants() = request.variants();
  *as_run.mutable_shapes() = request.shapes();
  if (as_run.shapes().empty()) {
    v1::Shape* s = as_run.add_shapes();
    s->set_m(4096);
    s->set_n(4096);
    s->set_k(4096);
  }
  as_run.set_dtype(request.dtype());
  as_run.set_device(request.device());
  RunPlan plan;
  // Memory is the one-shot worker's to check, as it is for a measurement.
  if (Status st = PlanRun(as_run, *registry_, DeviceLimits{}, TimingDefaults{}, &plan); !st.ok())
    return st;
  int max_items = 0;
  int64_t max_stored_bytes = 0;
  {
    std::lock_guard lock(mu_);
    max_items = options_.max_items;
    max_stored_bytes = options_.max_stored_bytes;
  }
  if (Status st =
          CheckPlanSize(int64_t(plan.items.size()), max_items, "profiles (variants x shapes)");
      !st.ok())
    return st;
  if (Status st = CheckPlanBytes(int64_t(plan.items.size()), 0, max_stored_bytes, "profiles");
      !st.ok())
    return st;
  auto call = std::make_shared<ProfileCall>();
  call->words.assign(request.metrics().begin(), request.metrics().end());
  std::vector<CounterSelection> unused;
  if (Status st = SelectCounters(call->words, "sm_90", &unused); !st.ok()) return st;
  std::string looked;
  const std::string tool = Tool(&looked);
  if (tool.empty()) return FailedPrecondition(RefusalSentence(ProfileRefusal::kNoTool, looked));
  call->profiler = this;
  call->runs = &runs;
  call->store = store_;
  call->device = request.device();
  call->warmup =
      request.warmup_launches() > 0 ? request.warmup_launches() : options_.warmup_launches;
  call->items = plan.items;
  call->results.resize(plan.items.size());
  for (const auto& item : plan.items) {
    Kernel k{item.variant->name, DTypeOf(item.problem)};
    if (std::find(call->kernels.begin(), call->kernels.end(), k) == call->kernels.end())
      call->kernels.push_back(k);
  }
  const DeviceSnapshot device = runs.Device(request.device());
  call->device_uuid = device.identity.uuid();
  *call->response.mutable_device() = device.identity;
  call->response.set_tool(tool);
  call->response.set_tool_version(ToolVersion(tool));
  call->done = std::move(done);
  return ProfileNext(call);
}

std::string Profiler::RunRefusal(int64_t run_id, const std::string& why) {
  std::lock_guard lock(mu_);
  if (why.empty()) {
    auto it = run_refusals_.find(run_id);
    return it == run_refusals_.end() ? "" : it->second;
  }
  // A few runs' worth: runs end, and a refusal is re-learnt by the next run's first item.
  if (run_refusals_.size() > 64) run_refusals_.erase(run_refusals_.begin());
  run_refusals_[run_id] = why;
  return why;
}

void Profiler::ProfileMeasurement(GpuWorker& gpu, const RunPlan& plan,
                                  const PlannedMeasurement& item, int64_t run_id, uint64_t seed,
                                  v1::Measurement* m) {
  const std::string timing_goes_on = "; the timing is unaffected";
  if (std::string refused = RunRefusal(run_id, ""); !refused.empty())
    return m->set_counters_note("not profiled: " + refused + timing_goes_on);
  worker::v1::WorkerRequest req;
  auto* task = req.mutable_describe();
  task->set_task_id(next_task_++);
  task->set_variant(item.variant->name);
  task->set_dtype(DTypeOf(item.problem));
  *task->mutable_shape() = ShapeOf(item.problem);  // the build that runs it is the one profiled
  AddUserCode(*item.variant, task->mutable_user_code());
  // A lookup and cudaFuncGetName (as RunManager::Describe allows).
  Worker::CallResult call = gpu.Call(req, std::chrono::seconds(30));
  if (!call.ok || !call.reply.has_describe() || !call.reply.describe().ok()) {
    const std::string why = !call.ok                     ? "worker: " + call.failure
                            : !call.reply.has_describe() ? "the worker does not know describe"
                                                         : call.reply.describe().error();
    return m->set_counters_note("not profiled: the worker cannot name its kernel: " + why);
  }
  const worker::v1::DescribeResult& d = call.reply.describe();
  std::vector<CounterSelection> counters;
  if (Status st = SelectCounters(plan.profile_metrics, d.arch(), &counters); !st.ok())
    return m->set_counters_note("not profiled: " + st.message());
  ProfileTarget target{item.variant->name, DTypeOf(item.problem),    ShapeOf(item.problem),
                       gpu.index(),        d.kernel_symbol(),        d.binary(),
                       d.arch(),           options_.warmup_launches, seed};
  if (task->user_code_size() > 0) target.user_code = task->user_code(0).SerializeAsString();
  target.library_algo = d.library_algo();
  ProfileResult r = ProfileLaunch(target, counters);
  if (IsHostRefusal(r.refusal)) {
    RunRefusal(run_id, r.message);
    return m->set_counters_note("not profiled: " + r.message + timing_goes_on);
  }
  if (r.refusal != ProfileRefusal::kNone) return m->set_counters_note("not profiled: " + r.message);
  for (auto& c : r.counters) *m->add_counters() = std::move(c);
  // A library's counters are those of the first kernel it launched in the profiled call: name it.
  if (d.library()) m->set_counters_note("the library's first kernel of the call: " + r.kernel_name);
}

void Profiler::SetPlanLimits(int max_items, int64_t max_stored_bytes) {
  std::lock_guard lock(mu_);
  options_.max_items = max_items;
  options_.max_stored_bytes = max_stored_bytes;
}

}  // namespace ablation::core
