// The write side of one RunAblation stream, and the observer the core reports the run to. The
// core holds the observer through a shared_ptr and may report after the client went away: the
// stream then drops what it is told.
#pragma once

#include <deque>
#include <memory>
#include <mutex>

#include <grpcpp/grpcpp.h>

#include "ablation/v1/ablation.pb.h"
#include "server/core/run_manager.h"
#include "server/core/run_observer.h"

namespace ablation::rpc {

class RunStream final : public grpc::ServerWriteReactor<v1::RunEvent> {
 public:
  /// Submits the run; the reactor owns itself until OnDone.
  static RunStream* Start(core::RunManager* runs, const v1::RunRequest& request,
                          const std::string& peer);

  void OnWriteDone(bool ok) override;
  void OnCancel() override;
  void OnDone() override;

 private:
  class Observer;
  explicit RunStream(core::RunManager* runs) : runs_(runs) {}

  void Event(const v1::RunEvent& event);
  void End(const core::Status& status);
  int64_t RunToCancelLocked();
  static void CancelRun(core::RunManager* runs, int64_t run_id);
  void FinishOnce(const grpc::Status& status);

  core::RunManager* runs_;
  std::shared_ptr<Observer> observer_;
  std::recursive_mutex mu_;
  std::deque<v1::RunEvent> pending_;
  bool writing_ = false;
  bool ended_ = false;     ///< the core said the run is over
  bool told_end_ = false;  ///< a finished or failed event was queued: the stream ends ok
  bool finished_ = false;
  int64_t run_id_ = 0;
  grpc::Status final_status_ = grpc::Status::OK;
};

}  // namespace ablation::rpc
