#include "client/runs/follow.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <thread>

#include "client/cli/calls.h"
#include "client/output/enum_words.h"
#include "client/output/escape.h"
#include "client/output/format.h"
#include "client/output/render.h"
#include "client/output/render_counters.h"
#include "client/runs/answer.h"

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
