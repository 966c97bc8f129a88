#include "server/worker/measure.h"

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <deque>
#include <limits>
#include <vector>

#include "kernels/cublas/cublas_lt.h"
#include "server/worker/diagnostics.h"
#include "server/worker/guard.h"
#include "server/worker/l2_rotation.h"
#include "server/worker/launch.h"
#include "server/worker/library_choice.h"
#include "server/worker/occupancy.h"
#include "server/worker/resident.h"
#include "server/worker/sample_batch.h"
#include "server/worker/sample_plan.h"
#include "server/worker/sampling.h"
#include "server/worker/timing_stats.h"
#include "server/worker/variant_lookup.h"

namespace ablation::worker {

namespace k = ::ablation::kernels;
namespace apb = ::ablation::v1;
namespace wpb = ::ablation::worker::v1;

namespace {

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

/// The warm-up: at least warmup_count cycles of the window's launches and warmup_seconds of wall
/// time (bounded by max_seconds: a kernel of seconds a launch), synchronised after each cycle,
/// so that module loading, the launch path's caches and cuBLAS's heuristics are behind the
/// samples. The clocks are the regime's business (the daemon settles or cools the GPU around the
/// windows). *cycle_ms: the wall time of the last cycle, the first batch's estimate (high for
/// small kernels, whose launches the synchronisation dominates, which only makes it short).
std::string WarmUp(Device& d, const std::vector<WindowMember>& members, const SamplingOptions& o,
                   double* cycle_ms) {
  const auto warm0 = std::chrono::steady_clock::now();
  for (int c = 0;; ++c) {
    if (c >= std::max(o.warmup_count, 1) &&
        (Seconds(warm0) >= o.warmup_seconds || Seconds(warm0) >= o.max_seconds))
      break;
    const auto t0 = std::chrono::steady_clock::now();
    for (const WindowMember& m : members) {
      if (std::string err = LaunchChecked(d, m.r, m.sets.front()); !err.empty())
        return m.r.variant->name + ": warm-up: " + err;
    }
    std::string err = d.Check(cudaStreamSynchronize(d.stream), "warm-up");
    if (!err.empty()) return err;
    *cycle_ms = 1e3 * Seconds(t0);
  }
  return "";
}

/// No line of the L2 stays pinned from before: the persisting-L2 limit is set to 0 and what
/// persists is reset, before every measurement. Not every device has a persisting L2 (the limit
/// needs compute capability 8.0): where the call is refused, the error is cleared and logged once.
void ResetPersistingL2(Device& d) {
  static bool logged = false;
  cudaError_t e = cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, 0);
  if (e == cudaSuccess) e = cudaCtxResetPersistingL2Cache();
  if (e != cudaSuccess) {
    cudaGetLastError();
    if (!logged) Log("the persisting-L2 limit could not be reset: %s", cudaGetErrorString(e));
    logged = true;
  }
  cudaStreamAttrValue none{};
  none.accessPolicyWindow.num_bytes = 0;
  if (cudaStreamSetAttribute(d.stream, cudaStreamAttributeAccessPolicyWindow, &none) != cudaSuccess)
    cudaGetLastError();
}

/// The occupancy of r's kernel, from the resident answer when this kernel has had one.
std::string Occupancy(Device& d, Resident& res, const Ready& r, apb::Occupancy* occ) {
  const void* fn = r.variant->kernel ? r.variant->kernel(r.problem.dtype) : nullptr;
  if (fn == nullptr) return "";  // a library entry (cuBLAS): nothing of ours to describe
  if (auto it = res.occupancy.find(fn); it != res.occupancy.end()) {
    *occ = it->second;
    return "";
  }
  std::string err = FillOccupancy(d, r, occ);
  if (err.empty()) res.occupancy[fn] = *occ;
  return err;
}

const char* MethodText(L2Method m) {
  switch (m) {
    case L2Method::kRotate:
      return "cold (rotated)";
    case L2Method::kFlush:
      return "cold (flushed)";
    case L2Method::kHot:
      return "hot";
  }
  return "?";
}

/// The samples of a window as they are collected: by global sample index g (cycle g / members,
/// member g % members). A cycle is kept only when all its samples came from batches whose gate
/// opened in time.
class WindowSamples {
 public:
  explicit WindowSamples(int members) : n_(members) {}

