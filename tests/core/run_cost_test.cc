// The per-run totals the daemon logs at the end of an ablation run (run_cost.h): sums of the
// rows' Measurement.cost and wall time, the daemon's steps between rows, and the ratio of the
// run's wall time to the GPU time it sampled.
#include "server/core/run_cost.h"

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
            "4 measurements: 2.6 s of wall time for 1.2 s of sampled GPU time (2.133x); in the "
            "worker: setup 0.02 s, warm-up 0.03 s, sampling 1.23 s, other 0.19 s; in the daemon: "
            "verification 0.20 s, telemetry and worker calls 0.33 s, storing 0.01 s, profiling "
            "0.50 s, the rest 0.05 s; 2 of 4 on resident inputs");
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
