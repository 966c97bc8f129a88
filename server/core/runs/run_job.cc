#include "server/core/runs/run_job.h"

#include <spdlog/spdlog.h>

#include "common/time.h"
#include "server/core/base/status.h"
#include "server/core/history/series.h"
#include "server/core/plan/verification_policy.h"
#include "server/core/runs/item_profiler.h"
#include "server/core/runs/measurement_step.h"
#include "server/core/runs/round_order.h"
#include "server/core/runs/run_cost.h"

namespace ablation::core {
namespace {

using Clock = std::chrono::steady_clock;

class JobExecution {
 public:
  JobExecution(GpuWorker& gpu, Job& job, const ExecutionContext& context)
      : gpu_(gpu), job_(job), ctx_(context) {}

  void Run() {
    if (Status st = gpu_.Ensure(); !st.ok()) return job_.recorder.Failed(st);
    v1::DeviceIdentity identity = gpu_.identity();
    // NVML knows the driver's own version (580.x); the worker only the CUDA API level it offers.
    if (ctx_.nvml) {
      identity.set_driver_version(ctx_.nvml->DriverVersion());
      const Nvml::Provenance board = ctx_.nvml->DeviceProvenance(identity.uuid());
      identity.set_vbios_version(board.vbios_version);
      if (board.power_limit_w) identity.set_power_limit_w(*board.power_limit_w);
      identity.set_ecc_mode(board.ecc_mode);
    }
    identity.set_hardware_fingerprint(
        HardwareFingerprint(identity, ClockPolicyText(job_.plan.clocks)));
    job_.recorder.Started(identity, job_.plan, Schedule());
    spdlog::info("run {} started on GPU {}: {} items", job_.id(), gpu_.index(),
                 job_.plan.items.size());
    if (job_.kind == v1::RUN_KIND_VERIFY) return RunVerify();
    RunAblation(identity);
  }

 private:
  // One window of the schedule: the items it interleaves, in cycle order, and its round.
  struct ScheduledWindow {
    int round = 0;
    std::vector<int> items;
  };

  // Every window once per round (WindowGroups: one per problem when paired, one per item
  // otherwise), each round visiting them in its own shuffled order and interleaving each
  // window's items in a shuffled order too; one round keeps the plan's order.
  std::vector<ScheduledWindow> Windows() const {
    const RunPlan& plan = job_.plan;
    const std::vector<std::vector<int>> groups = WindowGroups(plan);
    const int rounds = std::max(1, plan.rounds);
    std::vector<ScheduledWindow> out;
    for (int r = 0; r < rounds; ++r) {
      std::vector<size_t> order(groups.size());
      for (size_t g = 0; g < order.size(); ++g) order[g] = g;
      if (rounds > 1) order = RoundOrder(groups.size(), plan.order_seed, r);
      for (size_t g : order) {
        ScheduledWindow w{r, groups[g]};
        if (rounds > 1 && w.items.size() > 1) {
          // Another permutation per window: the seed moved by the window's index.
          const auto perm =
              RoundOrder(w.items.size(), plan.order_seed + 0x9E3779B97F4A7C15ull * (g + 1), r);
          std::vector<int> shuffled;
          for (size_t i : perm) shuffled.push_back(groups[g][i]);
          w.items = std::move(shuffled);
        }
        out.push_back(std::move(w));
      }
    }
    return out;
  }

  // The (item, round) order the rows will come in: verify runs one round in plan order,
  // ablation runs window by window.
  std::vector<std::pair<int, int>> Schedule() const {
    std::vector<std::pair<int, int>> schedule;
    if (job_.kind == v1::RUN_KIND_VERIFY) {
      for (size_t i = 0; i < job_.plan.items.size(); ++i) schedule.emplace_back(int(i), 0);
      return schedule;
    }
    for (const ScheduledWindow& w : Windows())
      for (int i : w.items) schedule.emplace_back(i, w.round);
    return schedule;
  }

  bool Stopped() const { return job_.cancel || (ctx_.stopping && ctx_.stopping()); }
  void BetweenItems() const {
    if (ctx_.between_items) ctx_.between_items();
  }

  StepContext Step(const v1::DeviceIdentity& device, double expected_sm_mhz) {
    StepContext step;
    step.gpu = &gpu_;
    step.plan = &job_.plan;
    step.run_id = job_.id();
    step.nvml = ctx_.nvml;
    step.nvml_unavailable = ctx_.nvml_unavailable;
    step.uuid = device.uuid();
    step.expected_sm_mhz = expected_sm_mhz;
    step.hang_margin = ctx_.hang_margin;
    step.next_task = ctx_.next_task;
    step.registry = ctx_.registry;
    step.on_verified = [this](const v1::VerifyResult& v) { job_.recorder.Verified(v); };
    step.stopping = [this] { return Stopped(); };
    step.sm_count = device.sm_count();
    step.compute_capability = device.compute_capability();
    return step;
  }

