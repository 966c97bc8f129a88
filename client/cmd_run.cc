#include "client/cmd_run.h"

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <thread>

#include "client/enum_words.h"
#include "client/exit_codes.h"
#include "client/parse.h"
#include "client/render.h"
#include "client/render_counters.h"
#include "client/validators.h"

namespace ablation::client {
namespace {

std::atomic<bool> g_sigint{false};

extern "C" void OnSigint(int) { g_sigint.store(true); }

// Catches the first Ctrl-C for the length of a run; SA_RESETHAND lets a second one end the
// process at once, should the daemon not answer the cancellation.
class ScopedSigint {
 public:
  ScopedSigint() {
    g_sigint.store(false);
    struct sigaction action {};
    action.sa_handler = OnSigint;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESETHAND;
    sigaction(SIGINT, &action, &previous_);
  }
  ~ScopedSigint() { sigaction(SIGINT, &previous_, nullptr); }
  ScopedSigint(const ScopedSigint&) = delete;
  ScopedSigint& operator=(const ScopedSigint&) = delete;

 private:
  struct sigaction previous_ {};
};

// Cancels the call from a thread of its own, since TryCancel is not async-signal-safe. The
// daemon sees the cancellation and stops the run at the next measurement boundary.
class CancelOnInterrupt {
 public:
  CancelOnInterrupt(grpc::ClientContext& call, const std::atomic<bool>& interrupted)
      : thread_([this, &call, &interrupted] {
          std::unique_lock lock(mutex_);
          while (!stop_) {
            if (interrupted.load()) {
              fired_.store(true);
              call.TryCancel();
              return;
            }
            wake_.wait_for(lock, std::chrono::milliseconds(50));
          }
        }) {}
  ~CancelOnInterrupt() { Stop(); }
  CancelOnInterrupt(const CancelOnInterrupt&) = delete;
  CancelOnInterrupt& operator=(const CancelOnInterrupt&) = delete;

  void Stop() {
    {
      std::lock_guard lock(mutex_);
      stop_ = true;
    }
    wake_.notify_all();
    if (thread_.joinable()) thread_.join();
  }
  bool fired() const { return fired_.load(); }

