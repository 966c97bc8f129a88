// The regimes' rules (regime.h) on synthetic series: when a GPU running back to back has
// settled, when an idle one has cooled, and when a short window ran into the power cap.
#include "server/core/gpu/regime.h"

#include <gtest/gtest.h>

#include <cmath>

#include "server/core/gpu/nvml.h"

namespace ablation::core {
namespace {

constexpr double kPi = 3.14159265358979323846;

// A clock as an H200's under cuBLAS at the power cap (GPU_HOST.md): 1980 MHz for the first
// chunk, then the cap: a level that creeps from 1440 to 1500 MHz (tau 3 s), with an oscillation
// of +-3% and a period of 1.3 s that dies out (tau 2.5 s).
double CappedClock(double t) {
  if (t < 0.25) return 1980;
  const double level = 1500 - 60 * std::exp(-t / 3.0);
  return level * (1 + 0.03 * std::exp(-t / 2.5) * std::sin(2 * kPi * t / 1.3));
}

TEST(SettleDetector, NotWhileTheClockRampsAndOscillatesThenSettledNearItsLevel) {
  RegimeParams p;  // chunks of 0.25 s, spans of 1 s, 2 s at least, 0.4% on the clock
  SettleDetector d(p);
  double settled_at = -1;
  for (int i = 0; i < 200 && !d.settled(); ++i) {
    const double t = 0.25 * i;
    d.Add({0.25, CappedClock(t + 0.125), 690.0});
    if (d.settled()) settled_at = t + 0.25;
    if (t + 0.25 < 2.0) EXPECT_FALSE(d.settled()) << "before the minimum, at " << t;
  }
  ASSERT_TRUE(d.settled()) << d.Describe();
  // Not during the first seconds: at 3 s two adjacent spans agree within 0.16% by the phase of
  // the oscillation alone, while the level is still 2% below where it goes; three spans do not.
  EXPECT_GT(settled_at, 4.0);
  EXPECT_LT(settled_at, 15.0);
  // The last span's clock is within 1% of where the clock is going.
  EXPECT_NEAR(d.last_span_mhz() / 1500, 1.0, 0.01) << d.Describe();
  EXPECT_LE(d.clock_spread(), p.clock_tolerance);
  EXPECT_EQ(d.Describe().rfind("settled after ", 0), 0u) << d.Describe();
  EXPECT_NE(d.Describe().find("(3 spans of 1 s within "), std::string::npos) << d.Describe();
  EXPECT_NE(d.Describe().find("power 690 W (within 0.00%)"), std::string::npos) << d.Describe();
}

TEST(SettleDetector, AFlatClockWithPowerStillClimbingIsNotSettled) {
  RegimeParams p;
  SettleDetector d(p);
  // 4 s at a flat clock while the power climbs 3% a second (a GPU warming towards its cap).
  for (int i = 0; i < 16; ++i) d.Add({0.25, 1980, 500.0 * (1 + 0.03 * 0.25 * i)});
  EXPECT_FALSE(d.settled()) << d.Describe();
  EXPECT_GT(d.power_spread(), p.power_tolerance);
  // Then the power holds: three spans later, settled.
  for (int i = 0; i < 8; ++i) d.Add({0.25, 1980, 620.0});
  EXPECT_FALSE(d.settled()) << "two spans at 620 W and one still climbing";
  for (int i = 0; i < 4; ++i) d.Add({0.25, 1980, 620.0});
  EXPECT_TRUE(d.settled()) << d.Describe();
}

TEST(SettleDetector, WithoutNvmlTheClockAloneDecides) {
  RegimeParams p;
  SettleDetector d(p);
  for (int i = 0; i < 12; ++i) d.Add({0.25, 1700, std::nullopt});
  EXPECT_TRUE(d.settled());
  EXPECT_EQ(d.Describe().find("power"), std::string::npos) << d.Describe();
}

TEST(SettleDetector, WithoutClocksItCannotTellAndSaysSo) {
  RegimeParams p;
  SettleDetector d(p);
  for (int i = 0; i < 40; ++i) d.Add({0.25, 0, 600.0});
  EXPECT_FALSE(d.settled());
  EXPECT_EQ(d.Describe(),
            "not settled after 10.00 s of GPU time: too few chunks with a clock to compare its "
            "spans");
}

TEST(SettleDetector, SpansAreWholeChunksOfUnevenLength) {
  RegimeParams p;
  p.settle_min_seconds = 0;
  SettleDetector d(p);
  // A long chunk (a kernel of 0.8 s) then short ones: the last span is the chunks that reach 1 s.
  for (int i = 0; i < 5; ++i) d.Add({0.8, 1000, std::nullopt});
  EXPECT_FALSE(d.settled()) << "4.0 s: two spans of two chunks, not three";
  d.Add({0.8, 1000, std::nullopt});
  EXPECT_TRUE(d.settled()) << d.Describe();
  EXPECT_NE(d.Describe().find("after 4.80 s"), std::string::npos) << d.Describe();
}

TEST(SettleDetector, AKernelThatOnlyChangesTheClockSettlesAtItsOwnLevel) {
  // Two windows of the same work at two power levels: each settles where its clock holds, and
  // the detector says so by the clock, not by a time that mixes work and clock.
  RegimeParams p;
  for (double level : {1980.0, 1450.0}) {
    SettleDetector d(p);
    for (int i = 0; i < 12; ++i) d.Add({0.25, level, std::nullopt});
    EXPECT_TRUE(d.settled());
    EXPECT_DOUBLE_EQ(d.last_span_mhz(), level);
  }
}

TEST(CoolDetector, WaitsForTheMinimumTheReasonsAndTheTemperature) {
  RegimeParams p;  // at least 0.3 s idle; within 5 C of the coolest, or flatter than 1 C/s
  CoolDetector d(p, /*coolest_c=*/37);
  // After a back-to-back loop: 60 C falling towards 40 C with a time constant of 0.7 s, the
  // power cap's reason still set for the first 0.5 s.
  auto temp = [](double t) { return 40 + 20 * std::exp(-t / 0.7); };
  double cool_at = -1;
  for (int i = 0; i <= 200 && !d.cool(); ++i) {
    const double t = 0.02 * i;
    const uint64_t reasons = t < 0.5 ? nvml_abi::kReasonSwPowerCap : nvml_abi::kReasonGpuIdle;
    d.Add({t, temp(t), reasons});
    if (d.cool()) cool_at = t;
    if (t < 0.5) EXPECT_FALSE(d.cool()) << t;
  }
  ASSERT_TRUE(d.cool());
  // 42 C (37 + 5) is reached at 0.7 * ln(20 / 2) = 1.61 s; the fall over the last half second
  // is under 1 C/s from 0.7 * ln(41.7) = 2.61 s: the first of the two decides.
  EXPECT_NEAR(cool_at, 1.62, 0.03);
  EXPECT_EQ(d.Describe(), "cooled in 1.62 s to 42 C (coolest seen 37 C), no clock-event reason");
}

TEST(CoolDetector, AnUnknownCoolestTemperatureWaitsForTheFall) {
  RegimeParams p;
  CoolDetector d(p, std::nan(""));
  auto temp = [](double t) { return 40 + 20 * std::exp(-t / 0.7); };
  double cool_at = -1;
  for (int i = 0; i <= 400 && !d.cool(); ++i) {
    const double t = 0.02 * i;
    d.Add({t, temp(t), nvml_abi::kReasonGpuIdle});
    if (d.cool()) cool_at = t;
  }
  // Over the last half second the fall (T(t - 0.5) - T(t)) / 0.5 is under 1 C/s from 2.61 s.
  EXPECT_GT(cool_at, 2.3);
  EXPECT_LT(cool_at, 2.9);
}

TEST(CoolDetector, HeldDownIsSaidAndGivingUpComesAtTheMaximum) {
  RegimeParams p;
  p.cool_max_seconds = 1;
  CoolDetector d(p, 37);
  d.Add({0.5, 80.0, nvml_abi::kReasonHwThermalSlowdown});
  EXPECT_FALSE(d.cool());
  EXPECT_FALSE(d.gave_up());
  EXPECT_EQ(d.Describe(), "not cool after 0.50 s idle: clock held down (hw_thermal)");
  d.Add({1.0, 80.0, nvml_abi::kReasonHwThermalSlowdown});
  EXPECT_TRUE(d.gave_up());
}

TEST(CoolDetector, WithoutNvmlTheIdleTimeAloneDecides) {
  RegimeParams p;
  CoolDetector d(p, std::nan(""));
  d.Add({0.1, std::nullopt, std::nullopt});
  EXPECT_FALSE(d.cool());
  d.Add({0.3, std::nullopt, std::nullopt});
  EXPECT_TRUE(d.cool());
  EXPECT_EQ(d.Describe(), "cooled in 0.30 s (no NVML: by idle time alone)");
}

TEST(CheckBurstWindow, AWindowThatEndedBeforeTheCapPasses) {
  EXPECT_EQ(CheckBurstWindow({1810, 1812, 1808, 1811, 1809, 1810, 1812, 1806}, 0.015), "");
  EXPECT_EQ(CheckBurstWindow({1810, 1500, 1400}, 0.015), "") << "too few samples to tell";
  // NaN (a probe pair on two SMs) is skipped, not counted as a drop.
  EXPECT_EQ(CheckBurstWindow({1810, std::nan(""), 1811, 1809, 1810, 1812}, 0.015), "");
}

TEST(CheckBurstWindow, AClockThatFellInsideTheWindowFails) {
  // As on the H200: ~1980 (NVML) for the first 50 ms, then the cap: 1575.
  std::vector<double> clocks(16, 1810);
  for (size_t i = 12; i < 16; ++i) clocks[i] = 1440;
  EXPECT_EQ(CheckBurstWindow(clocks, 0.015),
            "the clock fell 20.4% within the window (1810 -> 1440 MHz): the power cap engaged "
            "before it ended");
}

}  // namespace
}  // namespace ablation::core
