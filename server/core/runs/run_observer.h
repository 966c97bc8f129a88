// What a run tells whoever asked for it. The core calls these from its own threads; the rpc layer
// turns them into a stream (RunAblation) or one answer (Verify).
#pragma once

#include "ablation/v1/ablation.pb.h"
#include "server/core/base/status.h"

namespace ablation::core {

class RunObserver {
 public:
  virtual ~RunObserver() = default;
  /// Queued (again, with each new position), started, each measurement, finished or failed.
  /// Every event that reports a stored fact is sent after the fact was committed.
  virtual void OnEvent(const v1::RunEvent& event) = 0;
  /// One verification of a Verify run, after it was stored.
  virtual void OnVerified(const v1::VerifyResult& result) { (void)result; }
  /// The run is over; nothing follows. `status` is ok, or what ended it when that is a status of
  /// its own (the clocks could not be locked, the daemon is shutting down, a cancelled Verify).
  virtual void OnEnd(const Status& status) = 0;
};

}  // namespace ablation::core
