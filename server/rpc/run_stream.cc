#include "server/rpc/run_stream.h"

#include <chrono>
#include <thread>

#include <spdlog/spdlog.h>

#include "server/rpc/grpc_status.h"

namespace ablation::rpc {

// What the core holds: forwards to the stream until the stream is done, then drops. The run's
// end is heard here even when no stream listens any more (the quota is given back then).
class RunStream::Observer final : public core::RunObserver {
 public:
  Observer(RunStream* stream, OnRunEnd on_end) : stream_(stream), on_end_(std::move(on_end)) {}
  void OnEvent(const v1::RunEvent& event) override {
    std::lock_guard lock(mu_);
    if (stream_) stream_->Event(event);
  }
  void OnEnd(const core::Status& status) override {
    OnRunEnd on_end;
    {
      std::lock_guard lock(mu_);
      if (stream_) stream_->End(status);
      on_end.swap(on_end_);
    }
    if (on_end) on_end();
  }
  void Detach() {
    std::lock_guard lock(mu_);
    stream_ = nullptr;
  }

 private:
  std::mutex mu_;
  RunStream* stream_;
  OnRunEnd on_end_;
};

RunStream* RunStream::Start(core::RunManager* runs, const v1::RunRequest& request,
                            const std::string& requested_by, OnRunEnd on_end) {
  auto* stream = new RunStream();
  stream->observer_ = std::make_shared<Observer>(stream, on_end);
  int64_t id = 0;
  // The core may report the Queued event from inside SubmitRun.
  core::Status st =
      Guarded([&] { return runs->SubmitRun(request, requested_by, stream->observer_, &id); });
  if (!st.ok()) {
    if (on_end) on_end();  // refused: nothing will end
    std::lock_guard lock(stream->mu_);
    stream->FinishOnce(ToGrpc(st));
  } else {
    spdlog::info("run {} queued for {}", id, requested_by);
  }
  return stream;
}

RunStream* RunStream::Refuse(const grpc::Status& status) {
  auto* stream = new RunStream();
  stream->observer_ = std::make_shared<Observer>(stream, nullptr);
  std::lock_guard lock(stream->mu_);
  stream->FinishOnce(status);
  return stream;
}

RunStream* RunStream::Watch(core::RunManager* runs, core::Queries* queries, int64_t run_id,
                            std::function<void()> on_done) {
  auto* stream = new RunStream();
  stream->on_done_ = std::move(on_done);
  stream->observer_ = std::make_shared<Observer>(stream, nullptr);
  stream->run_id_ = run_id;  // a watcher joins after the Queued event that names it
  if (run_id <= 0) {
    std::lock_guard lock(stream->mu_);
    stream->FinishOnce({grpc::StatusCode::INVALID_ARGUMENT, "run_id: must be a positive run id"});
  } else if (!runs->Watch(run_id, stream->observer_).ok()) {
    AnswerFromStore(stream->observer_, runs, queries, run_id, 20);
  }
  return stream;
}

// The run is not in the queue: it ended (or is ending: its final state may not be committed
// yet, so a run the store still shows unfinished is looked for again a moment later).
// Only the observer is used: the stream may be gone by the time a reader answers.
void RunStream::AnswerFromStore(std::shared_ptr<Observer> observer, core::RunManager* runs,
                                core::Queries* queries, int64_t run_id, int tries) {
  v1::GetRunRequest request;
  request.set_run_id(run_id);
  queries->GetRun(request, [observer, runs, queries, run_id, tries](
                               const core::Status& st, const v1::GetRunResponse& response) {
    if (!st.ok()) {
      observer->OnEnd(st);
      return;
    }
    const v1::Run& run = response.run();
    const bool final = run.state() != v1::RUN_STATE_QUEUED && run.state() != v1::RUN_STATE_RUNNING;
    if (!final && tries > 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      if (runs->Watch(run_id, observer).ok()) return;
      return AnswerFromStore(observer, runs, queries, run_id, tries - 1);
    }
    v1::RunEvent event;
    event.mutable_finished()->set_run_id(run.id());
    event.mutable_finished()->set_state(run.state());
    event.mutable_finished()->set_ok(run.ok());
    event.mutable_finished()->set_failed(run.failed());
    observer->OnEvent(event);
    observer->OnEnd(core::Status::Ok());
  });
}

void RunStream::Event(const v1::RunEvent& event) {
  std::lock_guard lock(mu_);
  if (finished_) {
    ++dropped_;
    return;
  }
  if (event.has_queued()) run_id_ = event.queued().run_id();
  if (event.has_finished()) run_id_ = event.finished().run_id();
  if (event.has_finished() || event.has_failed()) told_end_ = true;
  if (pending_.size() >= kMaxPendingEvents) {
    // The client does not read as fast as the run reports: keep the event being written (gRPC
    // holds a pointer to it) and end the stream; the run goes on and is stored as it runs.
    dropped_ = pending_.size();  // those waiting behind the one out, and this one
    pending_.erase(pending_.begin() + 1, pending_.end());
    const std::string run = run_id_ > 0 ? std::to_string(run_id_) : "RUN_ID";
    spdlog::warn("run {}: a watcher fell behind by {} events; its stream is ended", run,
                 kMaxPendingEvents);
    FinishOnce({grpc::StatusCode::RESOURCE_EXHAUSTED,
                "watcher fell behind: " + std::to_string(dropped_) +
                    " events undelivered (at most " + std::to_string(kMaxPendingEvents) +
                    " wait per stream); resume with WatchRun(run_id=" + run +
                    ") (ablation-client watch " + run + "), whose rows so far are in GetRun"});
    return;
  }
  pending_.push_back(event);
  if (!writing_) {
    writing_ = true;
    StartWrite(&pending_.front());
  }
}

void RunStream::End(const core::Status& status) {
  std::lock_guard lock(mu_);
  ended_ = true;
  // A run whose end was told as an event ends the stream ok; one that ended for a reason that is
  // a status of its own (no permission to lock clocks) ends the stream with that status.
  final_status_ = told_end_ ? grpc::Status::OK : ToGrpc(status);
  if (!writing_) FinishOnce(final_status_);
}

void RunStream::OnWriteDone(bool ok) {
  std::lock_guard lock(mu_);
  pending_.pop_front();
  if (finished_) {
    // Ended while this write was out (fell behind): the status follows it; nothing else goes.
    pending_.clear();
    writing_ = false;
    return;
  }
  if (!ok) {
    // The client is gone; the run goes on (it is stored as it runs, and WatchRun re-attaches).
    writing_ = false;
    FinishOnce(grpc::Status(grpc::StatusCode::CANCELLED, "client went away"));
  } else if (!pending_.empty()) {
    StartWrite(&pending_.front());
  } else {
    writing_ = false;
    if (ended_) FinishOnce(final_status_);
  }
}

void RunStream::OnCancel() {
  std::lock_guard lock(mu_);
  if (!writing_) FinishOnce(grpc::Status(grpc::StatusCode::CANCELLED, "the client left"));
}

void RunStream::OnDone() {
  observer_->Detach();
  if (on_done_) on_done_();
  delete this;
}

void RunStream::FinishOnce(const grpc::Status& status) {
  if (finished_) return;
  finished_ = true;
  Finish(status);
}

}  // namespace ablation::rpc
