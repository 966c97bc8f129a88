// The per-run totals the daemon logs at the end of an ablation run (run_cost.h): sums of the
// rows' Measurement.cost and wall time, the daemon's steps between rows, and the ratio of the
// run's wall time to the GPU time it sampled.
#include "server/core/runs/run_cost.h"

#include <gtest/gtest.h>

namespace ablation::core {
namespace {

v1::Measurement Row(double wall, double sampled, bool reused) {
  v1::Measurement m;
  m.set_wall_seconds(wall);
  m.mutable_stats()->set_total_seconds(sampled);
  v1::Cost* c = m.mutable_cost();
  c->set_worker_seconds(wall - 0.01);
  c->set_setup_seconds(reused ? 0 : 0.02);
  c->set_warmup_seconds(0.01);
  c->set_sampling_seconds(sampled + 0.01);
  c->set_inputs_reused(reused);
  return m;
}

TEST(RunCostTest, SumsWhereTheWallTimeWentAgainstTheSampledGpuTime) {
  RunCost cost;
  cost.Add(Row(0.5, 0.4, false));
  cost.Add(Row(0.5, 0.4, true));
  v1::Measurement verified = Row(0.5, 0.4, true);
  verified.set_wall_seconds(0.7);  // the verification's 0.2 s on top
  verified.mutable_cost()->set_verify_seconds(0.2);
  cost.Add(verified);
  v1::Measurement failed;  // a worker that died: its wall time, nothing else known
  failed.set_wall_seconds(0.3);
  cost.Add(failed);
  cost.AddStoring(0.004);
  cost.AddStoring(0.006);
  cost.AddProfiling(0.5);
  EXPECT_EQ(cost.measurements(), 4);
  EXPECT_DOUBLE_EQ(cost.sampled_gpu_seconds(), 1.2);
  EXPECT_DOUBLE_EQ(cost.measurement_wall_seconds(), 2.0);
  // 2.0 s in the rows, 0.01 s storing, 0.5 s profiling, 0.05 s unaccounted: 2.56 s of run. The
  // worker's 1.47 s: setup 0.02, warm-up 0.03, sampling 1.23, the rest 0.19; the daemon's share
  // of the rows: 2.0 - 1.47 - 0.2 (verification) = 0.33.
  EXPECT_EQ(cost.Summary(2.56),
            "4 measurements: 2.6 s of wall time for 1.2 s of sampled GPU time (2.133x); the "
            "regime: settling 0.00 s, cooling 0.00 s, solo spans 0.00 s; in the worker: setup 0.02 "
            "s, warm-up "
            "0.03 s, sampling 1.23 s, other 0.19 s; in the daemon: verification 0.20 s, "
            "telemetry and worker calls 0.33 s, storing 0.01 s, profiling 0.50 s, the rest "
            "0.05 s; 2 of 4 on resident inputs");
}

TEST(RunCostTest, TheRegimesSettlingAndCoolingAreNamedAndCoolingIsTheDaemons) {
  RunCost cost;
  // Sustained: 4.0 s of which the worker's 3.9 s are 2.0 s of settling chunks and the window.
  v1::Measurement settled = Row(4.0, 1.5, true);
  settled.mutable_cost()->set_settle_seconds(2.0);
  cost.Add(settled);
  // Burst: 3.0 s of which 2.5 s idle in the daemon between short windows, 0.45 s in the worker.
  v1::Measurement burst;
  burst.set_wall_seconds(3.0);
  burst.mutable_stats()->set_total_seconds(0.1);
  burst.mutable_cost()->set_worker_seconds(0.45);
  burst.mutable_cost()->set_sampling_seconds(0.4);
  burst.mutable_cost()->set_cool_seconds(2.5);
  cost.Add(burst);
  // The worker's 4.44 s: setup 0, warm-up 0.01, sampling 1.91, the rest 2.52 (the settled row's
  // worker time beyond its sampling); the daemon's: 7.0 - 4.44 - 2.5 (cooling) = 0.06.
  EXPECT_EQ(cost.Summary(7.0),
            "2 measurements: 7.0 s of wall time for 1.6 s of sampled GPU time (4.375x); the "
            "regime: settling 2.00 s, cooling 2.50 s, solo spans 0.00 s; in the worker: setup 0.00 "
            "s, warm-up "
            "0.01 s, sampling 1.91 s, other 2.52 s; in the daemon: verification 0.00 s, "
            "telemetry and worker calls 0.06 s, storing 0.00 s, profiling 0.00 s, the rest "
            "0.00 s; 1 of 2 on resident inputs");
}

TEST(RunCostTest, ARunWithoutSamplesHasNoRatio) {
  RunCost cost;
  v1::Measurement failed;
  failed.set_wall_seconds(0.1);
  cost.Add(failed);
  EXPECT_NE(cost.Summary(0.1).find("(no GPU time)"), std::string::npos) << cost.Summary(0.1);
}

}  // namespace
}  // namespace ablation::core
