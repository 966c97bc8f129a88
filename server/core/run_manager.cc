#include "server/core/run_manager.h"

#include <chrono>
#include <cmath>

#include <google/protobuf/util/json_util.h>
#include <spdlog/spdlog.h>

#include "ablation/version.h"
#include "server/core/convert.h"
#include "server/core/telemetry.h"
#include "server/worker/sampling.h"

namespace ablation::core {

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

namespace {

std::string ToJson(const google::protobuf::Message& m) {
  std::string out;
  google::protobuf::util::JsonPrintOptions opts;
  opts.preserve_proto_field_names = true;
  (void)google::protobuf::util::MessageToJsonString(m, &out, opts);
  return out;
}

// The CPU reference is exact and cheap up to about 2^27 multiply-adds; above, cuBLAS.
std::string DefaultAgainst(const kernels::Problem& p) {
  return double(p.m) * double(p.n) * double(p.k) <= double(1 << 27) ? "cpu" : "cublas";
}

void SetShape(const kernels::Problem& p, v1::Shape* shape) {
  shape->set_m(p.m);
  shape->set_n(p.n);
  shape->set_k(p.k);
}

}  // namespace

RunManager::RunManager(RunManagerOptions options, db::Store* store,
                       const kernels::Registry* registry)
    : options_(std::move(options)), store_(store), registry_(registry) {}

RunManager::~RunManager() { Shutdown(); }

v1::DeviceIdentity RunManager::Identity(const worker::v1::Hello& hello) { return hello.device(); }

void RunManager::Start() {
  auto gpu0 = std::make_unique<Gpu>();
  gpu0->index = 0;
  gpu0->worker = std::make_unique<WorkerProcess>(options_.worker_path, 0);
  gpu0->worker_status = gpu0->worker->Start();
  gpu0->hello = gpu0->worker->hello();
  int count = 1;
  if (gpu0->worker_status.ok()) {
    const auto& hello = gpu0->hello;
    if (!hello.device_present()) {
      gpu0->worker_status = FailedPrecondition(hello.no_device_reason());
      spdlog::warn("no GPU: {}; the daemon serves queries, runs are refused",
                   hello.no_device_reason());
    } else {
      count = std::max(1, hello.device_count());
    }
  } else {
    spdlog::error("GPU 0 worker: {}", gpu0->worker_status.message());
  }
  {
    std::lock_guard lock(gpus_mu_);
    gpus_.push_back(std::move(gpu0));
    for (int i = 1; i < count; ++i) {
      auto gpu = std::make_unique<Gpu>();
      gpu->index = i;
      gpu->worker = std::make_unique<WorkerProcess>(options_.worker_path, i);
      gpu->worker_status = gpu->worker->Start();
      gpu->hello = gpu->worker->hello();
      if (gpu->worker_status.ok() && !gpu->hello.device_present())
        gpu->worker_status = FailedPrecondition(gpu->hello.no_device_reason());
      gpus_.push_back(std::move(gpu));
    }
    for (auto& gpu : gpus_) {
      Gpu* g = gpu.get();
      g->thread = std::thread([this, g] { GpuLoop(g); });
    }
  }
}

void RunManager::Shutdown() {
  if (stopping_.exchange(true)) return;
  std::vector<Gpu*> gpus;
  {
    std::lock_guard lock(gpus_mu_);
    for (auto& g : gpus_) gpus.push_back(g.get());
  }
  for (Gpu* gpu : gpus) {
    std::deque<std::shared_ptr<Job>> dropped;
    std::deque<DescribeJob> dropped_describes;
    {
      std::lock_guard lock(gpu->mu);
      dropped.swap(gpu->queue);
      dropped_describes.swap(gpu->describes);
      if (gpu->running) gpu->running->cancel = true;
    }
    for (auto& d : dropped_describes)
      d.done(Status(Code::kUnavailable, "the daemon is shutting down"), {});
    gpu->cv.notify_all();
    for (auto& job : dropped) {
      const std::string reason = "the daemon shut down before the run started";
      store_->FinishRun(job->id, std::string(db::kRunCancelled), reason, NowMs());
      v1::RunEvent ev;
      ev.mutable_failed()->set_run_id(job->id);
      ev.mutable_failed()->set_reason(reason);
      Emit(job.get(), ev);
      if (job->verify_done) job->verify_done(Status(Code::kUnavailable, reason), {});
    }
  }
  for (Gpu* gpu : gpus) {
    if (gpu->thread.joinable()) gpu->thread.join();
    std::deque<DescribeJob> late;  // asked for while the thread was stopping
    {
      std::lock_guard lock(gpu->mu);
      late.swap(gpu->describes);
    }
    for (auto& d : late) d.done(Status(Code::kUnavailable, "the daemon is shutting down"), {});
    if (gpu->worker) gpu->worker->Stop();
  }
}

RunManager::Gpu* RunManager::FindGpu(int index) {
  std::lock_guard lock(gpus_mu_);
  for (auto& g : gpus_)
    if (g->index == index) return g.get();
  return nullptr;
}

Status RunManager::LookUpGpu(int index, const std::string& no_gpu_prefix, Gpu** out) {
  *out = FindGpu(index);
  if (*out) return Status::Ok();
  // No such GPU: when GPU 0's worker could not start, that is the reason, not the index.
  Gpu* gpu0 = FindGpu(0);
  std::string why;
  if (gpu0) {
    std::lock_guard lock(gpu0->mu);
    if (!gpu0->worker_status.ok()) why = gpu0->worker_status.message();
  }
  if (!why.empty()) return FailedPrecondition(no_gpu_prefix + why);
  return InvalidArgument("device: there is no GPU " + std::to_string(index));
}

DeviceLimits RunManager::Limits(int index) {
  DeviceLimits limits;
  Gpu* gpu = FindGpu(index);
  if (!gpu) return limits;
  std::lock_guard lock(gpu->mu);
  if (gpu->worker_status.ok() && gpu->hello.device_present()) {
    limits.known = true;
    limits.memory_bytes = gpu->hello.device().memory_bytes();
    limits.l2_bytes = gpu->hello.device().l2_bytes();
  }
  return limits;
}

DeviceSnapshot RunManager::Device(int index) {
  DeviceSnapshot snap;
  {
    std::lock_guard lock(gpus_mu_);
    snap.device_count = 0;
    for (auto& g : gpus_)
      if (g->worker_status.ok()) ++snap.device_count;
  }
  Gpu* gpu = FindGpu(index);
  if (!gpu) {
    snap.unavailable_reason = "no GPU with index " + std::to_string(index);
    return snap;
  }
  std::lock_guard lock(gpu->mu);
  snap.queued = int(gpu->queue.size());
  snap.running_run_id = gpu->running ? gpu->running->id : 0;
  if (!gpu->worker_status.ok()) {
    snap.unavailable_reason = gpu->worker_status.message();
    return snap;
  }
  const auto& hello = gpu->hello;
  snap.available = hello.device_present();
  snap.unavailable_reason = hello.no_device_reason();
  snap.identity = hello.device();
  if (!snap.available) {
    snap.live = UnavailableTelemetry("no GPU");
    return snap;
  }
  std::string uuid = snap.identity.uuid();
  snap.live = LiveTelemetry(options_.nvml, uuid, options_.nvml_unavailable);
  if (options_.nvml) {
    snap.identity.set_driver_version(options_.nvml->DriverVersion());
    SupportedClocks clocks;
    if (options_.nvml->GetSupportedClocks(uuid, &clocks).ok() && !clocks.mem_mhz.empty()) {
      snap.supported_mem_clocks_mhz = clocks.mem_mhz;
      snap.supported_sm_clocks_mhz = clocks.sm_mhz_by_mem[clocks.mem_mhz.front()];
    }
  }
  return snap;
}

Status RunManager::Admit(const RunPlan& plan, const std::string& kind,
                         const std::string& request_json, const std::string& peer,
                         const std::vector<std::string>& tags, std::shared_ptr<Job> job,
                         int* position) {
  if (stopping_) return {Code::kUnavailable, "the daemon is shutting down"};
  Gpu* gpu = nullptr;
  if (Status st = LookUpGpu(plan.device, "no GPU to run on: ", &gpu); !st.ok()) return st;
  {
    std::lock_guard lock(gpu->mu);
    if (!gpu->worker_status.ok())
      return FailedPrecondition("GPU " + std::to_string(gpu->index) +
                                " cannot run: " + gpu->worker_status.message());
    if (int(gpu->queue.size()) >= options_.max_queued_per_gpu)
      return FailedPrecondition("GPU " + std::to_string(gpu->index) + " already has " +
                                std::to_string(gpu->queue.size()) +
                                " runs queued; try again later");
  }
  if (plan.clock_policy == "lock") {
    // Resolve base/max/MHz against this GPU now, so a bad value is refused before anything is
    // written; the lock itself is taken when the run starts.
    if (!options_.nvml)
      return FailedPrecondition("clocks.mode=lock needs NVML: " + options_.nvml_unavailable);
    if (!options_.clock_journal)
      return FailedPrecondition("clocks.mode=lock needs a clock journal; none is configured");
    std::string uuid;
    {
      std::lock_guard lock(gpu->mu);
      uuid = gpu->hello.device().uuid();
    }
    ClockTarget target;
    Status st = ResolveClockSpecs(*options_.nvml, uuid, plan.lock_sm, plan.lock_mem, &target);
    if (!st.ok()) return st;
    job->plan.clock_policy = ClockPolicyString(&target);
  }

  db::RunRecord run;
  run.kind = kind;
  run.state = std::string(db::kRunQueued);
  run.device.index = plan.device;
  run.daemon_version = kDaemonVersion;
  run.git_revision = kGitRevision;
  run.request_json = request_json;
  run.requested_by = peer;
  run.tags = tags;
  run.created_at_ms = NowMs();
  run.planned = int(plan.items.size());
  run.clock_policy = job->plan.clock_policy;
  job->id = store_->CreateRun(run);
  job->kind = kind;

  std::lock_guard lock(gpu->mu);
  gpu->queue.push_back(job);
  *position = int(gpu->queue.size()) - 1;
  v1::RunEvent ev;
  ev.mutable_queued()->set_run_id(job->id);
  ev.mutable_queued()->set_position(*position);
  Emit(job.get(), ev);
  gpu->cv.notify_all();
  return Status::Ok();
}

Status RunManager::SubmitRun(const v1::RunRequest& request, const std::string& peer,
                             std::shared_ptr<RunObserver> observer, int64_t* run_id) {
  auto job = std::make_shared<Job>();
  Status st;
  if (!request.preset().empty()) {
    static const PresetCatalog kNoPresets;
    st = PlanPresetRun(request, options_.presets ? *options_.presets : kNoPresets, *registry_,
                       Limits(request.device()), options_.timing, &job->plan);
  } else {
    st = PlanRun(request, *registry_, Limits(request.device()), options_.timing, &job->plan);
  }
  if (!st.ok()) return st;
  job->observer = std::move(observer);
  std::string who =
      request.requested_by().empty() ? peer : request.requested_by() + " (" + peer + ")";
  std::vector<std::string> tags(request.tags().begin(), request.tags().end());
  int position = 0;
  st = Admit(job->plan, std::string(db::kKindAblation), ToJson(request), who, tags, job, &position);
  if (st.ok()) *run_id = job->id;
  return st;
}

Status RunManager::SubmitVerify(const v1::VerifyRequest& request, const std::string& peer,
                                VerifyDone done) {
  auto job = std::make_shared<Job>();
  Status st = PlanVerify(request, *registry_, Limits(request.device()), &job->plan);
  if (!st.ok()) return st;
  job->verify_done = std::move(done);
  std::vector<std::string> tags(request.tags().begin(), request.tags().end());
  int position = 0;
  return Admit(job->plan, std::string(db::kKindVerify), ToJson(request), peer, tags, job,
               &position);
}

Status RunManager::Cancel(int64_t run_id, std::string* state) {
  std::vector<Gpu*> gpus;
  {
    std::lock_guard lock(gpus_mu_);
    for (auto& g : gpus_) gpus.push_back(g.get());
  }
  for (Gpu* gpu : gpus) {
    std::shared_ptr<Job> removed;
    {
      std::lock_guard lock(gpu->mu);
      if (gpu->running && gpu->running->id == run_id) {
        gpu->running->cancel = true;
        *state = "cancelling";
        return Status::Ok();
      }
      for (auto it = gpu->queue.begin(); it != gpu->queue.end(); ++it) {
        if ((*it)->id == run_id) {
          removed = *it;
          gpu->queue.erase(it);
          break;
        }
      }
    }
    if (removed) {
      store_->FinishRun(run_id, std::string(db::kRunCancelled), "cancelled before it started",
                        NowMs());
      v1::RunEvent ev;
      ev.mutable_finished()->set_run_id(run_id);
      ev.mutable_finished()->set_state(std::string(db::kRunCancelled));
      Emit(removed.get(), ev);
      if (removed->verify_done)
        removed->verify_done(Status(Code::kUnavailable, "run cancelled before it started"), {});
      BroadcastPositions(gpu);
      *state = std::string(db::kRunCancelled);
      return Status::Ok();
    }
  }
  auto run = store_->GetRun(run_id);
  if (!run) return NotFound("run " + std::to_string(run_id) + " does not exist");
  *state = run->state;  // already finished: nothing to cancel
  return Status::Ok();
}

void RunManager::Emit(Job* job, const v1::RunEvent& event) {
  if (job->observer) job->observer->OnEvent(event);
}

void RunManager::BroadcastPositions(Gpu* gpu) {
  std::lock_guard lock(gpu->mu);
  int pos = 0;
  for (auto& job : gpu->queue) {
    v1::RunEvent ev;
    ev.mutable_queued()->set_run_id(job->id);
    ev.mutable_queued()->set_position(pos++);
    Emit(job.get(), ev);
  }
}

Status RunManager::Describe(int device,
                            const std::vector<std::pair<std::string, std::string>>& items,
                            DescribeDone done) {
  if (stopping_) return {Code::kUnavailable, "the daemon is shutting down"};
  Gpu* gpu = nullptr;
  if (Status st = LookUpGpu(device, "no GPU worker to ask: ", &gpu); !st.ok()) return st;
  {
    std::lock_guard lock(gpu->mu);
    if (!gpu->worker_status.ok())
      return FailedPrecondition("GPU " + std::to_string(gpu->index) +
                                " has no usable worker: " + gpu->worker_status.message());
    gpu->describes.push_back({items, std::move(done)});
  }
  gpu->cv.notify_all();
  return Status::Ok();
}

void RunManager::ServeDescribes(Gpu* gpu) {
  std::deque<DescribeJob> jobs;
  {
    std::lock_guard lock(gpu->mu);
    jobs.swap(gpu->describes);
  }
  for (auto& job : jobs) {
    std::string err = EnsureWorker(gpu);
    if (!err.empty()) {
      job.done(FailedPrecondition("GPU " + std::to_string(gpu->index) + ": " + err), {});
      continue;
    }
    std::vector<worker::v1::DescribeResult> results;
    for (const auto& [variant, dtype] : job.items) {
      worker::v1::WorkerRequest req;
      auto* task = req.mutable_describe();
      task->set_task_id(next_task_++);
      task->set_variant(variant);
      task->set_dtype(dtype);
      // A lookup and cudaFuncGetName: seconds would mean the worker is stuck.
      auto call = gpu->worker->Call(req, std::chrono::seconds(30));
      worker::v1::DescribeResult r;
      if (!call.ok) {
        r.set_error("worker: " + call.failure);
      } else if (!call.reply.has_describe()) {
        r.set_error("the worker does not know the describe request (an older worker?)");
      } else {
        r = call.reply.describe();
      }
      results.push_back(std::move(r));
    }
    job.done(Status::Ok(), results);
  }
}

void RunManager::GpuLoop(Gpu* gpu) {
  while (true) {
    std::shared_ptr<Job> job;
    {
      std::unique_lock lock(gpu->mu);
      gpu->cv.wait(lock,
                   [&] { return stopping_ || !gpu->queue.empty() || !gpu->describes.empty(); });
      if (stopping_) return;
      if (gpu->queue.empty()) {
        lock.unlock();
        ServeDescribes(gpu);
        continue;
      }
      job = gpu->queue.front();
      gpu->queue.pop_front();
      gpu->running = job;
    }
    BroadcastPositions(gpu);
    try {
      Execute(gpu, job.get());
    } catch (const std::exception& e) {
      // A store failure mid-run: the run cannot be recorded further; say so where we still can.
      spdlog::error("run {} aborted: {}", job->id, e.what());
      try {
        store_->FinishRun(job->id, std::string(db::kRunFailed), e.what(), NowMs());
      } catch (...) {
      }
      v1::RunEvent ev;
      ev.mutable_failed()->set_run_id(job->id);
      ev.mutable_failed()->set_reason(std::string("internal error: ") + e.what());
      Emit(job.get(), ev);
      if (job->verify_done) job->verify_done(Status(Code::kInternal, e.what()), {});
    }
    std::lock_guard lock(gpu->mu);
    gpu->running.reset();
  }
}

std::string RunManager::EnsureWorker(Gpu* gpu) {
  if (gpu->worker->running()) return "";
  spdlog::warn("GPU {}: starting a new worker", gpu->index);
  Status st = gpu->worker->Start();
  std::lock_guard lock(gpu->mu);
  gpu->worker_status = st;
  gpu->hello = gpu->worker->hello();
  if (!st.ok()) return "cannot restart the worker: " + st.message();
  if (!gpu->hello.device_present())
    return "the restarted worker sees no GPU: " + gpu->hello.no_device_reason();
  return "";
}

void RunManager::Execute(Gpu* gpu, Job* job) {
  std::string err = EnsureWorker(gpu);
  if (!err.empty()) {
    store_->FinishRun(job->id, std::string(db::kRunFailed), err, NowMs());
    v1::RunEvent ev;
    ev.mutable_failed()->set_run_id(job->id);
    ev.mutable_failed()->set_reason(err);
    Emit(job, ev);
    if (job->verify_done) job->verify_done(FailedPrecondition(err), {});
    return;
  }
  v1::DeviceIdentity identity;
  {
    std::lock_guard lock(gpu->mu);
    identity = gpu->hello.device();
  }
  // NVML knows the driver's own version (580.x); the worker only the CUDA API level it offers.
  if (options_.nvml) identity.set_driver_version(options_.nvml->DriverVersion());
  identity.set_index(gpu->index);
  store_->MarkRunStarted(job->id, ToRecord(identity), NowMs());
  spdlog::info("run {} ({}) started on GPU {}: {} items", job->id, job->kind, gpu->index,
               job->plan.items.size());
  v1::RunEvent started;
  started.mutable_started()->set_run_id(job->id);
  *started.mutable_started()->mutable_device() = identity;
  started.mutable_started()->set_total(int(job->plan.items.size()));
  for (const auto& item : job->plan.items) {
    v1::PlannedMeasurement* planned = started.mutable_started()->add_plan();
    planned->set_variant(item.variant->name);
    planned->set_dtype(std::string(kernels::ToString(item.problem.dtype)));
    SetShape(item.problem, planned->mutable_shape());
  }
  Emit(job, started);

  if (job->kind == db::kKindVerify) {
    v1::VerifyResponse response;
    ExecuteVerify(gpu, job, &response);
    response.set_run_id(job->id);
    int passed = 0;
    for (const auto& r : response.results()) passed += r.passed();
    std::string_view state = job->cancel                         ? db::kRunCancelled
                             : passed == response.results_size() ? db::kRunSucceeded
                             : passed > 0                        ? db::kRunPartial
                                                                 : db::kRunFailed;
    store_->FinishRun(job->id, state, "", NowMs());
    if (job->verify_done) {
      if (job->cancel)
        job->verify_done(Status(Code::kUnavailable, "verification cancelled"), response);
      else
        job->verify_done(Status::Ok(), response);
    }
    return;
  }

  // The lock lives in this scope: every way out (end, cancel, error, exception, shutdown on
  // SIGTERM) resets it; a daemon killed outright leaves it in the journal for the next start.
  std::unique_ptr<ScopedClockLock> clock_lock;
  if (job->plan.clock_policy != "observe") {
    Status st = ScopedClockLock::Acquire(*options_.nvml, *options_.clock_journal, identity.uuid(),
                                         job->plan.lock_sm, job->plan.lock_mem, &clock_lock);
    if (!st.ok()) {
      spdlog::error("run {}: cannot lock clocks: {}", job->id, st.message());
      store_->FinishRun(job->id, std::string(db::kRunFailed), st.message(), NowMs());
      v1::RunEvent ev;
      ev.mutable_failed()->set_run_id(job->id);
      ev.mutable_failed()->set_reason(st.message());
      ev.mutable_failed()->set_code(st.code() == Code::kFailedPrecondition ? "FAILED_PRECONDITION"
                                                                           : "INTERNAL");
      Emit(job, ev);
      return;
    }
    spdlog::info("run {}: clocks locked ({})", job->id, clock_lock->PolicyString());
  }
  int ok = 0, failed = 0;
  ExecuteAblation(gpu, job, &ok, &failed, identity.uuid(),
                  clock_lock ? clock_lock->target().sm_mhz : 0);
  std::string unlock_error;
  if (clock_lock) {
    Status st = clock_lock->Release();
    if (!st.ok()) {
      unlock_error = "clocks could not be reset: " + st.message();
      spdlog::error("run {}: {}", job->id, unlock_error);
    }
  }
  std::string state(job->cancel   ? db::kRunCancelled
                    : failed == 0 ? db::kRunSucceeded
                    : ok > 0      ? db::kRunPartial
                                  : db::kRunFailed);
  std::string error = job->cancel ? (stopping_ ? "daemon shut down" : "cancelled") : "";
  if (!unlock_error.empty()) error += (error.empty() ? "" : "; ") + unlock_error;
  store_->FinishRun(job->id, state, error, NowMs());
  spdlog::info("run {} {}: {} ok, {} failed", job->id, state, ok, failed);
  v1::RunEvent fin;
  fin.mutable_finished()->set_run_id(job->id);
  fin.mutable_finished()->set_state(state);
  fin.mutable_finished()->set_ok(ok);
  fin.mutable_finished()->set_failed(failed);
  Emit(job, fin);
}

std::string RunManager::CallVerify(Gpu* gpu, const PlannedMeasurement& item,
                                   const std::string& against, uint64_t seed,
                                   v1::VerifyResult* result) {
  worker::v1::WorkerRequest req;
  auto* task = req.mutable_verify();
  task->set_task_id(next_task_++);
  task->set_variant(item.variant->name);
  task->set_dtype(std::string(kernels::ToString(item.problem.dtype)));
  SetShape(item.problem, task->mutable_shape());
  task->set_against(against);
  task->set_seed(seed);
  auto call = gpu->worker->Call(req, options_.hang_margin + std::chrono::seconds(600));
  if (!call.ok) return call.failure;
  if (!call.reply.has_verify()) return "worker sent an unexpected reply";
  *result = call.reply.verify();
  return "";
}

void RunManager::ExecuteVerify(Gpu* gpu, Job* job, v1::VerifyResponse* response) {
  for (const auto& item : job->plan.items) {
    if (job->cancel || stopping_) break;
    ServeDescribes(gpu);
    v1::VerifyResult result;
    std::string against =
        job->plan.against.empty() ? DefaultAgainst(item.problem) : job->plan.against;
    std::string err = EnsureWorker(gpu);
    if (err.empty()) err = CallVerify(gpu, item, against, uint64_t(job->id) * 7919u + 17u, &result);
    if (!err.empty()) {
      result.set_passed(false);
      result.set_error(err);
    }
    result.set_variant(item.variant->name);
    result.set_dtype(std::string(kernels::ToString(item.problem.dtype)));
    SetShape(item.problem, result.mutable_shape());
    result.set_against(against);
    auto rec = ToRecord(result);
    rec.run_id = job->id;
    rec.created_at_ms = NowMs();
    store_->InsertVerification(rec);
    *response->add_results() = result;
  }
}

void RunManager::ExecuteAblation(Gpu* gpu, Job* job, int* ok, int* failed, const std::string& uuid,
                                 int locked_sm_mhz) {
  const RunPlan& plan = job->plan;
  // A sample is throttled when the SM clock falls well below what it should run at: the locked
  // clock, or else the GPU's maximum.
  double expected_sm_mhz = locked_sm_mhz;
  if (!expected_sm_mhz && options_.nvml) {
    ClockPair max;
    if (options_.nvml->MaxClocks(uuid, &max).ok()) expected_sm_mhz = max.sm_mhz;
  }
  TelemetrySampler sampler;
  int sequence = 0;
  for (const auto& item : plan.items) {
    if (job->cancel || stopping_) break;
    ServeDescribes(gpu);
    db::MeasurementRecord rec;
    rec.run_id = job->id;
    rec.sequence = sequence++;
    rec.variant = item.variant->name;
    rec.dtype = std::string(kernels::ToString(item.problem.dtype));
    rec.m = item.problem.m;
    rec.n = item.problem.n;
    rec.k = item.problem.k;
    rec.l2 = plan.timing.hot_l2() ? "hot" : "cold";
    rec.clock_policy = plan.clock_policy;

    // What one launch does: 2MNK flops for a GEMM; bytes and fragment loads for a micro-benchmark.
    const kernels::WorkModel work = item.variant->Work(item.problem);
    rec.telemetry = UnavailableTelemetry("nothing was timed");
    std::string err = EnsureWorker(gpu);
    if (err.empty() && plan.verify && work.flops == 0) {
      // A micro-benchmark (smem2reg) writes a checksum, not a product: there is nothing to check.
      rec.verification = "not checked: " + item.variant->family + " computes no product";
    } else if (err.empty() && plan.verify) {
      std::string against = DefaultAgainst(item.problem);
      if (against == "cublas" && item.variant->family == "cublas") against = "cpu";
      bool too_big_for_cpu =
          against == "cpu" && double(rec.m) * double(rec.n) * double(rec.k) > double(1ll << 31);
      if (too_big_for_cpu) {
        rec.verification = "not checked: the reference itself at this size";
      } else {
        v1::VerifyResult v;
        std::string verr =
            CallVerify(gpu, item, against, uint64_t(job->id) * 7919u + uint64_t(rec.sequence), &v);
        if (!verr.empty()) {
          err = "verification: " + verr;
        } else {
          auto vrec = ToRecord(v);
          vrec.run_id = job->id;
          vrec.created_at_ms = NowMs();
          store_->InsertVerification(vrec);
          if (v.passed()) {
            rec.verification = "passed";
          } else {
            char buf[256];
            std::snprintf(buf, sizeof buf,
                          "failed against %s: rel frobenius %.3g, max abs %.3g, %lld mismatches, "
                          "%lld NaN, %lld unwritten%s%s",
                          against.c_str(), v.rel_frobenius_error(), v.max_abs_error(),
                          (long long)v.mismatches(), (long long)v.nan_count(),
                          (long long)v.unwritten_count(), v.error().empty() ? "" : "; ",
                          v.error().c_str());
            rec.verification = buf;
            err = "verification " + rec.verification;
          }
        }
      }
    }
    if (err.empty()) {
      worker::v1::WorkerRequest req;
      auto* task = req.mutable_measure();
      task->set_task_id(next_task_++);
      task->set_variant(item.variant->name);
      task->set_dtype(rec.dtype);
      SetShape(item.problem, task->mutable_shape());
      *task->mutable_timing() = plan.timing;
      task->set_seed(uint64_t(job->id) * 7919u + uint64_t(rec.sequence));
      // Warm-up is capped at max_seconds and sampling at twice max_seconds of wall time
      // (flushes and synchronisation are not GPU time); beyond that and the margin it is hung.
      auto budget = std::chrono::seconds(
          int64_t(3 * plan.timing.max_seconds() + plan.timing.warmup_seconds()) + 1);
      sampler.Start(options_.nvml, uuid, expected_sm_mhz, options_.nvml_unavailable);
      auto call = gpu->worker->Call(req, budget + options_.hang_margin);
      rec.telemetry = sampler.Stop();
      if (!call.ok) {
        err = call.failure;
      } else if (!call.reply.has_measure()) {
        err = "worker sent an unexpected reply";
      } else if (!call.reply.measure().ok()) {
        err = call.reply.measure().error();
      } else {
        const auto& m = call.reply.measure();
        rec.sample_ms.assign(m.sample_ms().begin(), m.sample_ms().end());
        worker::SampleStats s = worker::ComputeStats(rec.sample_ms);
        rec.stats.median_ms = s.median_ms;
        rec.stats.mean_ms = s.mean_ms;
        rec.stats.stddev_ms = s.stddev_ms;
        rec.stats.min_ms = s.min_ms;
        rec.stats.max_ms = s.max_ms;
        rec.stats.q1_ms = s.q1_ms;
        rec.stats.q3_ms = s.q3_ms;
        rec.stats.samples = int(s.count);
        // Fewer than two samples say nothing about noise; stored as 0 with the count beside it.
        rec.stats.noise = std::isfinite(s.noise) ? s.noise : 0.0;
        rec.stats.total_seconds = s.sum_ms / 1e3;
        if (const double seconds = s.median_ms * 1e-3; seconds > 0) {
          rec.tflops = work.flops / seconds / 1e12;
          rec.bytes_per_second = work.bytes / seconds;
          rec.fragment_loads_per_second = work.fragment_loads / seconds;
        }
        if (!m.l2().empty()) rec.l2 = m.l2();
        const auto& o = m.occupancy();
        rec.occupancy.registers_per_thread = o.registers_per_thread();
        rec.occupancy.static_smem_bytes = o.static_smem_bytes();
        rec.occupancy.dynamic_smem_bytes = o.dynamic_smem_bytes();
        rec.occupancy.local_bytes_per_thread = o.local_bytes_per_thread();
        rec.occupancy.max_blocks_per_sm = o.max_blocks_per_sm();
        rec.occupancy.max_warps_per_sm = o.max_warps_per_sm();
        rec.occupancy.theoretical_occupancy = o.theoretical_occupancy();
        rec.occupancy.limiter = o.limiter();
        rec.occupancy.threads_per_block = o.threads_per_block();
        if (s.count == 0) err = "the worker returned no samples";
      }
    }
    if (!err.empty()) {
      rec.status = std::string(db::kMeasurementFailed);
      rec.error = err;
      ++*failed;
      spdlog::warn("run {}: {} {}x{}x{} failed: {}", job->id, rec.variant, rec.m, rec.n, rec.k,
                   err);
    } else {
      rec.status = std::string(db::kMeasurementOk);
      ++*ok;
    }
    rec.created_at_ms = NowMs();
    // Committed before the event goes out: what a client saw is on disk.
    rec.id = store_->InsertMeasurement(rec);
    v1::RunEvent ev;
    *ev.mutable_measurement() = ToProto(rec);
    ev.mutable_measurement()->clear_sample_ms();
    Emit(job, ev);
  }
}

}  // namespace ablation::core
