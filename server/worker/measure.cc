#include "server/worker/measure.h"

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <deque>
#include <random>
#include <vector>

#include "common/time.h"
#include "kernels/cublas/cublas_lt.h"
#include "server/protocol/sampling.h"
#include "server/protocol/window_stats.h"
#include "server/worker/bandwidth.h"
#include "server/worker/diagnostics.h"
#include "server/worker/guard.h"
#include "server/worker/l2_rotation.h"
#include "server/worker/launch.h"
#include "server/worker/library_choice.h"
#include "server/worker/own_contract.h"
#include "server/worker/resident.h"
#include "server/worker/sample_batch.h"
#include "server/worker/sample_plan.h"
#include "server/worker/variant_lookup.h"
#include "server/worker/window_samples.h"
#include "server/worker/window_setup.h"

namespace ablation::worker {

namespace k = ::ablation::kernels;
namespace apb = ::ablation::v1;
namespace wpb = ::ablation::worker::v1;

namespace {

// One window's measurement in named steps: the members resolved, their inputs and L2 sets
// prepared, the guard opened, the warm-up, the batched sampling loop, the members' results. Each
// step returns "" or why the window failed; the cost is filled as far as it got.
class WindowSampler {
 public:
  WindowSampler(Device& d, Resident& res, const k::Registry& registry, const wpb::MeasureTask& task,
                wpb::MeasureResult* result)
      : d_(d),
        res_(res),
        registry_(registry),
        task_(task),
        result_(result),
        cost_(result->mutable_cost()) {}

  std::string Run() {
    if (task_.variants_size() == 0) return "the window names no variant";
    std::string err = ResolveMembers();
    if (!err.empty()) return err;
    err = PrepareInputs();
    if (err.empty()) err = OpenGuard();
    if (!err.empty()) {
      cost_->set_setup_seconds(common::SecondsSince(setup0_));
      return err;
    }
    setup_s_ = common::SecondsSince(setup0_);
    if (!(err = WarmUpAndCheck()).empty()) return err;
    err = Sample();
    cost_->set_sampling_seconds(common::SecondsSince(loop0_));
    if (!err.empty()) return err;
    if (!(err = FinishOwnChecks()).empty()) return err;
    if (samples_.kept_cycles() == 0) {
      return "no cycle of the window was kept: every batch's gate timed out (" +
             std::to_string(dropped_batches_) + " batches dropped) before the wall-clock cap";
    }
    if (!(err = CollectMembers()).empty()) return err;
    Finish();
    return "";
  }

 private:
  struct InFlight {
    int slot = 0;
    int64_t first = 0;
    int count = 0;
  };

  // Each variant resolved; one that cannot run the problem is left out with its reason.
  std::string ResolveMembers() {
    std::string refusals;
    for (int i = 0; i < task_.variants_size(); ++i) {
      wpb::MemberResult* m = result_->add_members();
      m->set_variant(task_.variants(i));
      Ready r;
      const std::string why =
          Resolve(registry_, task_.variants(i), task_.dtype(), task_.shape(), &r);
      m->set_ok(why.empty());
      if (!why.empty()) {
        m->set_error(why);
        refusals += (refusals.empty() ? "" : "; ") + why;
        continue;
      }
      members_.push_back({r, {}});
      member_of_.push_back(i);
    }
    if (members_.empty()) return refusals;
    const apb::TimingOptions& t = task_.timing();
    o_ = protocol::ResolveOptions(
        t.min_samples(), t.min_seconds(), t.max_seconds(), t.target_noise(), t.warmup_count(),
        t.warmup_seconds(), t.hot_l2(), t.max_samples(), t.flush_l2(), t.low_clock_fraction());
    n_ = int(members_.size());
    samples_ = WindowSamples(n_);
    return "";
  }