  void RunVerify() {
    MeasurementStep step(Step(v1::DeviceIdentity(), 0));
    int passed = 0, done = 0;
    for (size_t i = 0; i < job_.plan.items.size() && !Stopped(); ++i) {
      BetweenItems();
      const PlannedMeasurement& item = job_.plan.items[i];
      const ReferenceChoice reference =
          ChooseReference(*item.variant, item.problem, job_.plan.reference,
                          job_.plan.reference_variant, ctx_.registry);
      v1::VerifyResult result;
      if (reference.reference == v1::REFERENCE_UNSPECIFIED) {
        result.set_variant(item.variant->name);
        result.set_error("not checked: " + reference.not_checked);
      } else {
        result = step.Verify(item, reference, InputSeed(job_.id(), item.problem));
      }
      passed += result.passed();
      ++done;
      job_.recorder.Verified(std::move(result));
    }
    step.ReleaseInputs();  // the worker's inputs of this run's seeds: nothing later reuses them
    if (Stopped())
      return job_.recorder.VerifyFinished(v1::RUN_STATE_CANCELLED,
                                          {Code::kUnavailable, "verification cancelled"});
    const v1::RunState state = passed == done ? v1::RUN_STATE_SUCCEEDED
                               : passed > 0   ? v1::RUN_STATE_PARTIAL
                                              : v1::RUN_STATE_FAILED;
    job_.recorder.VerifyFinished(state, Status::Ok());
  }

  // A window that failed as a whole (the worker died or hung, a launch failed) says nothing of
  // the variants that did not fail: the failed variant, where the worker named it, keeps the
  // failure and the rest are measured again without it; where no variant was named, each is
  // measured alone, which finds the one that fails. The rows measured again say why.
  std::vector<v1::Measurement> MeasureIsolating(MeasurementStep& step,
                                                const MeasurementStep::WindowSlot& slot,
                                                int64_t* next_window, bool* cancelled) {
    MeasurementStep::WindowOutcome out = step.MeasureWindow(slot);
    *cancelled = out.cancelled;
    if (out.cancelled || out.failure.empty() || slot.items.size() < 2) return out.rows;
    spdlog::warn("run {}: window {} of {} variants failed ({}); measuring them apart", job_.id(),
                 slot.window, slot.items.size(), out.failure);
    const std::string why = "measured apart: its window with " +
                            std::to_string(slot.items.size() - 1) + " other variants failed (" +
                            out.failure + ")";
    std::vector<std::vector<size_t>> parts;  // indices into slot.items
    std::vector<size_t> rest;
    for (size_t i = 0; i < slot.items.size(); ++i) {
      if (!out.failed_variant.empty() && out.rows[i].variant() == out.failed_variant) continue;
      if (out.failed_variant.empty()) {
        parts.push_back({i});
      } else {
        rest.push_back(i);
      }
    }
    if (!rest.empty()) parts.push_back(rest);
    for (const std::vector<size_t>& part : parts) {
      if (Stopped()) break;
      MeasurementStep::WindowSlot again{slot.round, ++*next_window, {}, {}};
      for (size_t i : part) {
        again.items.push_back(slot.items[i]);
        // Verified already where asked: an output found wrong was never in the window.
        again.verify.push_back(false);
      }
      std::vector<v1::Measurement> rows = MeasureIsolating(step, again, next_window, cancelled);
      if (*cancelled) return out.rows;
      for (size_t k = 0; k < part.size(); ++k) {
        v1::Measurement& row = rows[k];
        // What the verification found stays with the row measured again.
        row.set_verification_outcome(out.rows[part[k]].verification_outcome());
        row.set_verification(out.rows[part[k]].verification());
        row.mutable_cost()->set_verify_seconds(out.rows[part[k]].cost().verify_seconds());
        row.set_regime_note(row.regime_note().empty() ? why : row.regime_note() + "; " + why);
        out.rows[part[k]] = std::move(row);
      }
    }
    return out.rows;
  }

