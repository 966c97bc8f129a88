// A worker that lives in the test's process: the run manager talks to it through the same
// core::Worker interface as to a worker process, and the test scripts what each variant does
// (measure, fail its verification, die, hang) and can act at a chosen call (cancel mid-run,
// block until released).
#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "server/core/workers/worker.h"
#include "server/protocol/window_stats.h"

namespace ablation::testing {

struct WorkerScript {
  enum class Action {
    kMeasure,
    kDie,
    kDieOnGpu1,
    kHang,
    kFailVerification,
    kReferenceFails,
    kRefuse
  };
  std::map<std::string, Action> by_variant;            ///< default kMeasure
  std::vector<double> samples_ms{1.0, 2.0, 3.0, 4.0};  ///< each variant's samples in a window
  /// The effective SM clock of the n-th window (0-based, settling chunks included); the default
  /// a constant 1980 MHz, so that settling ends as soon as it has two spans to compare.
  std::function<double(int)> clock_mhz;
  /// A power cap that engages this long into a window (0: none): a longer window's second half
  /// of samples runs at a 10% lower clock.
  double cap_after_seconds = 0;
  bool device_present = true;
  int device_count = 1;       ///< GPUs the hello reports (each worker is one of them)
  bool fail_restart = false;  ///< every Start after the first fails
  /// Called before each measure request with its 0-based index among measure requests.
  std::function<void(int)> before_measure;
  /// Called before each measure request with the worker's GPU and the variant.
  std::function<void(int, const std::string&)> before_measure_on;
};

/// Shared between the test and every worker the factory makes (restarts make new ones).
struct WorkerLog {
  std::mutex mu;
  int starts = 0;
  std::map<int, int> starts_by_device;
  int measures = 0;  ///< window tasks: settling chunks, measured windows, warm-ups
  int verifies = 0;
  /// Every window task's variants, in order: a variant appears once per task it was in.
  std::vector<std::string> measured_variants;
  /// Each window task: its variants, span and warm-up flag.
  struct Window {
    std::vector<std::string> variants;
    double seconds = 0;
    bool warmup = false;
  };
  std::vector<Window> windows;
  std::vector<int> measured_rounds_min_samples;  ///< timing.min_samples of each measure request
  std::vector<uint64_t> seeds;
  int releases = 0;  ///< ReleaseTasks (the end of each run, before a profile)
  /// Each measure request's inputs_reused: its problem and seed were those of the one before.
  std::vector<bool> reused;
};

class InProcessWorker final : public core::Worker {
 public:
  InProcessWorker(std::shared_ptr<const WorkerScript> script, std::shared_ptr<WorkerLog> log,
                  int device = 0)
      : script_(std::move(script)), log_(std::move(log)), device_(device) {}

  core::Status Start() override {
    std::lock_guard lock(log_->mu);
    ++log_->starts_by_device[device_];
    if (++log_->starts > 1 && script_->fail_restart) return {core::Code::kInternal, "exit code 3"};
    running_ = true;
    resident_.clear();  // a new process holds nothing
    hello_.Clear();
    hello_.set_device_present(script_->device_present);
    if (!script_->device_present) hello_.set_no_device_reason("no CUDA device (test)");
    hello_.set_device_count(script_->device_count);
    hello_.set_pid(4242);
    auto* d = hello_.mutable_device();
    d->set_name("Test GPU");
    d->set_uuid("GPU-test-000" + std::to_string(device_));
    d->set_compute_capability("9.0");
    d->set_sm_count(132);
    d->set_memory_bytes(int64_t(80) << 30);
    d->set_l2_bytes(int64_t(50) << 20);
    return core::Status::Ok();
  }
  bool running() const override { return running_; }
  const worker::v1::Hello& hello() const override { return hello_; }
  void Stop() override { running_ = false; }

  CallResult Call(const worker::v1::WorkerRequest& request,
                  std::chrono::milliseconds timeout) override {
    CallResult result;
    if (request.has_measure()) return Measure(request.measure(), timeout);
    if (request.has_release()) {
      std::lock_guard lock(log_->mu);
      ++log_->releases;
      resident_.clear();
      result.ok = true;
      result.reply.mutable_release()->set_task_id(request.release().task_id());
      return result;
    }
    if (request.has_verify()) {
      const auto& task = request.verify();
      {
        std::lock_guard lock(log_->mu);
        ++log_->verifies;
        log_->seeds.push_back(task.seed());
      }
      result.ok = true;
      auto* v = result.reply.mutable_verify();
      if (ActionOf(task.variant()) == WorkerScript::Action::kReferenceFails) {
        v->set_passed(false);
        v->set_error("reference: cuBLAS refuses 65x37x29 (test)");
        v->set_reference_failed(true);
        return result;
      }
      const bool fail = ActionOf(task.variant()) == WorkerScript::Action::kFailVerification;
      v->set_passed(!fail);
      v->set_max_abs_error(fail ? 3.5 : 0);
      v->set_rel_frobenius_error(fail ? 0.25 : 0);
      v->set_mismatches(fail ? 12 : 0);
      v->set_tolerance(0.01);
      return result;
    }
    result.ok = true;
    result.reply.mutable_describe()->set_ok(true);
    result.reply.mutable_describe()->set_kernel_symbol("_Z4testv");
    result.reply.mutable_describe()->set_arch("sm_90");  // whose counter names a profile uses
    return result;
  }

