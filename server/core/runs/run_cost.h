// Where a run's wall time went, summed over its measurements (Measurement.cost and wall_seconds)
// and the daemon's steps between them, for the line the daemon logs at the end of every
// ablation run. The same sums are in the database's run_cost view (db/schema.md).
#pragma once

#include <string>

#include "ablation/v1/ablation.pb.h"

namespace ablation::core {

class RunCost {
 public:
  /// One measurement, as it is stored.
  void Add(const v1::Measurement& m);
  /// Daemon time outside the measurements: storing and emitting a row, a profile.
  void AddStoring(double seconds) { storing_ += seconds; }
  void AddProfiling(double seconds) { profiling_ += seconds; }

  int measurements() const { return measurements_; }
  double sampled_gpu_seconds() const { return sampled_; }
  double measurement_wall_seconds() const { return wall_; }

  /// "387 measurements: 71.2 s of wall time for 66.0 s of sampled GPU time (1.079x); the
  /// regime: settling 12.0 s, cooling 0 s, solo spans 40.1 s (their chunks are also in the
  /// worker's sampling); in the worker: setup 0.4 s, warm-up 2.1 s, sampling
  /// 67.2 s (settling's chunks included), other 0.1 s; in the daemon:
  /// verification 0 s, telemetry and worker calls 0.9 s, storing 0.4 s, profiling 0 s, the
  /// rest 0.1 s; 386 of 387 on resident inputs". `run_seconds`: the run's own wall time, from
  /// its first measurement to its end.
  std::string Summary(double run_seconds) const;

 private:
  int measurements_ = 0, reused_ = 0;
  double wall_ = 0, sampled_ = 0, worker_ = 0, setup_ = 0, warmup_ = 0, sampling_ = 0, verify_ = 0,
         storing_ = 0, profiling_ = 0, settle_ = 0, cool_ = 0, solo_ = 0;
};

}  // namespace ablation::core
