#include "server/protocol/window_stats.h"

#include <cmath>
#include <limits>
#include <vector>

#include "server/protocol/clocks.h"
#include "server/protocol/sampling.h"

namespace ablation::protocol {

namespace apb = ::ablation::v1;

apb::L2Mode RequestedL2Mode(const apb::TimingOptions& timing) {
  if (timing.hot_l2()) return apb::L2_MODE_HOT;
  return timing.flush_l2() ? apb::L2_MODE_COLD : apb::L2_MODE_COLD_ROTATED;
}

void SetSampleClocks(::ablation::worker::v1::MemberResult* result,
                     const std::vector<double>& sm_mhz) {
  result->clear_sample_cycles();
  result->clear_sample_sm_mhz();
  if (int(sm_mhz.size()) != result->sample_ms_size()) return;
  bool any = false;
  for (double f : sm_mhz) any = any || std::isfinite(f);
  if (!any) return;
  for (size_t i = 0; i < sm_mhz.size(); ++i) {
    const double f =
        std::isfinite(sm_mhz[i]) ? sm_mhz[i] : std::numeric_limits<double>::quiet_NaN();
    result->add_sample_sm_mhz(f);
    result->add_sample_cycles(SampleCycles(result->sample_ms(int(i)), f));
  }
}

void SetStatsFromSamples(::ablation::worker::v1::MemberResult* result, const ClockBounds& clocks) {
  const std::vector<double> samples(result->sample_ms().begin(), result->sample_ms().end());
  const SampleStats s = ComputeStats(samples);
  apb::TimingStats* t = result->mutable_stats();
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

  const ClockStats c = ComputeClockStats(
      std::vector<double>(result->sample_cycles().begin(), result->sample_cycles().end()),
      std::vector<double>(result->sample_sm_mhz().begin(), result->sample_sm_mhz().end()),
      clocks.max_sm_mhz, clocks.low_clock_fraction);
  t->clear_median_cycles();
  t->clear_median_sm_mhz();
  t->clear_low_clock_samples();
  if (c.usable == 0) return;  // unset, not 0: the GPU could not tell
  t->set_median_cycles(c.median_cycles);
  t->set_median_sm_mhz(c.median_sm_mhz);
  if (c.low_clock_samples >= 0) t->set_low_clock_samples(int32_t(c.low_clock_samples));
}

void AppendSamples(const ::ablation::worker::v1::MemberResult& more,
                   ::ablation::worker::v1::MemberResult* into, const ClockBounds& clocks) {
  const int before = into->sample_ms_size();
  const bool had_clocks = into->sample_sm_mhz_size() == before && before > 0;
  const bool more_clocks = more.sample_sm_mhz_size() == more.sample_ms_size();
  std::vector<double> mhz;
  if (had_clocks || more_clocks) {
    constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
    for (int i = 0; i < before; ++i) mhz.push_back(had_clocks ? into->sample_sm_mhz(i) : kNaN);
    for (int i = 0; i < more.sample_ms_size(); ++i)
      mhz.push_back(more_clocks ? more.sample_sm_mhz(i) : kNaN);
  }
  for (double ms : more.sample_ms()) into->add_sample_ms(ms);
  SetSampleClocks(into, mhz);
  SetStatsFromSamples(into, clocks);
}

void SetWindowTotals(::ablation::worker::v1::MeasureResult* result) {
  int64_t cycles = -1;
  double ms = 0, weighted = 0, clocked_ms = 0;
  for (const auto& m : result->members()) {
    if (m.sample_ms_size() == 0) continue;
    cycles = cycles < 0 ? m.sample_ms_size() : std::min<int64_t>(cycles, m.sample_ms_size());
    for (int i = 0; i < m.sample_ms_size(); ++i) {
      ms += m.sample_ms(i);
      if (i < m.sample_sm_mhz_size() && std::isfinite(m.sample_sm_mhz(i))) {
        weighted += m.sample_sm_mhz(i) * m.sample_ms(i);
        clocked_ms += m.sample_ms(i);
      }
    }
  }
  result->set_cycles(int32_t(std::max<int64_t>(cycles, 0)));
  result->set_gpu_seconds(ms / 1e3);
  result->set_sm_mhz(clocked_ms > 0 ? weighted / clocked_ms : 0);
}

}  // namespace ablation::protocol