  // The inputs (B^T too where any variant wants [n][k]) and each variant's L2 rotation copies,
  // resident from the last task of this problem and seed or made now; C poisoned either way.
  std::string PrepareInputs() {
    if (members_[0].r.variant->own_contract) return PrepareOwnContract();
    const bool need_nk = std::any_of(members_.begin(), members_.end(), [](const WindowMember& m) {
      return m.r.variant->b_layout == k::BLayout::kNK;
    });
    std::string err = res_.inputs.Prepare(
        {.problem = members_[0].r.problem, .seed = task_.seed(), .need_nk = need_nk}, &in_);
    bool reused = in_.reused;
    method_ = RequestedL2Method(o_.hot_l2, o_.flush_l2);
    for (size_t i = 0; i < members_.size() && err.empty(); ++i) {
      WindowMember& m = members_[i];
      if (!(err = ChooseLibraryAlgo(i)).empty()) break;
      L2Plan plan;
      bool sets_reused = false;
      err = MakeInputSets(res_.inputs, m.r, ArgsFor(d_, m.r, in_, in_.c), o_, &plan, &m.sets,
                          &sets_reused);
      reused = reused && sets_reused;
      if (!plan.note.empty())
        Log("%s %s: %s", m.r.variant->name.c_str(), task_.dtype().c_str(), plan.note.c_str());
      // One variant whose copies do not fit makes the whole window flush: its samples must find
      // the L2 as cold as the others'.
      if (plan.method == L2Method::kFlush) method_ = L2Method::kFlush;
      most_sets_ = std::max<int64_t>(most_sets_, int64_t(m.sets.size()));
    }
    if (err.empty()) cost_->set_inputs_reused(reused);
    return err;
  }

  // A window of kernels of their own contract: each launches on tensors of its own (made at its
  // first launch), so none of the GEMM's inputs are made; with no copies to rotate through, the
  // L2 is flushed before every sample unless the task asks for it hot.
  std::string PrepareOwnContract() {
    for (const WindowMember& m : members_)
      if (!m.r.variant->own_contract)
        return "a window may not mix kernels of their own contract with GEMMs: " +
               m.r.variant->name + " is a GEMM, " + members_[0].r.variant->name + " is not";
    for (WindowMember& m : members_) {
      k::GemmArgs args;
      args.problem = m.r.problem;
      args.stream = d_.stream;
      m.sets = {args};
    }
    method_ = o_.hot_l2 ? L2Method::kHot : L2Method::kFlush;
    cost_->set_inputs_reused(false);
    own_checked_.assign(members_.size(), 0);
    own_enqueued_.assign(members_.size(), false);
    own_rng_.seed(task_.seed() ^ 0x4F574E434845434Bull);
    return "";
  }

  // A _best library variant launches the algorithm chosen for this problem: the daemon's stored
  // choice, or the fastest candidate timed now (the reply carries the timing to store).
  std::string ChooseLibraryAlgo(size_t i) {
    WindowMember& m = members_[i];
    if (!k::LaunchesChosenAlgo(*m.r.variant)) return "";
    wpb::LibraryTuning tuning;
    std::string err = EnsureChosenAlgo(d_, res_, &task_.library_choices(),
                                       ArgsFor(d_, m.r, in_, in_.c), &m.r, &tuning);
    if (!err.empty()) {
      result_->set_failed_variant(m.r.variant->name);
      return err;
    }
    if (tuning.candidates_size() > 0)
      *result_->mutable_members(member_of_[i])->mutable_tuning() = std::move(tuning);
    return "";
  }

  // A window with a user variant is guarded (guard.h): fresh inputs before every batch, one
  // random timed launch of each user variant per batch checked against cuBLAS.
  std::string OpenGuard() {
    ResetPersistingL2(d_);
    return guard_.Open(d_, registry_, members_, in_, task_.seed(), task_.task_id());
  }

  std::string WarmUpAndCheck() {
    std::string err;
    const auto warm0 = std::chrono::steady_clock::now();
    if (task_.warmup()) {
      double cycle_ms = 0;
      err = WarmUp(d_, members_, o_, &cycle_ms);
      sample_ms_estimate_ = cycle_ms / n_;
    }
    if (err.empty() && guard_.active()) {
      int failed = -1;
      err = guard_.PreCheck(d_, members_, &failed);
      if (failed >= 0) result_->set_failed_variant(members_[size_t(failed)].r.variant->name);
    }
    cost_->set_warmup_seconds(common::SecondsSince(warm0));
    return err;
  }

  // The window is a span of wall time of the sampling loop: that is what the power controller
  // averages over, and for a kernel of microseconds the probes and events around each sample
  // are most of it. Estimates are per sample of that wall time.
  double PerSampleMs() const {
    return collected_ > 0 ? collected_wall_ms_ / double(collected_) : sample_ms_estimate_;
  }

