// The write side of one RunAblation or WatchRun stream, and the observer the core reports the
// run to. The core holds the observer through a shared_ptr and may report after the client went
// away: the stream then drops what it is told. A run outlives its stream: a client that
// disconnects (or detaches) leaves the run going; only CancelRun stops it.
#pragma once

#include <deque>
#include <functional>
#include <memory>
#include <mutex>

#include <grpcpp/grpcpp.h>

#include "ablation/v1/ablation.pb.h"
#include "server/core/queries/queries.h"
#include "server/core/runs/run_manager.h"
#include "server/core/runs/run_observer.h"

namespace ablation::rpc {

class RunStream final : public grpc::ServerWriteReactor<v1::RunEvent> {
 public:
  /// Events one stream may hold undelivered. A client that reads slower than the run reports
  /// (or never reads) is ended with RESOURCE_EXHAUSTED once this many wait, instead of queuing
  /// without bound (about 1.5 KB an event: 500 idle watchers of a 5,000-measurement run held
  /// 3.6 GB before). 256 covers a burst of a whole round of a ladder; a reader that keeps up
  /// never gets near it.
  static constexpr size_t kMaxPendingEvents = 256;

  /// Called once when the run ends (after the core's OnEnd), whether or not a client listens.
  using OnRunEnd = std::function<void()>;

  /// Submits the run; the reactor owns itself until OnDone. `requested_by` is the caller's
  /// identity; `on_end` runs when the run ends, or at once when it is refused.
  static RunStream* Start(core::RunManager* runs, const v1::RunRequest& request,
                          const std::string& requested_by, OnRunEnd on_end);
  /// Follows a run already queued or running; a run that has ended gets its Finished event from
  /// the store, one that does not exist NOT_FOUND.
  /// `on_done` runs when gRPC is done with the stream (the daemon's count of watchers).
  static RunStream* Watch(core::RunManager* runs, core::Queries* queries, int64_t run_id,
                          std::function<void()> on_done = {});
  /// Refused before anything started.
  static RunStream* Refuse(const grpc::Status& status);

  void OnWriteDone(bool ok) override;
  void OnCancel() override;
  void OnDone() override;

 private:
  class Observer;
  RunStream() = default;

  void Event(const v1::RunEvent& event);
  void End(const core::Status& status);
  static void AnswerFromStore(std::shared_ptr<Observer> observer, core::RunManager* runs,
                              core::Queries* queries, int64_t run_id, int tries);
  void FinishOnce(const grpc::Status& status);

  std::shared_ptr<Observer> observer_;
  std::recursive_mutex mu_;
  std::deque<v1::RunEvent> pending_;
  bool writing_ = false;
  bool ended_ = false;     ///< the core said the run is over
  bool told_end_ = false;  ///< a finished or failed event was queued: the stream ends ok
  bool finished_ = false;
  int64_t run_id_ = 0;  ///< from the first event that names it, for the resume hint
  size_t dropped_ = 0;  ///< events not delivered after the stream fell behind
  grpc::Status final_status_ = grpc::Status::OK;
  std::function<void()> on_done_;
};

}  // namespace ablation::rpc
