#include "client/cmd_run.h"

#include "client/cmd_report.h"
#include "client/cmd_sweep.h"

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <thread>

#include "client/dtype.h"
#include "client/enum_words.h"
#include "client/escape.h"
#include "client/exit_codes.h"
#include "client/parse.h"
#include "client/render.h"
#include "client/render_counters.h"
#include "client/rpc.h"
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

// On Ctrl-C, asks the daemon to cancel the run (CancelRun, from a thread of its own: an RPC is
// not async-signal-safe). The stream then goes on to the run's Finished event, cancelled at
// the next measurement boundary. Before the run has an id, the call itself is cancelled.
class CancelOnInterrupt {
 public:
  CancelOnInterrupt(grpc::ClientContext& call, const std::atomic<bool>& interrupted,
                    const CommandContext& context, const std::atomic<std::int64_t>& run_id)
      : thread_([this, &call, &interrupted, &context, &run_id] {
          std::unique_lock lock(mutex_);
          while (!stop_) {
            if (interrupted.load()) {
              fired_.store(true);
              lock.unlock();
              // A Ctrl-C can come before the Queued event named the run: wait a moment for its
              // id, since a run whose stream merely ends goes on (the daemon keeps it).
              const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(2);
              while (run_id.load() == 0 && std::chrono::steady_clock::now() < give_up)
                std::this_thread::sleep_for(std::chrono::milliseconds(10));
              SendCancel(call, context, run_id.load());
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
  static void SendCancel(grpc::ClientContext& call, const CommandContext& context,
                         std::int64_t run_id) {
    if (run_id <= 0) return call.TryCancel();
    grpc::ClientContext cancel;
    SetDeadline(cancel, context.global, kDefaultQueryTimeoutS);
    v1::CancelRunRequest request;
    request.set_run_id(run_id);
    v1::CancelRunResponse response;
    grpc::Status status = context.stub.CancelRun(&cancel, request, &response);
    if (!status.ok()) {
      context.err << DescribeRpcError(status, context.global.server) << '\n';
      call.TryCancel();  // the run goes on; at least this client stops waiting for it
    }
  }

  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::atomic<bool> fired_{false};
  std::thread thread_;  // last: starts once the members it uses exist
};

}  // namespace

void AddMeasureOptions(CLI::App* sub, RunOptions& options) {
  sub->add_option("--regime", options.regime,
                  "Power regime: sustained (settled at the power cap, the default), burst (from "
                  "a cooled GPU, before the cap engages) or locked (clocks locked; needs admin)")
      ->check([](const std::string& text) -> std::string {
        v1::Regime regime;
        return ParseEnumWord("", text, &regime);
      });
  sub->add_flag("--unpaired", options.unpaired,
                "Measure each item in a window of its own (default: the items of one shape "
                "interleaved in one window, so that they see the same clock)");
  sub->add_option("--window-seconds", options.window_seconds,
                  "Sustained/locked: the measured window's length (default 3)")
      ->check(CLI::PositiveNumber);
  sub->add_option("--burst-seconds", options.burst_seconds,
                  "Burst: one short window's length (default 0.02)")
      ->check(CLI::PositiveNumber);
  sub->add_option("--settle-max-seconds", options.settle_max_seconds,
                  "Sustained/locked: take the window anyway after settling this long (default 30)")
      ->check(CLI::PositiveNumber);
  sub->add_option("--solo-seconds", options.solo_seconds,
                  "Sustained/locked: after the paired window each variant runs alone until its "
                  "own clock and power settle; this much of it is its figure at the cap "
                  "(default 3)")
      ->check(CLI::PositiveNumber);
  sub->add_flag("--no-solo", options.no_solo,
                "Sustained/locked: no solo spans (cheaper; then no TFLOPS alone at the cap, no "
                "energy per operation, and shares of cuBLAS from the shared windows)");
  sub->add_flag("--verify", options.verify, "Verify each variant before timing it");
  sub->add_flag("--hot-l2", options.hot_l2,
                "Keep L2 warm between samples (default: cold, rotating input copies)");
  sub->add_flag("--flush-l2", options.flush_l2,
                "L2 cold by a flush before every sample (default: rotating inputs)");
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
  sub->add_flag("--detach", options.detach,
                "Queue the run, print its id and exit; it runs on (`watch RUN` follows it)");
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
  timing->set_window_seconds(options.window_seconds);
  timing->set_burst_seconds(options.burst_seconds);
  timing->set_settle_max_seconds(options.settle_max_seconds);
  timing->set_solo_seconds(options.solo_seconds);
  timing->set_no_solo(options.no_solo);
  request->set_verify(options.verify);
  if (!options.regime.empty()) {
    v1::Regime regime = v1::REGIME_UNSPECIFIED;
    ParseEnumWord("--regime", options.regime, &regime);  // checked by the option's validator
    request->set_regime(regime);
  }
  request->set_unpaired(options.unpaired);
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
      "run",
      "Run variants x shapes on a GPU, showing progress live; Ctrl-C cancels the run (a client "
      "that merely disconnects leaves it running)");
  AddSelectionOptions(sub, options, VariantsAs::kOption);
  sub->add_option("--tag,-t", options.tags, "Tag stored with the run (nightly); repeatable")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  AddMeasureOptions(sub, options);
  return sub;
}

v1::RunRequest BuildRunRequest(const RunOptions& options) {
  v1::RunRequest request;
  for (const std::string& v : options.variants) request.add_variants(v);
  AddShapes(options, request.mutable_shapes());
  request.set_dtype(options.dtype);
  for (const std::string& t : options.tags) request.add_tags(t);
  ApplyMeasureOptions(options, &request);
  return request;
}

int ExecuteRun(const RunOptions& options, const CommandContext& context) {
  DTypeChoice dtype;
  if (!ResolveSelectionDType(options, context, &dtype)) return kExitUsage;
  RunOptions resolved = options;
  resolved.dtype = dtype.dtype;
  const int code = resolved.detach ? DetachRun(BuildRunRequest(resolved), context)
                                   : FollowRun(BuildRunRequest(resolved), context, nullptr);
  // A refusal (a variant without that dtype) reads better knowing where the dtype came from.
  if (code == kExitUsage && !InferredDTypeNote(dtype).empty())
    context.err << InferredDTypeNote(dtype) << '\n';
  return code;
}

int DetachRun(const v1::RunRequest& request, const CommandContext& context) {
  grpc::ClientContext call;
  std::unique_ptr<grpc::ClientReaderInterface<v1::RunEvent>> reader =
      context.stub.RunAblation(&call, request);
  v1::RunEvent event;
  // The first event names the queued run; leaving the stream then does not cancel it.
  if (reader->Read(&event) && event.has_queued()) {
    call.TryCancel();
    reader->Finish();
    context.out << event.queued().run_id() << '\n';
    if (!context.global.quiet)
      context.err << "run " << event.queued().run_id() << " queued (position "
                  << event.queued().position() << "); follow it with `watch "
                  << event.queued().run_id() << "`\n";
    return kExitOk;
  }
  grpc::Status status = reader->Finish();
  if (status.ok()) status = {grpc::StatusCode::INTERNAL, "the daemon queued no run"};
  return ReportRpcError(status, context);
}

int FollowRun(const v1::RunRequest& request, const CommandContext& context,
              const RunProgress& progress) {
  grpc::ClientContext call;
  std::unique_ptr<grpc::ClientReaderInterface<v1::RunEvent>> reader =
      context.stub.RunAblation(&call, request);
  RunStreamResult result = ReadRunStream(call, *reader, context, progress);
  return ReportRunStream(result, context);
}

RunStreamResult ReadRunStream(grpc::ClientContext& call,
                              grpc::ClientReaderInterface<v1::RunEvent>& reader,
                              const CommandContext& context, const RunProgress& progress,
                              int seen_before) {
  std::optional<ScopedSigint> sigint;
  if (context.interrupted == nullptr) sigint.emplace();
  const std::atomic<bool>& interrupted =
      context.interrupted != nullptr ? *context.interrupted : g_sigint;
  std::atomic<std::int64_t> run_id{0};
  CancelOnInterrupt canceller(call, interrupted, context, run_id);

  RunStreamResult r;
  int total = 0;
  auto started_at = std::chrono::steady_clock::now();  // the run's start, once the stream says
  v1::RunEvent event;
  while (reader.Read(&event)) {
    switch (event.event_case()) {
      case v1::RunEvent::kQueued:
        run_id = event.queued().run_id();
        break;
      case v1::RunEvent::kStarted:
        run_id = event.started().run_id();
        total = event.started().total();
        break;
      case v1::RunEvent::kMeasurement:
        r.measurements.push_back(event.measurement());
        if (event.measurement().status() == v1::MEASUREMENT_STATUS_FAILED)
          ++r.outcome.failed_measurements;
        break;
      case v1::RunEvent::kFinished:
        run_id = event.finished().run_id();
        r.outcome.finished_event = true;
        r.outcome.finished_state = event.finished().state();
        break;
      case v1::RunEvent::kFailed:
        r.outcome.failed_event = true;
        r.failed_reason = event.failed().reason();
        break;
      case v1::RunEvent::EVENT_NOT_SET:
        break;
    }
    const int seen = seen_before + static_cast<int>(r.measurements.size());
    if (event.event_case() == v1::RunEvent::kStarted) started_at = std::chrono::steady_clock::now();
    if (progress) {
      progress(event, seen, total);
    } else if (!context.global.quiet) {
      std::string line = ProgressLine(event, seen, total);
      // The time so far and what is left at this pace, counted from the measurements this stream
      // saw (a watch that joined late has not seen the earlier ones take their time).
      const int timed = seen - seen_before;
      if (event.event_case() == v1::RunEvent::kMeasurement && total > 0 && timed > 0) {
        const double elapsed =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - started_at).count();
        line += " | " + FormatDuration(elapsed) + " elapsed, ETA " +
                FormatDuration(elapsed / timed * std::max(total - seen, 0));
      }
      if (!line.empty()) context.err << line << '\n' << std::flush;
    }
  }
  if (progress)
    progress(v1::RunEvent(), seen_before + static_cast<int>(r.measurements.size()), total);
  r.status = reader.Finish();
  canceller.Stop();
  r.outcome.interrupted = canceller.fired();
  r.outcome.code = r.status.error_code();
  r.run_id = run_id.load();
  return r;
}

int ReportRunStream(const RunStreamResult& r, const CommandContext& context) {
  // What arrived is printed even when the run ends badly: every measurement is already stored.
  if (!r.measurements.empty() || r.outcome.finished_event) {
    // JSON: the run's id and how it ended ("" while it has not) beside its rows.
    const std::string state = r.outcome.finished_event ? EnumWord(r.outcome.finished_state)
                              : r.outcome.failed_event ? EnumWord(v1::RUN_STATE_FAILED)
                                                       : "";
    context.out << RenderList(context.global.format, "measurements", r.measurements,
                              context.global.format == Format::kCsv ? &MeasurementsWithAllCounters
                                                                    : &MeasurementsWithCounters,
                              {{"run_id", r.run_id}, {"state", state}})
                << std::flush;
  }
  const RunOutcome& outcome = r.outcome;
  // The answer, for a reader: the ladders the run measured, each rung's change and its interval,
  // as `report` gives them (tables only; CSV and JSON stay rows for programs).
  if (outcome.finished_event && r.run_id > 0 && !outcome.interrupted &&
      (context.global.format == Format::kTable || context.global.format == Format::kMarkdown)) {
    if (const std::string answer = LadderAnswer(r.run_id, context); !answer.empty())
      context.out << "\nThe answer (`ablation-client report " << r.run_id << "` has it all):\n\n"
                  << answer << std::flush;
  }
  if (outcome.interrupted) {
    context.err << "interrupted: ";
    if (r.run_id > 0) context.err << "run " << r.run_id << " ";
    context.err << "cancelled; the daemon stops it at the next measurement boundary\n";
  } else if (!r.status.ok()) {
    context.err << DescribeRpcError(r.status, context.global.server) << '\n';
  } else if (outcome.failed_event) {
    context.err << "error: run " << r.run_id << " failed: " << Printable(r.failed_reason) << '\n';
  } else if (!outcome.finished_event) {
    context.err << "error: the stream of run " << r.run_id << " ended without a final event\n";
  } else if (outcome.failed_measurements > 0) {
    context.err << "error: " << outcome.failed_measurements << " of " << r.measurements.size()
                << " measurements failed\n";
  } else if (outcome.finished_state != v1::RUN_STATE_SUCCEEDED) {
    context.err << "error: run " << r.run_id << " ended " << EnumWord(outcome.finished_state)
                << '\n';
  }
  return ExitCodeForRun(outcome);
}

}  // namespace ablation::client