  /// Sample g, of variant `member`.
  void Add(int64_t g, int member, const BatchSample& s, bool dropped) {
    if (g >= int64_t(ms_.size())) {
      ms_.resize(size_t(g) + 1, 0);
      mhz_.resize(size_t(g) + 1, std::numeric_limits<double>::quiet_NaN());
      have_.resize(size_t(g) + 1, 0);
      member_.resize(size_t(g) + 1, -1);
    }
    ms_[size_t(g)] = double(s.ms);
    mhz_[size_t(g)] = s.sm_mhz;
    member_[size_t(g)] = member;
    have_[size_t(g)] = dropped ? 2 : 1;
    // Cycles complete in order: advance over every one now whole.
    while ((complete_ + 1) * n_ <= int64_t(have_.size())) {
      const int64_t c = complete_;
      bool whole = true, bad = false;
      for (int64_t i = c * n_; i < (c + 1) * n_; ++i) {
        whole = whole && have_[size_t(i)] != 0;
        bad = bad || have_[size_t(i)] == 2;
      }
      if (!whole) break;
      ++complete_;
      if (bad) {
        ++dropped_cycles_;
      } else {
        kept_.push_back(c);
      }
    }
  }

  int64_t kept_cycles() const { return int64_t(kept_.size()); }
  int64_t dropped_cycles() const { return dropped_cycles_; }

  /// Member `m`'s samples of the kept cycles, in order: one a cycle, wherever the cycle's order
  /// put it.
  void Member(int m, wpb::MemberResult* out, std::vector<double>* mhz) const {
    for (int64_t c : kept_) {
      for (size_t i = size_t(c * n_); i < size_t((c + 1) * n_); ++i) {
        if (member_[i] != m) continue;
        out->add_sample_ms(ms_[i]);
        mhz->push_back(mhz_[i]);
        break;
      }
    }
  }

 private:
  int64_t n_;
  std::vector<double> ms_, mhz_;
  std::vector<char> have_;   // 0: not yet, 1: kept, 2: from a dropped batch
  std::vector<int> member_;  // whose sample it is
  int64_t complete_ = 0;     // cycles whose every sample has come back
  std::vector<int64_t> kept_;
  int64_t dropped_cycles_ = 0;
};

}  // namespace

