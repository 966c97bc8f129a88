#include "server/worker/timing_stats.h"

#include <cmath>
#include <vector>

#include "server/worker/sampling.h"

namespace ablation::worker {

void SetStatsFromSamples(::ablation::worker::v1::MeasureResult* result) {
  const std::vector<double> samples(result->sample_ms().begin(), result->sample_ms().end());
  const SampleStats s = ComputeStats(samples);
  ::ablation::v1::TimingStats* t = result->mutable_stats();
  t->set_median_ms(s.median_ms);
  t->set_mean_ms(s.mean_ms);
  t->set_stddev_ms(s.stddev_ms);
  t->set_min_ms(s.min_ms);
  t->set_max_ms(s.max_ms);
  t->set_q1_ms(s.q1_ms);
  t->set_q3_ms(s.q3_ms);
  t->set_samples(int32_t(s.count));
  // Fewer than two samples say nothing about the noise: 0, with the count beside it, because the
  // stored column and JSON have no infinity.
  t->set_noise(std::isfinite(s.noise) ? s.noise : 0.0);
  t->set_total_seconds(s.sum_ms / 1e3);
}

}  // namespace ablation::worker