  // Cycles still to enqueue, with the samples in flight counted at kAheadMargin times the wall
  // time per sample so far, so that the window does not overshoot by a batch (a burst window
  // must end before the power cap engages).
  int64_t CyclesLeft() const {
    const double est = PerSampleMs();
    const int64_t pending = next_ - collected_;
    const double pending_ms = est > 0 ? kAheadMargin * double(pending) * est : 0;
    const int64_t enqueued_cycles = next_ / n_ - samples_.dropped_cycles();
    return ::ablation::worker::CyclesLeft(spec_, std::max<int64_t>(enqueued_cycles, 0),
                                          collected_wall_ms_ + pending_ms, est * n_);
  }

  // Each cycle in an order of its own (CycleOrder): the task's seed and id make it, so that every
  // window of a run has its own orders and a stored window can be told again.
  int VariantOfSample(int64_t g) {
    if (n_ == 1) return 0;
    if (g / n_ != order_cycle_) {
      order_cycle_ = g / n_;
      order_ =
          CycleOrder(n_, task_.seed() ^ (task_.task_id() * 0x9E3779B97F4A7C15ull), order_cycle_);
    }
    return order_[size_t(g % n_)];
  }

  // The next batch of `count` samples behind its slot's gate.
  std::string Enqueue(int count) {
    int failed = -1;
    std::vector<int>& who = slot_members_[size_t(next_slot_)];
    who.resize(size_t(count));
    for (int s = 0; s < count; ++s) who[size_t(s)] = VariantOfSample(next_ + s);
    AfterSample after;
    if (guard_.active()) {
      if (std::string e =
              guard_.BeforeBatch(res_.inputs, members_, batches_, next_slot_, next_, who);
          !e.empty())
        return e;
      after = [this, slot = next_slot_](int s) {
        return guard_.AfterSample(d_, members_, slot, s);
      };
    }
    // Kernels of their own contract: fresh values in their inputs before every batch, from the
    // task's seed and the batch's number (ahead of the gate, outside every timed interval).
    for (const WindowMember& m : members_) {
      if (!m.r.variant->own_contract || !m.r.variant->refresh_own) continue;
      const uint64_t seed = task_.seed() ^ (uint64_t(batches_ + 1) * 0xD1B54A32D192ED03ull);
      if (std::string e = m.r.variant->refresh_own(seed, d_.stream); !e.empty())
        return m.r.variant->name + ": " + e;
    }
    ++batches_;
    std::string e = EnqueueBatch(d_, members_, next_, who, method_ == L2Method::kFlush, next_slot_,
                                 &failed, after);
    if (!e.empty()) {
      if (failed >= 0) {
        result_->set_failed_variant(members_[size_t(failed)].r.variant->name);
        e = members_[size_t(failed)].r.variant->name + ": " + e;
      }
      return e;
    }
    if (std::string e = EnqueueOwnChecks(who); !e.empty()) return e;
    in_flight_.push_back({next_slot_, next_, count});
    next_ += count;
    next_slot_ = (next_slot_ + 1) % kBatchSlots;
    return "";
  }

  // Kernels of their own contract: one timed launch each per window is checked against the
  // reference on the same inputs (own_contract.h), the last launch of a batch drawn at random
  // (one in eight from the second on), its check enqueued behind that batch; a member never
  // drawn has its window's last launch checked once the samples are in. The comparisons are made
  // after the samples (FinishOwnChecks), so that no host work stalls the GPU mid-window.
  std::string EnqueueOwnChecks(const std::vector<int>& who) {
    for (size_t m = 0; m < own_enqueued_.size(); ++m) {
      const k::Variant& v = *members_[m].r.variant;
      if (!v.own_contract || !v.enqueue_own_check || own_enqueued_[m] ||
          std::find(who.begin(), who.end(), int(m)) == who.end())
        continue;
      if (batches_ < 2 || own_rng_() % 8 != 0) continue;
      if (std::string e = v.enqueue_own_check(d_.stream); !e.empty()) return v.name + ": " + e;
      own_enqueued_[m] = true;
    }
    return "";
  }

  // After the samples: every member's check (enqueued now where none was drawn) judged. "" when
  // each kept launch agreed with the reference.
  std::string FinishOwnChecks() {
    for (size_t m = 0; m < own_enqueued_.size(); ++m) {
      const k::Variant& v = *members_[m].r.variant;
      if (!v.own_contract || !v.enqueue_own_check || !v.judge_own_check) continue;
      std::string e;
      if (!own_enqueued_[m]) e = v.enqueue_own_check(d_.stream);
      k::OwnCheck check;
      if (e.empty()) e = v.judge_own_check(&check);
      if (e.empty() && !check.passed)
        e = "a timed launch disagreed with its reference: " + OwnCheckText(check);
      if (!e.empty()) {
        result_->set_failed_variant(v.name);
        return v.name + ": " + e;
      }
      own_checked_[m] += check.elements > 0 ? 1 : 0;
    }
    return "";
  }