std::string RunMeasure(Device& d, Resident& res, const k::Registry& registry,
                       const wpb::MeasureTask& task, wpb::MeasureResult* result) {
  const auto setup0 = std::chrono::steady_clock::now();
  apb::Cost* cost = result->mutable_cost();
  if (task.variants_size() == 0) return "the window names no variant";

  // Each variant resolved; one that cannot run the problem is left out with its reason.
  std::vector<WindowMember> members;
  std::vector<int> member_of;  // the task's index of each member
  std::string refusals;
  for (int i = 0; i < task.variants_size(); ++i) {
    wpb::MemberResult* m = result->add_members();
    m->set_variant(task.variants(i));
    Ready r;
    const std::string why = Resolve(registry, task.variants(i), task.dtype(), task.shape(), &r);
    m->set_ok(why.empty());
    if (!why.empty()) {
      m->set_error(why);
      refusals += (refusals.empty() ? "" : "; ") + why;
      continue;
    }
    members.push_back({r, {}});
    member_of.push_back(i);
  }
  if (members.empty()) return refusals;

  const apb::TimingOptions& t = task.timing();
  const SamplingOptions o = ResolveOptions(
      t.min_samples(), t.min_seconds(), t.max_seconds(), t.target_noise(), t.warmup_count(),
      t.warmup_seconds(), t.hot_l2(), t.max_samples(), t.flush_l2(), t.low_clock_fraction());
  // The inputs (B^T too where any variant wants [n][k]) and each variant's L2 rotation copies,
  // resident from the last task of this problem and seed or made now; C poisoned either way.
  const bool need_nk = std::any_of(members.begin(), members.end(), [](const WindowMember& m) {
    return m.r.variant->b_layout == k::BLayout::kNK;
  });
  ProblemInputs in;
  std::string err = res.inputs.Prepare(
      {.problem = members[0].r.problem, .seed = task.seed(), .need_nk = need_nk}, &in);
  bool reused = in.reused;
  L2Method method = RequestedL2Method(o.hot_l2, o.flush_l2);
  int64_t most_sets = 1;
  for (size_t i = 0; i < members.size() && err.empty(); ++i) {
    WindowMember& m = members[i];
    // A _best library variant launches the algorithm chosen for this problem: the daemon's stored
    // choice, or the fastest candidate timed now (the reply carries the timing to store).
    if (k::LaunchesChosenAlgo(*m.r.variant)) {
      wpb::LibraryTuning tuning;
      err = EnsureChosenAlgo(d, res, &task.library_choices(), ArgsFor(d, m.r, in, in.c), &m.r,
                             &tuning);
      if (!err.empty()) {
        result->set_failed_variant(m.r.variant->name);
        break;
      }
      if (tuning.candidates_size() > 0)
        *result->mutable_members(member_of[i])->mutable_tuning() = std::move(tuning);
    }
    L2Plan plan;
    bool sets_reused = false;
    err =
        MakeInputSets(res.inputs, m.r, ArgsFor(d, m.r, in, in.c), o, &plan, &m.sets, &sets_reused);
    reused = reused && sets_reused;
    if (!plan.note.empty())
      Log("%s %s: %s", m.r.variant->name.c_str(), task.dtype().c_str(), plan.note.c_str());
    // One variant whose copies do not fit makes the whole window flush: its samples must find the
    // L2 as cold as the others'.
    if (plan.method == L2Method::kFlush) method = L2Method::kFlush;
    most_sets = std::max<int64_t>(most_sets, int64_t(m.sets.size()));
  }
  if (!err.empty()) {
    cost->set_setup_seconds(Seconds(setup0));
    return err;
  }
  cost->set_inputs_reused(reused);
  const int n = int(members.size());
  ResetPersistingL2(d);
  // A window with a user variant is guarded (guard.h): fresh inputs before every batch, one
  // random timed launch of each user variant per batch checked against cuBLAS.
  WindowGuard guard;
  if (!(err = guard.Open(d, registry, members, in, task.seed(), task.task_id())).empty()) {
    cost->set_setup_seconds(Seconds(setup0));
    return err;
  }
  double setup_s = Seconds(setup0);

  double sample_ms_estimate = 0;
  const auto warm0 = std::chrono::steady_clock::now();
  if (task.warmup()) {
    double cycle_ms = 0;
    err = WarmUp(d, members, o, &cycle_ms);
    sample_ms_estimate = cycle_ms / n;
  }
  if (err.empty() && guard.active()) {
    int failed = -1;
    err = guard.PreCheck(d, members, &failed);
    if (failed >= 0) result->set_failed_variant(members[size_t(failed)].r.variant->name);
  }
  cost->set_warmup_seconds(Seconds(warm0));
  if (!err.empty()) return err;

  const bool flush = method == L2Method::kFlush;
  const WindowSpec spec{.members = n,
                        .window_ms = 1e3 * std::max(task.window_seconds(), 0.0),
                        .min_cycles = std::max<int64_t>(task.min_cycles(), 1),
                        .max_cycles = std::max<int64_t>(task.max_cycles(), 0)};
  // Far beyond what the window needs: a host that stalls, or min_cycles far longer than the span.
  const double wall_cap_s = 3 * std::max(task.window_seconds(), 0.0) + 1;

  WindowSamples samples(n);
  struct InFlight {
    int slot = 0;
    int64_t first = 0;
    int count = 0;
  };
  std::deque<InFlight> in_flight;
  int64_t next = 0, collected = 0;
  int next_slot = 0, dropped_batches = 0;
  std::vector<BatchSample> batch;
  // The window is a span of wall time of the sampling loop: that is what the power controller
  // averages over, and for a kernel of microseconds the probes and events around each sample
  // are most of it. Estimates are per sample of that wall time.
  double collected_wall_ms = 0;  // the loop's wall time at the last collection
  auto per_sample_ms = [&] {
    return collected > 0 ? collected_wall_ms / double(collected) : sample_ms_estimate;
  };
  // Cycles still to enqueue, with the samples in flight counted at kAheadMargin times the wall
  // time per sample so far, so that the window does not overshoot by a batch (a burst window
  // must end before the power cap engages).
  auto cycles_left = [&] {
    const double est = per_sample_ms();
    const int64_t pending = next - collected;
    const double pending_ms = est > 0 ? kAheadMargin * double(pending) * est : 0;
    const int64_t enqueued_cycles = next / n - samples.dropped_cycles();
    return CyclesLeft(spec, std::max<int64_t>(enqueued_cycles, 0), collected_wall_ms + pending_ms,
                      est * n);
  };
  // Each cycle in an order of its own (CycleOrder): the task's seed and id make it, so that every
  // window of a run has its own orders and a stored window can be told again.
  const uint64_t order_seed = task.seed() ^ (task.task_id() * 0x9E3779B97F4A7C15ull);
  int64_t order_cycle = -1;
  std::vector<int> order;
  auto variant_of_sample = [&](int64_t g) {
    if (n == 1) return 0;
    if (g / n != order_cycle) {
      order_cycle = g / n;
      order = CycleOrder(n, order_seed, order_cycle);
    }
    return order[size_t(g % n)];
  };
  std::vector<std::vector<int>> slot_members(kBatchSlots);
  int64_t batches = 0;
  auto enqueue = [&](int count) {
    int failed = -1;
    std::vector<int>& who = slot_members[size_t(next_slot)];
    who.resize(size_t(count));
    for (int s = 0; s < count; ++s) who[size_t(s)] = variant_of_sample(next + s);
    AfterSample after;
    if (guard.active()) {
      if (std::string e = guard.BeforeBatch(res.inputs, members, batches, next_slot, next, who);
          !e.empty())
        return e;
      after = [&guard, &d, &members, slot = next_slot](int s) {
        return guard.AfterSample(d, members, slot, s);
      };
    }
    ++batches;
    std::string e = EnqueueBatch(d, members, next, who, flush, next_slot, &failed, after);
    if (!e.empty()) {
      if (failed >= 0) {
        result->set_failed_variant(members[size_t(failed)].r.variant->name);
        e = members[size_t(failed)].r.variant->name + ": " + e;
      }
      return e;
    }
    in_flight.push_back({next_slot, next, count});
    next += count;
    next_slot = (next_slot + 1) % kBatchSlots;
    return std::string();
  };
  const auto loop0 = std::chrono::steady_clock::now();
  bool capped = false;
  for (;;) {
    // The next batch behind its own gate while one runs, so that the GPU goes from one batch to
    // the next without waiting for the host; a cycle once begun is always completed.
    while (in_flight.size() < size_t(kBatchSlots) && !capped) {
      const int64_t left = next % n != 0 ? 1 : cycles_left();
      if (left <= 0) break;
      const int count = WindowBatchSize(n, next, left, per_sample_ms());
      if (count <= 0) break;
      if (!(err = enqueue(count)).empty()) break;
      // Without a warm-up's estimate the first batch goes alone: its samples are the estimate.
      if (per_sample_ms() <= 0) break;
    }
    if (!err.empty() || in_flight.empty()) break;
    const InFlight done = in_flight.front();
    in_flight.pop_front();
    bool timed_out = false;
    if (!(err = CollectBatch(d, done.slot, done.count, &batch, &timed_out)).empty()) break;
    if (timed_out) {
      // The host did not enqueue the batch before the gate gave up: host time may sit between
      // some sample's events. Its cycles are dropped from every variant alike.
      ++dropped_batches;
      Log("a batch of %d samples of a window of %d variants was dropped: its gate timed out "
          "before it was enqueued",
          done.count, n);
    }
    if (guard.active()) {
      int failed = -1;
      if (!(err = guard.Judge(members, done.slot, &failed)).empty()) {
        if (failed >= 0) result->set_failed_variant(members[size_t(failed)].r.variant->name);
        break;
      }
    }
    const std::vector<int>& who = slot_members[size_t(done.slot)];
    for (int s = 0; s < done.count; ++s)
      samples.Add(done.first + s, who[size_t(s)], batch[size_t(s)], timed_out);
    collected += done.count;
    collected_wall_ms = 1e3 * Seconds(loop0);
    if (collected_wall_ms >= 1e3 * wall_cap_s && next % n == 0) capped = true;
  }
  // What is still in flight after an error is waited for, so that the slots are free again.
  while (!in_flight.empty()) {
    bool ignored = false;
    const InFlight rest = in_flight.front();
    in_flight.pop_front();
    if (std::string e = CollectBatch(d, rest.slot, rest.count, &batch, &ignored); !e.empty()) break;
  }
  cost->set_sampling_seconds(Seconds(loop0));
  if (!err.empty()) return err;
  if (samples.kept_cycles() == 0) {
    return "no cycle of the window was kept: every batch's gate timed out (" +
           std::to_string(dropped_batches) + " batches dropped) before the wall-clock cap";
  }

  // After the launches: a launcher may set the kernel's dynamic shared memory limit on first use,
  // and the occupancy calculator honours that attribute.
  const auto occupancy0 = std::chrono::steady_clock::now();
  for (size_t i = 0; i < members.size(); ++i) {
    wpb::MemberResult* m = result->mutable_members(member_of[i]);
    m->set_checked_launches(guard.checked(int(i)));
    std::vector<double> mhz;
    samples.Member(int(i), m, &mhz);
    SetSampleClocks(m, mhz);
    SetStatsFromSamples(
        m, {.max_sm_mhz = d.max_sm_khz / 1e3, .low_clock_fraction = o.low_clock_fraction});
    DescribeLibraryAlgo(members[i].r, ArgsFor(d, members[i].r, in, in.c), m->mutable_library());
    err = Occupancy(d, res, members[i].r, m->mutable_occupancy());
    if (!err.empty()) {
      if (d.fatal) return err;
      Log("occupancy of %s not reported: %s", members[i].r.variant->name.c_str(), err.c_str());
      m->clear_occupancy();
      err.clear();
    }
  }
  setup_s += Seconds(occupancy0);
  cost->set_setup_seconds(setup_s);
  result->set_l2(ToL2Mode(method));
  SetWindowTotals(result);
  // Every cycle enqueued ran, those of dropped batches too: the launches the energy went into.
  result->set_launched_cycles(next / n);
  Log("window of %d variants %s %s: %d cycles, %.1f ms of GPU time, %.0f MHz, L2 %s (up to %" PRId64
      " input sets%s), %s, %d batches dropped%s; setup %.1f ms, sampling %.1f ms",
      n, task.dtype().c_str(), ShapeText(task.shape()).c_str(), result->cycles(),
      1e3 * result->gpu_seconds(), result->sm_mhz(), MethodText(method), most_sets,
      cost->inputs_reused() ? ", resident" : "", task.warmup() ? "warmed up" : "no warm-up",
      dropped_batches, capped ? ", wall-clock cap reached" : "", 1e3 * setup_s,
      1e3 * cost->sampling_seconds());
  return "";
}

}  // namespace ablation::worker