 private:
  WorkerScript::Action ActionOf(const std::string& variant) const {
    auto it = script_->by_variant.find(variant);
    return it == script_->by_variant.end() ? WorkerScript::Action::kMeasure : it->second;
  }

  // A window: every variant's samples are the script's, at the script's clock; its span is the
  // task's own (virtual: nothing sleeps), so that the daemon's settling advances. A window with
  // a variant scripted to die, hang or refuse fails as a whole, as a real window would.
  CallResult Measure(const worker::v1::MeasureTask& task, std::chrono::milliseconds timeout) {
    int index = 0;
    // As the real worker keeps a problem's inputs resident between measurements.
    const std::string key = task.dtype() + " " + std::to_string(task.shape().m()) + "x" +
                            std::to_string(task.shape().n()) + "x" +
                            std::to_string(task.shape().k()) + " " + std::to_string(task.seed());
    const bool reused = key == resident_;
    resident_ = key;
    {
      std::lock_guard lock(log_->mu);
      index = log_->measures++;
      log_->reused.push_back(reused);
      WorkerLog::Window w;
      for (const std::string& v : task.variants()) {
        log_->measured_variants.push_back(v);
        w.variants.push_back(v);
      }
      w.seconds = task.window_seconds();
      w.warmup = task.warmup();
      log_->windows.push_back(std::move(w));
      log_->measured_rounds_min_samples.push_back(task.timing().min_samples());
      log_->seeds.push_back(task.seed());
    }
    if (script_->before_measure) script_->before_measure(index);
    if (script_->before_measure_on)
      for (const std::string& v : task.variants()) script_->before_measure_on(device_, v);
    CallResult result;
    for (const std::string& v : task.variants()) {
      switch (ActionOf(v)) {
        case WorkerScript::Action::kDieOnGpu1:
          if (device_ != 1) break;
          [[fallthrough]];
        case WorkerScript::Action::kDie:
          running_ = false;
          result.failure = "the worker died: signal 9 (Killed)";
          return result;
        case WorkerScript::Action::kHang:
          running_ = false;
          result.failure = "the worker did not answer within " +
                           std::to_string(timeout.count() / 1000) + " s (hung); killed";
          return result;
        case WorkerScript::Action::kRefuse:
          result.ok = true;
          result.reply.mutable_measure()->set_ok(false);
          result.reply.mutable_measure()->set_error(v + ": cannot launch (test)");
          result.reply.mutable_measure()->set_failed_variant(v);
          return result;
        default:
          break;
      }
    }
    result.ok = true;
    auto* m = result.reply.mutable_measure();
    m->set_task_id(task.task_id());
    m->set_ok(true);
    m->set_l2(task.timing().hot_l2() ? v1::L2_MODE_HOT : v1::L2_MODE_COLD);
    const double mhz = script_->clock_mhz ? script_->clock_mhz(index) : 1980;
    for (const std::string& v : task.variants()) {
      auto* member = m->add_members();
      member->set_variant(v);
      member->set_ok(true);
      for (double s : script_->samples_ms) member->add_sample_ms(s);
      std::vector<double> clocks(script_->samples_ms.size(), mhz);
      if (script_->cap_after_seconds > 0 && task.window_seconds() > script_->cap_after_seconds)
        for (size_t i = clocks.size() / 2; i < clocks.size(); ++i) clocks[i] = 0.9 * mhz;
      // The statistics as the real worker computes them ({1, 2, 3, 4}: median 2.5).
      protocol::SetSampleClocks(member, clocks);
      protocol::SetStatsFromSamples(member, {.max_sm_mhz = 1980});
      member->mutable_occupancy()->set_registers_per_thread(128);
      member->mutable_occupancy()->set_limiter("registers");
    }
    protocol::SetWindowTotals(m);
    // Where the worker's time went, as the real one reports it; the sampling loop spans the
    // window asked for.
    auto* cost = m->mutable_cost();
    cost->set_worker_seconds(0.012 + task.window_seconds());
    cost->set_setup_seconds(reused ? 0 : 0.001);
    cost->set_warmup_seconds(task.warmup() ? 0.001 : 0);
    cost->set_sampling_seconds(task.window_seconds());
    cost->set_inputs_reused(reused);
    return result;
  }

  std::shared_ptr<const WorkerScript> script_;
  std::shared_ptr<WorkerLog> log_;
  const int device_;
  std::atomic<bool> running_{false};
  worker::v1::Hello hello_;
  std::string resident_;  ///< the problem and seed of the last measurement
};

inline core::WorkerFactory InProcessWorkers(std::shared_ptr<const WorkerScript> script,
                                            std::shared_ptr<WorkerLog> log) {
  return
      [script, log](int device) { return std::make_unique<InProcessWorker>(script, log, device); };
}

}  // namespace ablation::testing