  // The next batches behind their own gates while one runs, so that the GPU goes from one batch
  // to the next without waiting for the host; a cycle once begun is always completed.
  std::string EnqueueAhead() {
    while (in_flight_.size() < size_t(kBatchSlots) && !capped_) {
      const int64_t left = next_ % n_ != 0 ? 1 : CyclesLeft();
      if (left <= 0) break;
      const int count = WindowBatchSize(n_, next_, left, PerSampleMs());
      if (count <= 0) break;
      if (std::string err = Enqueue(count); !err.empty()) return err;
      // Without a warm-up's estimate the first batch goes alone: its samples are the estimate.
      if (PerSampleMs() <= 0) break;
    }
    return "";
  }

  // The oldest batch in flight, collected: its samples, unless its gate timed out before the host
  // enqueued it (then host time may sit between some sample's events, and its cycles are dropped
  // from every variant alike), and the guard's verdict on it.
  std::string CollectOldest() {
    const InFlight done = in_flight_.front();
    in_flight_.pop_front();
    bool timed_out = false;
    if (std::string err = CollectBatch(d_, done.slot, done.count, &batch_, &timed_out);
        !err.empty())
      return err;
    if (timed_out) {
      ++dropped_batches_;
      Log("a batch of %d samples of a window of %d variants was dropped: its gate timed out "
          "before it was enqueued",
          done.count, n_);
    }
    if (guard_.active()) {
      int failed = -1;
      if (std::string err = guard_.Judge(members_, done.slot, &failed); !err.empty()) {
        if (failed >= 0) result_->set_failed_variant(members_[size_t(failed)].r.variant->name);
        return err;
      }
    }
    const std::vector<int>& who = slot_members_[size_t(done.slot)];
    for (int s = 0; s < done.count; ++s)
      samples_.Add(done.first + s, who[size_t(s)], double(batch_[size_t(s)].ms),
                   batch_[size_t(s)].sm_mhz, timed_out);
    collected_ += done.count;
    collected_wall_ms_ = 1e3 * common::SecondsSince(loop0_);
    if (collected_wall_ms_ >= 1e3 * wall_cap_s_ && next_ % n_ == 0) capped_ = true;
    return "";
  }

  std::string Sample() {
    spec_ = WindowSpec{.members = n_,
                       .window_ms = 1e3 * std::max(task_.window_seconds(), 0.0),
                       .min_cycles = std::max<int64_t>(task_.min_cycles(), 1),
                       .max_cycles = std::max<int64_t>(task_.max_cycles(), 0)};
    // Far beyond what the window needs: a host that stalls, or min_cycles far longer than the
    // span.
    wall_cap_s_ = 3 * std::max(task_.window_seconds(), 0.0) + 1;
    slot_members_.assign(kBatchSlots, {});
    loop0_ = std::chrono::steady_clock::now();
    std::string err;
    for (;;) {
      if (!(err = EnqueueAhead()).empty() || in_flight_.empty()) break;
      if (!(err = CollectOldest()).empty()) break;
    }
    // What is still in flight after an error is waited for, so that the slots are free again.
    while (!in_flight_.empty()) {
      bool ignored = false;
      const InFlight rest = in_flight_.front();
      in_flight_.pop_front();
      if (std::string e = CollectBatch(d_, rest.slot, rest.count, &batch_, &ignored); !e.empty())
        break;
    }
    return err;
  }

