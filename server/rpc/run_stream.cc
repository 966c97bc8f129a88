#include "server/rpc/run_stream.h"

#include <spdlog/spdlog.h>

#include "server/rpc/grpc_status.h"

namespace ablation::rpc {

// What the core holds: forwards to the stream until the stream is done, then drops.
class RunStream::Observer final : public core::RunObserver {
 public:
  explicit Observer(RunStream* stream) : stream_(stream) {}
  void OnEvent(const v1::RunEvent& event) override {
    std::lock_guard lock(mu_);
    if (stream_) stream_->Event(event);
  }
  void OnEnd(const core::Status& status) override {
    std::lock_guard lock(mu_);
    if (stream_) stream_->End(status);
  }
  void Detach() {
    std::lock_guard lock(mu_);
    stream_ = nullptr;
  }

 private:
  std::mutex mu_;
  RunStream* stream_;
};

RunStream* RunStream::Start(core::RunManager* runs, const v1::RunRequest& request,
                            const std::string& peer) {
  auto* stream = new RunStream(runs);
  stream->observer_ = std::make_shared<Observer>(stream);
  int64_t id = 0;
  // The core may report the Queued event from inside SubmitRun.
  core::Status st = runs->SubmitRun(request, peer, stream->observer_, &id);
  std::lock_guard lock(stream->mu_);
  if (!st.ok()) {
    stream->FinishOnce(ToGrpc(st));
  } else {
    stream->run_id_ = id;
  }
  return stream;
}

void RunStream::Event(const v1::RunEvent& event) {
  std::lock_guard lock(mu_);
  if (finished_) return;
  if (event.has_finished() || event.has_failed()) told_end_ = true;
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
  int64_t cancel = 0;
  core::RunManager* runs = runs_;  // `this` may be gone once the lock is released
  {
    std::lock_guard lock(mu_);
    pending_.pop_front();
    if (!ok) {
      // The client is gone: stop the run at its next measurement boundary.
      writing_ = false;
      cancel = RunToCancelLocked();
      FinishOnce(grpc::Status(grpc::StatusCode::CANCELLED, "client went away"));
    } else if (!pending_.empty()) {
      StartWrite(&pending_.front());
    } else {
      writing_ = false;
      if (ended_) FinishOnce(final_status_);
    }
  }
  CancelRun(runs, cancel);
}

void RunStream::OnCancel() {
  int64_t cancel = 0;
  core::RunManager* runs = runs_;
  {
    std::lock_guard lock(mu_);
    cancel = RunToCancelLocked();
    if (!writing_) FinishOnce(grpc::Status(grpc::StatusCode::CANCELLED, "cancelled by client"));
  }
  CancelRun(runs, cancel);
}

void RunStream::OnDone() {
  observer_->Detach();
  delete this;
}

int64_t RunStream::RunToCancelLocked() { return run_id_ > 0 && !ended_ ? run_id_ : 0; }

// Outside the stream's lock: the core takes its queue locks and may report to this stream.
void RunStream::CancelRun(core::RunManager* runs, int64_t run_id) {
  if (run_id == 0) return;
  v1::CancelRunResponse response;
  (void)runs->Cancel(run_id, &response);
  spdlog::info("run {}: client disconnected, cancelling", run_id);
}

void RunStream::FinishOnce(const grpc::Status& status) {
  if (finished_) return;
  finished_ = true;
  Finish(status);
}

}  // namespace ablation::rpc
