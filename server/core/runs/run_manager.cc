#include "server/core/runs/run_manager.h"

#include "server/core/userkernels/task_builds.h"

#include <random>

#include <google/protobuf/util/json_util.h>
#include <spdlog/spdlog.h>

#include "ablation/version.h"
#include "server/core/gpu/telemetry.h"
#include "server/core/userkernels/task_builds.h"
#include "server/core/workers/worker_process.h"

namespace ablation::core {
namespace {

std::string ToJson(const google::protobuf::Message& m) {
  std::string out;
  google::protobuf::util::JsonPrintOptions opts;
  opts.preserve_proto_field_names = true;
  (void)google::protobuf::util::MessageToJsonString(m, &out, opts);
  return out;
}

const Status kShuttingDown{Code::kUnavailable, "the daemon is shutting down"};

}  // namespace

RunManager::RunManager(RunManagerOptions options, db::Store* store,
                       const kernels::Registry* registry)
    : options_(std::move(options)), store_(store), registry_(registry) {
  execution_.nvml = options_.nvml;
  execution_.nvml_unavailable = options_.nvml_unavailable;
  execution_.clock_journal = options_.clock_journal;
  execution_.hang_margin = options_.hang_margin;
  execution_.next_task = &next_task_;
  execution_.registry = registry_;
  execution_.stopping = [this] { return stopping_.load(); };
  execution_.profiler = options_.profiler;
}

RunManager::~RunManager() { Shutdown(); }

std::shared_ptr<const kernels::Registry> RunManager::Catalog() const {
  if (options_.catalog) return options_.catalog();
  // The built-in registry outlives the manager: a snapshot that does not own it.
  return std::shared_ptr<const kernels::Registry>(std::shared_ptr<void>(), registry_);
}

std::unique_ptr<Worker> RunManager::MakeWorker(int index) {
  if (options_.worker_factory) return options_.worker_factory(index);
  return std::make_unique<WorkerProcess>(options_.worker_path, index);
}

void RunManager::Start() {
  auto gpu0 = std::make_unique<Gpu>(0, MakeWorker(0), options_.events);
  Status st = gpu0->worker.Start();
  int count = 1;
  if (st.ok()) {
    count = std::max(1, gpu0->worker.hello().device_count());
  } else {
    spdlog::warn("GPU 0: {}; the daemon serves queries, runs are refused", st.message());
  }
  std::lock_guard lock(gpus_mu_);
  gpus_.push_back(std::move(gpu0));
  for (int i = 1; i < count; ++i) {
    auto gpu = std::make_unique<Gpu>(i, MakeWorker(i), options_.events);
    if (Status s = gpu->worker.Start(); !s.ok()) spdlog::error("GPU {}: {}", i, s.message());
    gpus_.push_back(std::move(gpu));
  }
  for (auto& gpu : gpus_) {
    Gpu* g = gpu.get();
    g->thread = std::thread([this, g] { GpuLoop(g); });
  }
}

std::vector<RunManager::Gpu*> RunManager::Gpus() {
  std::lock_guard lock(gpus_mu_);
  std::vector<Gpu*> out;
  for (auto& g : gpus_) out.push_back(g.get());
  return out;
}

void RunManager::Shutdown() {
  if (stopping_.exchange(true)) return;
  for (Gpu* gpu : Gpus()) {
    std::deque<std::shared_ptr<Job>> dropped;
    std::deque<DescribeJob> describes;
    {
      std::lock_guard lock(gpu->mu);
      dropped.swap(gpu->queue);
      describes.swap(gpu->describes);
      if (gpu->running) gpu->running->cancel = true;
    }
    gpu->cv.notify_all();
    for (auto& d : describes) d.done(kShuttingDown, {});
    // Stored and told alike: cancelled, never run (the run itself did nothing wrong).
    for (auto& job : dropped)
      job->recorder.CancelledInQueue("the daemon shut down before the run started", kShuttingDown);
  }
  for (Gpu* gpu : Gpus()) {
    if (gpu->thread.joinable()) gpu->thread.join();
    std::deque<DescribeJob> late;  // asked for while the thread was stopping
    {
      std::lock_guard lock(gpu->mu);
      late.swap(gpu->describes);
    }
    for (auto& d : late) d.done(kShuttingDown, {});
    gpu->worker.Stop();
  }
}

Status RunManager::LookUpGpu(int index, const std::string& no_gpu_prefix, Gpu** out) {
  *out = nullptr;
  std::vector<Gpu*> gpus = Gpus();
  for (Gpu* g : gpus)
    if (g->worker.index() == index) *out = g;
  Status usable = *out ? (*out)->worker.usable() : Status::Ok();
  if (*out && usable.ok()) return usable;
  // No such GPU: when GPU 0's worker could not start, that is the reason, not the index.
  if (!*out && !gpus.empty()) usable = gpus.front()->worker.usable();
  if (!usable.ok()) return FailedPrecondition(no_gpu_prefix + usable.message());
  return InvalidArgument("device: there is no GPU " + std::to_string(index));
}

DeviceLimits RunManager::Limits(int index) {
  for (Gpu* g : Gpus())
    if (g->worker.index() == index) return g->worker.limits();
  return {};
}

DeviceSnapshot RunManager::Device(int index) {
  DeviceSnapshot snap;
  Gpu* gpu = nullptr;
  for (Gpu* g : Gpus()) {
    if (g->worker.usable().ok()) ++snap.device_count;
    if (g->worker.index() == index) gpu = g;
  }
  if (!gpu) {
    snap.unavailable_reason = "no GPU with index " + std::to_string(index);
    return snap;
  }
  {
    std::lock_guard lock(gpu->mu);
    snap.queued = int(gpu->queue.size());
    snap.running_run_id = gpu->running ? gpu->running->id() : 0;
  }
  snap.identity = gpu->worker.identity();
  if (Status usable = gpu->worker.usable(); !usable.ok()) {
    snap.unavailable_reason = usable.message();
    snap.live = UnavailableTelemetry("no GPU");
    return snap;
  }
  snap.available = true;
  const std::string uuid = snap.identity.uuid();
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

Status RunManager::Admit(std::shared_ptr<Job> job, const std::string& request_json,
                         const std::string& requested_by, const std::vector<std::string>& tags) {
  if (stopping_) return kShuttingDown;
  Gpu* gpu = nullptr;
  if (Status st = LookUpGpu(job->plan.device, "no GPU to run on: ", &gpu); !st.ok()) return st;
  {
    std::lock_guard lock(gpu->mu);
    if (int(gpu->queue.size()) + gpu->admitting >= options_.max_queued_per_gpu)
      return FailedPrecondition("GPU " + std::to_string(gpu->worker.index()) + " already has " +
                                std::to_string(gpu->queue.size() + gpu->admitting) +
                                " runs queued; try again later");
    ++gpu->admitting;  // the place is ours until the push below (or a refusal gives it back)
  }
  struct Place {
    Gpu* gpu;
    bool held = true;
    ~Place() {
      if (!held) return;
      std::lock_guard lock(gpu->mu);
      --gpu->admitting;
    }
  } place{gpu};
  ClockPolicy& clocks = job->plan.clocks;
  if (clocks.lock) {
    // Resolved against this GPU now, so a bad value is refused before anything is written; the
    // lock itself is taken when the run starts.
    if (!options_.nvml)
      return FailedPrecondition("clocks.mode=lock needs NVML: " + options_.nvml_unavailable);
    if (!options_.clock_journal)
      return FailedPrecondition("clocks.mode=lock needs a clock journal; none is configured");
    Status st = ResolveClockSpecs(*options_.nvml, gpu->worker.identity().uuid(), clocks.sm_spec,
                                  clocks.mem_spec, &clocks.target);
    if (!st.ok()) return st;
  }

  v1::Run run;
  run.set_kind(job->kind);
  run.set_state(v1::RUN_STATE_QUEUED);
  run.mutable_device()->set_index(job->plan.device);
  run.set_daemon_version(kDaemonVersion);
  run.set_git_revision(kGitRevision);
  run.set_kernel_revision(kKernelRevision);
  run.set_host_name(options_.host_name);
  run.set_node_labels(options_.node_labels);
  run.set_request_json(request_json);
  run.set_requested_by(requested_by);
  for (const auto& tag : tags) run.add_tags(tag);
  run.set_created_at_ms(NowMs());
  if (job->plan.order_seed == 0) job->plan.order_seed = std::random_device{}() | 1;
  const int rounds = job->kind == v1::RUN_KIND_VERIFY ? 1 : job->plan.rounds;
  run.set_planned(int(job->plan.items.size()) * rounds);
  run.set_clock_policy(ClockPolicyText(clocks));
  run.set_rounds(rounds);
  run.set_order_seed(job->plan.order_seed);
  if (job->kind == v1::RUN_KIND_ABLATION) {
    run.set_regime(ToProto(job->plan.regime));
    run.set_paired(job->plan.paired);
  }
  job->recorder.Create(run);

  std::lock_guard lock(gpu->mu);
  --gpu->admitting;
  place.held = false;
  gpu->queue.push_back(job);
  job->recorder.Queued(int(gpu->queue.size()) - 1);
  gpu->cv.notify_all();
  return Status::Ok();
}

void RunManager::SetPlanLimits(int max_measurements_per_run, int max_samples_per_measurement,
                               int64_t max_stored_bytes_per_run) {
  std::lock_guard lock(plan_limits_mu_);
  options_.max_measurements_per_run = max_measurements_per_run;
  options_.max_samples_per_measurement = max_samples_per_measurement;
  options_.max_stored_bytes_per_run = max_stored_bytes_per_run;
}

void RunManager::SetTimingDefaults(const TimingDefaults& timing) {
  std::lock_guard lock(plan_limits_mu_);
  options_.timing = timing;
}

TimingDefaults RunManager::CurrentTiming() const {
  std::lock_guard lock(plan_limits_mu_);
  return options_.timing;
}

RunManager::PlanLimits RunManager::CurrentPlanLimits() const {
  std::lock_guard lock(plan_limits_mu_);
  return {options_.max_measurements_per_run, options_.max_samples_per_measurement,
          options_.max_stored_bytes_per_run};
}

Status RunManager::SubmitRun(const v1::RunRequest& request, const std::string& peer,
                             std::shared_ptr<RunObserver> observer, int64_t* run_id) {
  RunPlan plan;
  Status st;
  // Planned against this snapshot, which the job keeps: its items point into it.
  std::shared_ptr<const kernels::Registry> catalog = Catalog();
  const TimingDefaults timing = CurrentTiming();
  if (!request.preset().empty()) {
    static const Presets kNoPresets;
    const std::shared_ptr<const Presets> presets =
        options_.presets_now ? options_.presets_now() : options_.presets;
    st = PlanPresetRun(request, presets ? *presets : kNoPresets, *catalog, Limits(request.device()),
                       timing, &plan);
  } else {
    st = PlanRun(request, *catalog, Limits(request.device()), timing, &plan);
  }
  if (!st.ok()) return st;
  st = ApplyRounds(request.rounds(), request.preset().empty() ? 1 : kPresetDefaultRounds,
                   request.order_seed(), &plan);
  if (!st.ok()) return st;
  const PlanLimits limits = CurrentPlanLimits();
  const int64_t planned = int64_t(plan.items.size()) * plan.rounds;
  if (st = CheckPlanSize(planned, limits.measurements, "measurements (variants x shapes x rounds)");
      !st.ok())
    return st;
  // Samples are stored raw (about 32 bytes each): what one measurement may ask for is bounded,
  // so a run's storage and its GetRun reply are too.
  if (const int max = limits.samples; max > 0) {
    for (const auto& [value, field] : {std::pair{request.timing().min_samples(), "min_samples"},
                                       std::pair{request.timing().max_samples(), "max_samples"}})
      if (value > max)
        return InvalidArgument("timing." + std::string(field) + ": " + std::to_string(value) +
                               " samples per measurement; at most " + std::to_string(max) +
                               " (limits.max_samples_per_measurement; ~32 bytes each stored)");
    if (plan.timing.max_samples() > max) plan.timing.set_max_samples(max);
    if (plan.timing.min_samples() > max) plan.timing.set_min_samples(max);
  }
  // What the run could store, at its most samples: refused up front rather than found out on disk.
  if (st = CheckPlanBytes(planned, plan.timing.max_samples(), limits.bytes, "measurements");
      !st.ok())
    return st;
  if (st = ApplyProfileRequest(request, &plan); !st.ok()) return st;
  auto job = std::make_shared<Job>(v1::RUN_KIND_ABLATION, std::move(plan), store_,
                                   std::move(observer), options_.events);
  job->catalog = std::move(catalog);
  const std::string who =
      request.requested_by().empty() ? peer : request.requested_by() + " (" + peer + ")";
  st = Admit(job, ToJson(request), who, {request.tags().begin(), request.tags().end()});
  if (st.ok()) *run_id = job->id();
  return st;
}

Status RunManager::SubmitVerify(const v1::VerifyRequest& request, const std::string& peer,
                                std::shared_ptr<RunObserver> observer) {
  RunPlan plan;
  std::shared_ptr<const kernels::Registry> catalog = Catalog();
  Status st = PlanVerify(request, *catalog, Limits(request.device()), &plan);
  if (!st.ok()) return st;
  const PlanLimits limits = CurrentPlanLimits();
  st = CheckPlanSize(int64_t(plan.items.size()), limits.measurements,
                     "verifications (variants x shapes)");
  if (!st.ok()) return st;
  st = CheckPlanBytes(int64_t(plan.items.size()), 0, limits.bytes, "verifications");
  if (!st.ok()) return st;
  auto job = std::make_shared<Job>(v1::RUN_KIND_VERIFY, std::move(plan), store_,
                                   std::move(observer), options_.events);
  job->catalog = std::move(catalog);
  return Admit(job, ToJson(request), peer, {request.tags().begin(), request.tags().end()});
}

Status RunManager::Cancel(int64_t run_id, v1::CancelRunResponse* response, const std::string& who) {
  for (Gpu* gpu : Gpus()) {
    std::shared_ptr<Job> removed;
    bool cancelling = false;
    {
      std::lock_guard lock(gpu->mu);
      // A run that has ended but whose thread has not let go of it yet is finished: the store
      // says how.
      if (gpu->running && gpu->running->id() == run_id && !gpu->running->recorder.ended()) {
        gpu->running->cancel = true;
        response->set_state(v1::RUN_STATE_RUNNING);
        response->set_cancelling(true);
        cancelling = true;
      }
      for (auto it = gpu->queue.begin(); it != gpu->queue.end(); ++it) {
        if ((*it)->id() == run_id) {
          removed = *it;
          gpu->queue.erase(it);
          break;
        }
      }
    }
    if ((cancelling || removed) && !who.empty()) {
      try {
        store_->SetCancelledBy(run_id, who);
      } catch (const std::exception& e) {
        // The cancel itself stands; only its record is missing (the audit log still has it).
        spdlog::error("run {}: cannot record who cancelled it: {}", run_id, e.what());
      }
    }
    if (cancelling) return Status::Ok();
    if (removed) {
      removed->recorder.CancelledInQueue("cancelled before it started",
                                         {Code::kUnavailable, "run cancelled before it started"});
      BroadcastPositions(gpu);
      response->set_state(v1::RUN_STATE_CANCELLED);
      return Status::Ok();
    }
  }
  auto run = store_->GetRun(run_id);
  if (!run) return NotFound("run " + std::to_string(run_id) + " does not exist");
  response->set_state(run->state());  // already finished: nothing to cancel
  return Status::Ok();
}

Status RunManager::Watch(int64_t run_id, std::shared_ptr<RunObserver> observer) {
  for (Gpu* gpu : Gpus()) {
    std::lock_guard lock(gpu->mu);
    if (gpu->running && gpu->running->id() == run_id) {
      if (gpu->running->recorder.AddObserver(observer)) return Status::Ok();
      break;
    }
    int position = 0;
    for (auto& job : gpu->queue) {
      if (job->id() == run_id && job->recorder.AddObserver(observer)) {
        v1::RunEvent ev;
        ev.mutable_queued()->set_run_id(run_id);
        ev.mutable_queued()->set_position(position);
        observer->OnEvent(ev);
        return Status::Ok();
      }
      ++position;
    }
  }
  return NotFound("run " + std::to_string(run_id) + " is neither queued nor running");
}

void RunManager::BroadcastPositions(Gpu* gpu) {
  std::lock_guard lock(gpu->mu);
  int position = 0;
  for (auto& job : gpu->queue) job->recorder.Queued(position++);
}

kernels::Residency RunManager::DeviceResidency(int device) {
  Gpu* gpu = nullptr;
  if (!LookUpGpu(device, "", &gpu).ok()) return {};
  const v1::DeviceIdentity id = gpu->worker.identity();
  return {.sms = id.sm_count(), .pair_clusters = id.resident_pair_clusters()};
}

Status RunManager::Describe(int device, const std::vector<DescribeItem>& items, DescribeDone done) {
  if (stopping_) return kShuttingDown;
  Gpu* gpu = nullptr;
  if (Status st = LookUpGpu(device, "no GPU worker to ask: ", &gpu); !st.ok()) return st;
  {
    std::lock_guard lock(gpu->mu);
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
    if (Status st = gpu->worker.Ensure(); !st.ok()) {
      job.done(st, {});
      continue;
    }
    std::vector<worker::v1::DescribeResult> results;
    for (const DescribeItem& item : job.items) {
      worker::v1::WorkerRequest req;
      auto* task = req.mutable_describe();
      task->set_task_id(next_task_++);
      task->set_variant(item.variant);
      task->set_dtype(item.dtype);
      if (item.shape) *task->mutable_shape() = *item.shape;
      AddUserCode(Catalog().get(), item.variant, task->mutable_user_code());
      // A lookup and cudaFuncGetName: seconds would mean the worker is stuck.
      auto call = gpu->worker.Call(req, std::chrono::seconds(30));
      worker::v1::DescribeResult r;
      if (!call.ok)
        r.set_error("worker: " + call.failure);
      else if (!call.reply.has_describe())
        r.set_error("the worker does not know the describe request (an older worker?)");
      else
        r = call.reply.describe();
      results.push_back(std::move(r));
    }
    job.done(Status::Ok(), results);
  }
}

void RunManager::GpuLoop(Gpu* gpu) {
  ExecutionContext context = execution_;
  context.between_items = [this, gpu] { ServeDescribes(gpu); };
  while (true) {
    std::shared_ptr<Job> job;
    {
      std::unique_lock lock(gpu->mu);
      // Idle, the worker is looked at every second: one that died between runs is noticed,
      // recorded and restarted now, not charged to the next run's first measurement.
      const bool work = gpu->cv.wait_for(lock, std::chrono::seconds(1), [&] {
        return stopping_ || !gpu->queue.empty() || !gpu->describes.empty();
      });
      if (stopping_) return;
      if (!work) {
        lock.unlock();
        gpu->worker.Supervise();
        continue;
      }
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
    ExecuteJob(gpu->worker, *job, context);
    std::lock_guard lock(gpu->mu);
    gpu->running.reset();
  }
}

}  // namespace ablation::core
