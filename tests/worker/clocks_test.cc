// The SM clock of a sample from its probes (clocks.h): the ratio of the counters, and the pairs
// that cannot be used.
#include "server/protocol/clocks.h"

#include <gtest/gtest.h>

#include <cmath>

namespace ablation::worker {
namespace {

protocol::ClockProbe Probe(uint64_t clock, uint64_t timer_ns, uint32_t smid) {
  protocol::ClockProbe p;
  p.clock = clock;
  p.timer_ns = timer_ns;
  p.smid = smid;
  return p;
}

TEST(Clocks, EffectiveClockIsCyclesOverTime) {
  // 198000 cycles in 100 us: 1980 MHz, whatever the counters' origins.
  EXPECT_DOUBLE_EQ(
      protocol::EffectiveSmMhz(Probe(5'000, 7'000'000, 3), Probe(203'000, 7'100'000, 3)), 1980);
  EXPECT_DOUBLE_EQ(protocol::EffectiveSmMhz(Probe(0, 0, 0), Probe(1'400, 1'000, 0)), 1400);
}

TEST(Clocks, PairsThatCannotBeUsed) {
  // Each SM's %clock64 counts from its own origin: a pair from two SMs says nothing.
  EXPECT_TRUE(std::isnan(protocol::EffectiveSmMhz(Probe(5'000, 0, 3), Probe(203'000, 100'000, 4))));
  EXPECT_TRUE(std::isnan(protocol::EffectiveSmMhz(Probe(5'000, 100, 3), Probe(203'000, 100, 3))));
  EXPECT_TRUE(std::isnan(protocol::EffectiveSmMhz(Probe(5'000, 100, 3), Probe(4'000, 200, 3))));
}

TEST(Clocks, CyclesOfASample) {
  EXPECT_DOUBLE_EQ(protocol::SampleCycles(2, 1980), 3.96e6);  // 2 ms at 1.98 GHz
  EXPECT_DOUBLE_EQ(protocol::SampleCycles(0.5, 1000), 5e5);
}

TEST(Clocks, StatsCountOnlyUsableSamples) {
  const double nan = std::nan("");
  protocol::ClockStats s =
      protocol::ComputeClockStats({1e6, nan, 3e6}, {1000, nan, 1500}, 1980, 0.75);
  EXPECT_EQ(s.usable, 2);
  EXPECT_EQ(s.median_cycles, 2e6);
  EXPECT_EQ(s.median_sm_mhz, 1250);
  EXPECT_EQ(s.low_clock_samples, 1);  // 1000 < 1485; 1500 is not
  EXPECT_EQ(protocol::ComputeClockStats({1e6}, {1000}, 0, 0.75).low_clock_samples, -1)
      << "max unknown";
  EXPECT_EQ(protocol::ComputeClockStats({1e6}, {1485}, 1980, 0).low_clock_samples, 0)
      << "at the bound";
  EXPECT_EQ(protocol::ComputeClockStats({}, {}, 1980, 0).usable, 0);
}

}  // namespace
}  // namespace ablation::worker