  // After the launches: a launcher may set the kernel's dynamic shared memory limit on first use,
  // and the occupancy calculator honours that attribute.
  std::string CollectMembers() {
    const auto occupancy0 = std::chrono::steady_clock::now();
    for (size_t i = 0; i < members_.size(); ++i) {
      wpb::MemberResult* m = result_->mutable_members(member_of_[i]);
      m->set_checked_launches(guard_.checked(int(i)) +
                              (i < own_checked_.size() ? own_checked_[i] : 0));
      std::vector<double> ms, mhz;
      samples_.Member(int(i), &ms, &mhz);
      m->mutable_sample_ms()->Add(ms.begin(), ms.end());
      protocol::SetSampleClocks(m, mhz);
      protocol::SetStatsFromSamples(
          m, {.max_sm_mhz = d_.max_sm_khz / 1e3, .low_clock_fraction = o_.low_clock_fraction});
      DescribeLibraryAlgo(members_[i].r, ArgsFor(d_, members_[i].r, in_, in_.c),
                          m->mutable_library());
      std::string err = CachedOccupancy(d_, res_, members_[i].r, m->mutable_occupancy());
      if (!err.empty()) {
        if (d_.fatal) return err;
        Log("occupancy of %s not reported: %s", members_[i].r.variant->name.c_str(), err.c_str());
        m->clear_occupancy();
      }
    }
    setup_s_ += common::SecondsSince(occupancy0);
    return "";
  }

  void Finish() {
    cost_->set_setup_seconds(setup_s_);
    result_->set_l2(ToL2Mode(method_));
    protocol::SetWindowTotals(result_);
    // Every cycle enqueued ran, those of dropped batches too: the launches the energy went into.
    result_->set_launched_cycles(next_ / n_);
    Log("window of %d variants %s %s: %d cycles, %.1f ms of GPU time, %.0f MHz, L2 %s (up to "
        "%" PRId64 " input sets%s), %s, %d batches dropped%s; setup %.1f ms, sampling %.1f ms",
        n_, task_.dtype().c_str(), ShapeText(task_.shape()).c_str(), result_->cycles(),
        1e3 * result_->gpu_seconds(), result_->sm_mhz(), L2MethodText(method_), most_sets_,
        cost_->inputs_reused() ? ", resident" : "", task_.warmup() ? "warmed up" : "no warm-up",
        dropped_batches_, capped_ ? ", wall-clock cap reached" : "", 1e3 * setup_s_,
        1e3 * cost_->sampling_seconds());
  }

  Device& d_;
  Resident& res_;
  const k::Registry& registry_;
  const wpb::MeasureTask& task_;
  wpb::MeasureResult* result_;
  apb::Cost* cost_;
  const std::chrono::steady_clock::time_point setup0_ = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point loop0_{};
  double setup_s_ = 0;

  std::vector<WindowMember> members_;
  std::vector<int> member_of_;  // the task's index of each member
  int n_ = 0;
  protocol::SamplingOptions o_;
  ProblemInputs in_;
  L2Method method_ = L2Method::kRotate;
  int64_t most_sets_ = 1;
  WindowGuard guard_;

  WindowSpec spec_{};
  double wall_cap_s_ = 0;
  double sample_ms_estimate_ = 0;
  WindowSamples samples_{1};
  std::deque<InFlight> in_flight_;
  int64_t next_ = 0, collected_ = 0;
  int next_slot_ = 0, dropped_batches_ = 0;
  int64_t batches_ = 0;
  std::vector<BatchSample> batch_;
  double collected_wall_ms_ = 0;  // the loop's wall time at the last collection
  bool capped_ = false;
  int64_t order_cycle_ = -1;
  std::vector<int> order_;
  std::vector<std::vector<int>> slot_members_;
  // A window of kernels of their own contract (sized by PrepareOwnContract, empty otherwise): per
  // member the checks passed and whether this window's is enqueued, and the draw of the batch
  // checked.
  std::vector<int> own_checked_;
  std::vector<bool> own_enqueued_;
  std::mt19937_64 own_rng_;
};

}  // namespace

std::string RunMeasure(Device& d, Resident& res, const k::Registry& registry,
                       const wpb::MeasureTask& task, wpb::MeasureResult* result) {
  // Device memory's bandwidth once per clock policy: the first window under a policy measures it
  // (about 50 ms, before the window, outside every timed interval), not the worker's start.
  if (!task.clock_policy().empty() && task.clock_policy() != d.bandwidth_policy) {
    if (std::string why = MeasureCopyBandwidth(size_t(512) << 20, d.stream, &d.bandwidth);
        !why.empty())
      Log("device memory bandwidth not measured under %s: %s", task.clock_policy().c_str(),
          why.c_str());
    d.bandwidth_policy = task.clock_policy();
  }
  result->set_measured_bandwidth(d.bandwidth);
  return WindowSampler(d, res, registry, task, result).Run();
}

}  // namespace ablation::worker
