#include "server/core/runs/run_recorder.h"

#include <chrono>

namespace ablation::core {

int64_t RunRecorder::Create(const v1::Run& run) {
  run_id_ = store_->CreateRun(run);
  events_.RunCreated(run_id_, run.kind(), run.device().index());
  return run_id_;
}

bool RunRecorder::ended() const {
  std::lock_guard lock(mu_);
  return ended_;
}

bool RunRecorder::EndOnce() {
  std::lock_guard lock(mu_);
  if (ended_) return false;
  ended_ = true;
  return true;
}

std::vector<std::shared_ptr<RunObserver>> RunRecorder::Observers() const {
  std::lock_guard lock(mu_);
  return observers_;
}

// Observers are called outside mu_: they take their own locks and may call back into the core.
void RunRecorder::Emit(const v1::RunEvent& event) {
  for (const auto& o : Observers()) o->OnEvent(event);
}

void RunRecorder::EmitEnd(const Status& status) {
  for (const auto& o : Observers()) o->OnEnd(status);
}

void RunRecorder::EmitVerified(const v1::VerifyResult& result) {
  for (const auto& o : Observers()) o->OnVerified(result);
}

bool RunRecorder::AddObserver(std::shared_ptr<RunObserver> observer) {
  std::optional<v1::RunEvent> started;
  {
    std::lock_guard lock(mu_);
    if (ended_) return false;
    observers_.push_back(observer);
    started = started_;
  }
  if (started) observer->OnEvent(*started);
  return true;
}

void RunRecorder::Queued(int position) {
  v1::RunEvent ev;
  ev.mutable_queued()->set_run_id(run_id_);
  ev.mutable_queued()->set_position(position);
  Emit(ev);
}

void RunRecorder::Started(const v1::DeviceIdentity& device, const RunPlan& plan,
                          const std::vector<std::pair<int, int>>& schedule) {
  store_->MarkRunStarted(run_id_, device, NowMs());
  events_.RunStarted(run_id_, device, plan.clocks.lock, plan.clocks.target.sm_mhz,
                     plan.clocks.target.mem_mhz);
  v1::RunEvent ev;
  auto* started = ev.mutable_started();
  started->set_run_id(run_id_);
  *started->mutable_device() = device;
  started->set_total(int(schedule.size()));
  for (const auto& [index, round] : schedule) {
    const PlannedMeasurement& item = plan.items[size_t(index)];
    v1::PlannedMeasurement* planned = started->add_plan();
    planned->set_variant(item.variant->name);
    planned->set_dtype(std::string(kernels::ToString(item.problem.dtype)));
    planned->mutable_shape()->set_m(item.problem.m);
    planned->mutable_shape()->set_n(item.problem.n);
    planned->mutable_shape()->set_k(item.problem.k);
  }
  {
    std::lock_guard lock(mu_);
    started_ = ev;
  }
  Emit(ev);
}

int64_t RunRecorder::Measured(v1::Measurement measurement) {
  measurement.set_run_id(run_id_);
  if (measurement.created_at_ms() == 0) measurement.set_created_at_ms(NowMs());
  measurement.set_id(store_->InsertMeasurement(measurement));
  events_.Measured(run_id_, measurement);
  v1::RunEvent ev;
  *ev.mutable_measurement() = std::move(measurement);
  // The stream carries statistics, not samples (GetRun and QueryMeasurements have them): a
  // sustained window's thousands of samples made each event tens of KB, times every watcher.
  ev.mutable_measurement()->clear_sample_ms();
  ev.mutable_measurement()->clear_sample_cycles();
  ev.mutable_measurement()->clear_sample_sm_mhz();
  ev.mutable_measurement()->clear_solo_sample_ms();
  Emit(ev);
  return ev.measurement().id();
}

void RunRecorder::Verified(v1::VerifyResult result) {
  result.set_run_id(run_id_);
  if (result.created_at_ms() == 0) result.set_created_at_ms(NowMs());
  result.set_id(store_->InsertVerification(result));
  events_.Verified(result);
  EmitVerified(result);
}

void RunRecorder::Finished(v1::RunState state, int ok, int failed, const std::string& error) {
  if (!EndOnce()) return;
  store_->FinishRun(run_id_, state, error, NowMs());
  events_.RunEnded(run_id_, state);
  v1::RunEvent ev;
  auto* fin = ev.mutable_finished();
  fin->set_run_id(run_id_);
  fin->set_state(state);
  fin->set_ok(ok);
  fin->set_failed(failed);
  Emit(ev);
  EmitEnd(Status::Ok());
}

void RunRecorder::VerifyFinished(v1::RunState state, const Status& status) {
  if (!EndOnce()) return;
  store_->FinishRun(run_id_, state, status.ok() ? "" : status.message(), NowMs());
  events_.RunEnded(run_id_, state);
  EmitEnd(status);
}

void RunRecorder::Failed(const Status& why) {
  if (!EndOnce()) return;
  // The store may be what failed: the client still hears why.
  try {
    store_->FinishRun(run_id_, v1::RUN_STATE_FAILED, why.message(), NowMs());
  } catch (...) {
  }
  events_.RunEnded(run_id_, v1::RUN_STATE_FAILED);
  v1::RunEvent ev;
  ev.mutable_failed()->set_run_id(run_id_);
  ev.mutable_failed()->set_reason(why.message());
  Emit(ev);
  EmitEnd(why);
}

void RunRecorder::Aborted(const Status& why) {
  if (!EndOnce()) return;
  store_->FinishRun(run_id_, v1::RUN_STATE_FAILED, why.message(), NowMs());
  events_.RunEnded(run_id_, v1::RUN_STATE_FAILED);
  EmitEnd(why);
}

void RunRecorder::CancelledInQueue(const std::string& reason, const Status& why) {
  if (!EndOnce()) return;
  store_->FinishRun(run_id_, v1::RUN_STATE_CANCELLED, reason, NowMs());
  events_.RunEnded(run_id_, v1::RUN_STATE_CANCELLED);
  v1::RunEvent ev;
  ev.mutable_finished()->set_run_id(run_id_);
  ev.mutable_finished()->set_state(v1::RUN_STATE_CANCELLED);
  Emit(ev);
  EmitEnd(why);
}

}  // namespace ablation::core