 private:
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::atomic<bool> fired_{false};
  std::thread thread_;  // last: starts once the members it uses exist
};

std::string RequestedBy() {
  const char* user = std::getenv("USER");
  if (user == nullptr || *user == '\0') user = std::getenv("LOGNAME");
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  std::string who = user != nullptr ? user : "unknown";
  if (host[0] != '\0') who += std::string("@") + host;
  return who;
}

}  // namespace

void AddMeasureOptions(CLI::App* sub, RunOptions& options) {
  sub->add_flag("--verify", options.verify, "Verify each variant before timing it");
  sub->add_flag("--hot-l2", options.hot_l2,
                "Keep L2 warm between samples (default: cold, rotating input copies)");
  sub->add_flag("--flush-l2", options.flush_l2,
                "L2 cold by a flush and a sync before every sample (default: rotating inputs)");
  sub->add_option("--min-samples", options.min_samples, "At least this many samples (default 10)")
      ->check(CLI::PositiveNumber);
  sub->add_option("--max-seconds", options.max_seconds,
                  "Time cap per measurement in seconds (default 10)")
      ->check(CLI::PositiveNumber);
  sub->add_option("--target-noise", options.target_noise,
                  "Stop at this relative noise of the mean (default 0.005)")
      ->check(FractionValidator());
  sub->add_option("--rounds", options.rounds,
                  "Measure every item this many times, each round in a shuffled order (default "
                  "1; 3 for a preset)")
      ->check(CLI::Range(1, 100));
  sub->add_option("--order-seed", options.order_seed,
                  "Seed of the rounds' shuffled orders (default: the daemon picks and stores one)");
  const CLI::Validator clock(
      [](std::string& text) -> std::string {
        if (text == "base" || text == "max") return {};
        int mhz = 0;
        if (CLI::detail::lexical_cast(text, mhz) && mhz > 0) return {};
        return "'" + text + "': expected a clock in MHz, 'base' or 'max'";
      },
      "MHZ|base|max", "clock");
  sub->add_option("--lock-sm-clock", options.lock_sm_clock,
                  "Lock the SM clock for the run (default: observe, no lock)")
      ->check(clock);
  sub->add_option("--lock-mem-clock", options.lock_mem_clock,
                  "Lock the memory clock for the run (default: observe, no lock)")
      ->check(clock);
  sub->add_option("--device,-d", options.device, "GPU index")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  sub->add_flag("--profile", options.profile,
                "After each item's timing, read the hardware counters of one launch (ncu)");
  sub->add_option("--profile-metrics", options.profile_metrics,
                  "With --profile: sets, concepts or ncu metric names (as profile --metrics)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
}

void ApplyMeasureOptions(const RunOptions& options, v1::RunRequest* request) {
  v1::TimingOptions* timing = request->mutable_timing();
  timing->set_min_samples(options.min_samples);
  timing->set_max_seconds(options.max_seconds);
  timing->set_target_noise(options.target_noise);
  timing->set_hot_l2(options.hot_l2);
  timing->set_flush_l2(options.flush_l2);
  request->set_verify(options.verify);
  if (!options.lock_sm_clock.empty() || !options.lock_mem_clock.empty()) {
    request->mutable_clocks()->set_mode(v1::CLOCK_MODE_LOCK);
    request->mutable_clocks()->set_sm_mhz(options.lock_sm_clock);
    request->mutable_clocks()->set_mem_mhz(options.lock_mem_clock);
  }
  request->set_rounds(options.rounds);
  request->set_order_seed(options.order_seed);
  request->set_device(options.device);
  request->set_profile(options.profile);
  for (const auto& m : options.profile_metrics) request->add_profile_metrics(m);
}

CLI::App* SetupRun(CLI::App& app, RunOptions& options) {
  CLI::App* sub = app.add_subcommand(
      "run", "Run variants x shapes on a GPU, showing progress live; Ctrl-C cancels the run");
  sub->add_option("--variant,-v", options.variants,
                  "Variant name, short name (L1_R1_s3) or glob (abl_*_s3_*); repeatable")
      ->required()
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  sub->add_option("--shape,-s", options.shapes,
                  "MxNxK, or N for NxNxN; repeatable (default 4096x4096x4096)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->check(ShapeValidator());
  sub->add_option("--dtype", options.dtype, "bf16 (default), fp16, fp32, tf32, int8");
  sub->add_option("--tag,-t", options.tags, "Tag stored with the run (nightly); repeatable")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  AddMeasureOptions(sub, options);
  return sub;
}

v1::RunRequest BuildRunRequest(const RunOptions& options) {
  v1::RunRequest request;
  for (const std::string& v : options.variants) request.add_variants(v);
  for (const std::string& s : options.shapes) *request.add_shapes() = ParseShapeOrThrow(s);
  if (options.shapes.empty()) *request.add_shapes() = ParseShapeOrThrow("4096x4096x4096");
  request.set_dtype(options.dtype);
  for (const std::string& t : options.tags) request.add_tags(t);
  ApplyMeasureOptions(options, &request);
  request.set_requested_by(RequestedBy());
  return request;
}

int ExecuteRun(const RunOptions& options, const CommandContext& context) {
  return FollowRun(BuildRunRequest(options), context, nullptr);
}

int FollowRun(const v1::RunRequest& request, const CommandContext& context,
              const RunProgress& progress) {
  std::optional<ScopedSigint> sigint;
  if (context.interrupted == nullptr) sigint.emplace();
  const std::atomic<bool>& interrupted =
      context.interrupted != nullptr ? *context.interrupted : g_sigint;

  // No deadline: a run may wait in the queue and then measure for a long time.
  grpc::ClientContext call;
  std::unique_ptr<grpc::ClientReaderInterface<v1::RunEvent>> reader =
      context.stub.RunAblation(&call, request);
  CancelOnInterrupt canceller(call, interrupted);

  RunOutcome outcome;
  std::vector<v1::Measurement> measurements;
  std::int64_t run_id = 0;
  int total = 0;
  std::string failed_reason;
  v1::RunEvent event;
  while (reader->Read(&event)) {
    switch (event.event_case()) {
      case v1::RunEvent::kQueued:
        run_id = event.queued().run_id();
        break;
      case v1::RunEvent::kStarted:
        run_id = event.started().run_id();
        total = event.started().total();
        break;
      case v1::RunEvent::kMeasurement:
        measurements.push_back(event.measurement());
        if (event.measurement().status() == v1::MEASUREMENT_STATUS_FAILED)
          ++outcome.failed_measurements;
        break;
      case v1::RunEvent::kFinished:
        outcome.finished_event = true;
        outcome.finished_state = event.finished().state();
        break;
      case v1::RunEvent::kFailed:
        outcome.failed_event = true;
        failed_reason = event.failed().reason();
        break;
      case v1::RunEvent::EVENT_NOT_SET:
        break;
    }
    if (progress) {
      progress(event, static_cast<int>(measurements.size()), total);
    } else if (!context.global.quiet) {
      std::string line = ProgressLine(event, static_cast<int>(measurements.size()), total);
      if (!line.empty()) context.err << line << '\n' << std::flush;
    }
  }
  if (progress) progress(v1::RunEvent(), static_cast<int>(measurements.size()), total);
  grpc::Status status = reader->Finish();
  canceller.Stop();
  outcome.interrupted = canceller.fired();
  outcome.code = status.error_code();

  // What arrived is printed even when the run ends badly: every measurement is already stored.
  if (!measurements.empty() || outcome.finished_event) {
    context.out << RenderList(context.global.format, measurements,
                              context.global.format == Format::kCsv ? &MeasurementsWithAllCounters
                                                                    : &MeasurementsWithCounters)
                << std::flush;
  }
  if (outcome.interrupted) {
    context.err << "interrupted: ";
    if (run_id > 0) context.err << "run " << run_id << " ";
    context.err << "cancelled; the daemon stops it at the next measurement boundary\n";
  } else if (!status.ok()) {
    context.err << DescribeRpcError(status, context.global.server) << '\n';
  } else if (outcome.failed_event) {
    context.err << "error: run " << run_id << " failed: " << failed_reason << '\n';
  } else if (!outcome.finished_event) {
    context.err << "error: the stream of run " << run_id << " ended without a final event\n";
  } else if (outcome.failed_measurements > 0) {
    context.err << "error: " << outcome.failed_measurements << " of " << measurements.size()
                << " measurements failed\n";
  } else if (outcome.finished_state != v1::RUN_STATE_SUCCEEDED) {
    context.err << "error: run " << run_id << " ended " << EnumWord(outcome.finished_state) << '\n';
  }
  return ExitCodeForRun(outcome);
}

}  // namespace ablation::client