  void RunAblation(const v1::DeviceIdentity& device) {
    const std::string& uuid = device.uuid();
    // The lock lives in this scope: every way out (end, cancel, error, exception, shutdown on
    // SIGTERM) resets it; a daemon killed outright leaves it in the journal for the next start.
    std::unique_ptr<ScopedClockLock> clock_lock;
    const ClockPolicy& clocks = job_.plan.clocks;
    if (clocks.lock) {
      Status st = ScopedClockLock::Acquire(*ctx_.nvml, *ctx_.clock_journal, uuid, clocks.sm_spec,
                                           clocks.mem_spec, &clock_lock);
      if (!st.ok()) {
        spdlog::error("run {}: cannot lock clocks: {}", job_.id(), st.message());
        return job_.recorder.Aborted(st);
      }
      spdlog::info("run {}: clocks locked ({})", job_.id(), clock_lock->PolicyString());
    }
    // The _best library baselines' algorithms, chosen once per device, problem and cuBLAS.
    StoredLibraryChoices library(job_.recorder.store(), uuid, device.cublas_version(), job_.id());
    StepContext context = Step(device, ExpectedSmMhz(uuid, clock_lock.get()));
    if (job_.recorder.store()) context.library = &library;
    MeasurementStep step(std::move(context));
    int ok = 0, failed = 0, sequence = 0;
    int64_t next_window = 0;
    RunCost cost;
    const auto started = Clock::now();
    std::vector<char> visited(job_.plan.items.size(), 0), wrong(job_.plan.items.size(), 0);
    int inputs_round = 0;  // the round the worker's resident inputs were made for
    for (const ScheduledWindow& w : Windows()) {
      if (Stopped()) break;
      // timing.fresh_inputs: every round on inputs of its own, made anew by its first window.
      if (job_.plan.timing.fresh_inputs() && w.round != inputs_round) {
        step.ReleaseInputs();
        inputs_round = w.round;
      }
      MeasurementStep::WindowSlot slot{w.round, ++next_window, {}, {}};
      // An item whose output was wrong is not timed again in later rounds: its row says why.
      for (int index : w.items) {
        if (wrong[size_t(index)]) continue;
        slot.items.push_back(index);
        // A user variant (code the service did not write) is always verified before it is
        // timed; a built-in one where the run asks (run --verify).
        const bool user = job_.plan.items[size_t(index)].variant->code != nullptr;
        slot.verify.push_back((job_.plan.verify || user) && !visited[size_t(index)]);
        visited[size_t(index)] = 1;
      }
      if (slot.items.empty()) continue;
      BetweenItems();
      bool cancelled = false;
      std::vector<v1::Measurement> rows = MeasureIsolating(step, slot, &next_window, &cancelled);
      if (cancelled) break;
      for (size_t k = 0; k < rows.size(); ++k) {
        const int index = slot.items[k];
        v1::Measurement& m = rows[k];
        m.set_sequence(sequence++);
        cost.Add(m);
        // run --profile: one launch's counters after the timing, never under it, in a process of
        // its own that needs the memory the worker's resident inputs hold.
        if (job_.plan.profile && w.round == 0 && m.status() == v1::MEASUREMENT_STATUS_OK) {
          const auto profile0 = Clock::now();
          step.ReleaseInputs();
          ProfileAfterTiming(ctx_.profiler, gpu_, job_.plan, index, w.round, job_.id(), &m);
          cost.AddProfiling(common::SecondsSince(profile0));
        }
        if (m.verification_outcome() == v1::VERIFICATION_OUTCOME_FAILED) wrong[size_t(index)] = 1;
        if (m.status() == v1::MEASUREMENT_STATUS_OK) {
          ++ok;
        } else {
          ++failed;
          spdlog::warn("run {}: {} {}x{}x{} failed: {}", job_.id(), m.variant(), m.shape().m(),
                       m.shape().n(), m.shape().k(), m.error());
        }
        const auto store0 = Clock::now();
        job_.recorder.Measured(std::move(m));
        cost.AddStoring(common::SecondsSince(store0));
      }
    }
    // The worker's resident inputs belong to this run (its seeds are the run's): the device's
    // memory is free again between runs.
    step.ReleaseInputs();
    if (cost.measurements() > 0) {
      spdlog::info("run {} cost: {}", job_.id(), cost.Summary(common::SecondsSince(started)));
    }
    std::string error;
    const bool shutting_down = ctx_.stopping && ctx_.stopping();
    if (Stopped()) error = shutting_down ? "daemon shut down" : "cancelled";
    if (clock_lock) {
      if (Status st = clock_lock->Release(); !st.ok()) {
        const std::string unlock = "clocks could not be reset: " + st.message();
        spdlog::error("run {}: {}", job_.id(), unlock);
        error += (error.empty() ? "" : "; ") + unlock;
      }
    }
    const v1::RunState state = Stopped()     ? v1::RUN_STATE_CANCELLED
                               : failed == 0 ? v1::RUN_STATE_SUCCEEDED
                               : ok > 0      ? v1::RUN_STATE_PARTIAL
                                             : v1::RUN_STATE_FAILED;
    spdlog::info("run {}: {} ok, {} failed", job_.id(), ok, failed);
    job_.recorder.Finished(state, ok, failed, error);
  }

  // A sample is throttled when the SM clock falls well below what it should run at: the locked
  // clock, or else the GPU's maximum.
  double ExpectedSmMhz(const std::string& uuid, const ScopedClockLock* lock) const {
    if (lock && lock->target().sm_mhz > 0) return lock->target().sm_mhz;
    ClockPair max;
    if (ctx_.nvml && ctx_.nvml->MaxClocks(uuid, &max).ok()) return max.sm_mhz;
    return 0;
  }

  GpuWorker& gpu_;
  Job& job_;
  const ExecutionContext& ctx_;
};

}  // namespace

void ExecuteJob(GpuWorker& gpu, Job& job, const ExecutionContext& context) {
  try {
    // The job's own catalog where it has one: its items and reference point into it.
    ExecutionContext ctx = context;
    if (job.catalog) ctx.registry = job.catalog.get();
    JobExecution(gpu, job, ctx).Run();
  } catch (const std::exception& e) {
    // A store failure mid-run: the run cannot be recorded further; say so where we still can
    // (the details, which may name the database and its SQL, only in the log).
    spdlog::error("run {} aborted: {}", job.id(), e.what());
    job.recorder.Failed(StatusFromException(e));
  }
}

}  // namespace ablation::core
