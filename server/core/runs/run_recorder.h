// The one place where a run's progress becomes both a stored fact and an event, always in that
// order: what a client saw is on disk. Each run has one recorder, used from its GPU's thread (and,
// before the run starts, from whichever thread cancels or drops it).
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ablation/v1/ablation.pb.h"
#include "common/time.h"
#include "db/store.h"
#include "server/core/base/events.h"
#include "server/core/base/status.h"
#include "server/core/plan/run_plan.h"
#include "server/core/runs/run_observer.h"

namespace ablation::core {

using common::NowMs;  // wall-clock milliseconds since the epoch (common/time.h)

class RunRecorder {
 public:
  /// `events` hears the run's creation, start, measurements and end (the daemon's metrics);
  /// null: NoEvents().
  RunRecorder(db::Store* store, std::shared_ptr<RunObserver> observer,
              DaemonEvents* events = nullptr)
      : store_(store), events_(events ? *events : NoEvents()) {
    if (observer) observers_.push_back(std::move(observer));
  }

  /// Stores the run as queued and remembers its id. Throws (a db error) if the store refuses.
  int64_t Create(const v1::Run& run);
  int64_t run_id() const { return run_id_; }
  /// The store the run is recorded in (what else of the run it keeps: library choices).
  db::Store* store() const { return store_; }

  void Queued(int position);
  /// `schedule` is what will run, in order: (item index, round).
  void Started(const v1::DeviceIdentity& device, const RunPlan& plan,
               const std::vector<std::pair<int, int>>& schedule);
  /// Stores the measurement (with its samples), then emits it without them. Returns its id.
  int64_t Measured(v1::Measurement measurement);
  void Verified(v1::VerifyResult result);

  /// The run ended normally (succeeded, partial or cancelled): stored, a Finished event, OnEnd(ok).
  void Finished(v1::RunState state, int ok, int failed, const std::string& error);
  /// A Verify run ended: stored; OnEnd(status) so that its caller gets the status with the results.
  void VerifyFinished(v1::RunState state, const Status& status);
  /// The run could not go on: stored as failed with `why`, a Failed event, then OnEnd(why).
  void Failed(const Status& why);
  /// Like Failed, but the reason is a status of its own and no Failed event is sent: the stream
  /// ends with that status (for example no permission to lock the clocks).
  void Aborted(const Status& why);
  /// The run never started (cancelled or dropped while queued): stored as cancelled, a Finished
  /// event with state cancelled, then OnEnd(why).
  void CancelledInQueue(const std::string& reason, const Status& why);

  /// After the run ended, later calls do nothing: a run ends once.
  bool ended() const;

  /// Another observer (a client that re-attached with WatchRun) hears the rest of the run: the
  /// Started event again if the run has started, then every later event and the end. False
  /// once the run has ended: the store then has its outcome.
  bool AddObserver(std::shared_ptr<RunObserver> observer);

 private:
  void Emit(const v1::RunEvent& event);
  void EmitEnd(const Status& status);
  void EmitVerified(const v1::VerifyResult& result);
  std::vector<std::shared_ptr<RunObserver>> Observers() const;
  bool EndOnce();

  db::Store* store_;
  DaemonEvents& events_;
  int64_t run_id_ = 0;
  mutable std::mutex mu_;
  bool ended_ = false;                                   ///< guarded by mu_
  std::vector<std::shared_ptr<RunObserver>> observers_;  ///< guarded by mu_
  std::optional<v1::RunEvent> started_;                  ///< guarded by mu_; replayed to watchers
};

}  // namespace ablation::core
