// Telemetry: the pure reduction (mean/min/max, throttle flagging) and the sampler through the
// stand-in NVML.
#include "server/core/gpu/telemetry.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <thread>

#include "tests/support/fake_nvml_env.h"

namespace ablation::core {
namespace {

using ::testing::ElementsAre;
using testing::FakeNvmlTest;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using testing::kFakeUuid;

NvmlSample Sample(double sm, double mem, double power, double temp, uint64_t reasons) {
  NvmlSample s;
  s.sm_mhz = sm;
  s.mem_mhz = mem;
  s.power_w = power;
  s.temp_c = temp;
  s.reasons = reasons;
  return s;
}

TEST(AggregateTelemetryTest, MeanMinMax) {
  v1::Telemetry t =
      AggregateTelemetry({Sample(1980, 3201, 300, 60, 0), Sample(1950, 3201, 400, 62, 0),
                          Sample(1920, 3201, 500, 64, 0)},
                         0);
  EXPECT_TRUE(t.available());
  EXPECT_EQ(t.unavailable_reason(), "");
  EXPECT_DOUBLE_EQ(t.sm_clock_mhz_mean(), 1950);
  EXPECT_DOUBLE_EQ(t.sm_clock_mhz_min(), 1920);
  EXPECT_DOUBLE_EQ(t.sm_clock_mhz_max(), 1980);
  EXPECT_DOUBLE_EQ(t.mem_clock_mhz_mean(), 3201);
  EXPECT_DOUBLE_EQ(t.power_w_mean(), 400);
  EXPECT_DOUBLE_EQ(t.power_w_min(), 300);
  EXPECT_DOUBLE_EQ(t.power_w_max(), 500);
  EXPECT_DOUBLE_EQ(t.temperature_c_mean(), 62);
  EXPECT_THAT(t.throttle_reasons(), IsEmpty());
  EXPECT_EQ(t.throttled_samples(), 0);
}

TEST(AggregateTelemetryTest, ThrottledSamplesAndReasons) {
  using namespace nvml_abi;
  v1::Telemetry t = AggregateTelemetry(
      {
          Sample(1980, 3201, 690, 70, kReasonSwPowerCap),         // power: throttled
          Sample(1980, 3201, 500, 88, kReasonHwThermalSlowdown),  // thermal: throttled
          Sample(1500, 3201, 500, 60, 0),                         // < 90% of 1980: throttled
          Sample(1800, 3201, 500, 60, 0),                         // >= 90%: fine
          Sample(345, 3201, 80, 40, kReasonGpuIdle),              // idle: low by design
          Sample(1980, 3201, 500, 60, kReasonApplicationsClocksSetting),  // information only
      },
      1980);
  EXPECT_EQ(t.throttled_samples(), 3);
  EXPECT_THAT(t.throttle_reasons(),
              ElementsAre("applications_clocks", "sw_power_cap", "hw_thermal"));
}

TEST(AggregateTelemetryTest, NoExpectedClockDisablesTheClockTest) {
  EXPECT_FALSE(IsThrottled(Sample(500, 3201, 100, 40, 0), 0));
  EXPECT_TRUE(IsThrottled(Sample(500, 3201, 100, 40, 0), 1410));
  EXPECT_TRUE(IsThrottled(Sample(1980, 3201, 100, 40, nvml_abi::kReasonHwPowerBrakeSlowdown), 0));
  EXPECT_TRUE(IsThrottled(Sample(1980, 3201, 100, 40, nvml_abi::kReasonHwSlowdown), 0));
  EXPECT_TRUE(IsThrottled(Sample(1980, 3201, 100, 40, nvml_abi::kReasonSwThermalSlowdown), 0));
  EXPECT_FALSE(IsThrottled(Sample(1980, 3201, 100, 40, nvml_abi::kReasonSyncBoost), 0));
}

TEST(AggregateTelemetryTest, MissingQuantitiesAreNamedAndReadAsZero) {
  NvmlSample s;
  s.sm_mhz = 1980;
  s.mem_mhz = 3201;
  v1::Telemetry t = AggregateTelemetry({s}, 0);
  EXPECT_TRUE(t.available());
  EXPECT_EQ(t.power_w_mean(), 0);
  EXPECT_THAT(t.unavailable_reason(),
              HasSubstr("not reported by this GPU: power, temperature, clock-event"));
}

TEST(AggregateTelemetryTest, NoSamplesIsUnavailable) {
  v1::Telemetry t = AggregateTelemetry({}, 0);
  EXPECT_FALSE(t.available());
  EXPECT_THAT(t.unavailable_reason(), HasSubstr("no telemetry samples"));
}

TEST(TelemetrySamplerTest, WithoutNvmlSaysWhy) {
  TelemetrySampler sampler;
  sampler.Start(nullptr, kFakeUuid, 0, "NVML is not available: cannot load libnvidia-ml.so.1");
  v1::Telemetry t = sampler.Stop();
  EXPECT_FALSE(t.available());
  EXPECT_EQ(t.unavailable_reason(), "NVML is not available: cannot load libnvidia-ml.so.1");
  EXPECT_FALSE(LiveTelemetry(nullptr, kFakeUuid, "no driver").available());
}

class TelemetrySamplerFakeTest : public FakeNvmlTest {
 protected:
  int SampleCalls() const {
    auto calls = Calls();
    return int(std::count(calls.begin(), calls.end(), "sample"));
  }
};

TEST_F(TelemetrySamplerFakeTest, SamplesPeriodicallyAndAtStartAndStop) {
  auto nvml = LoadFake();
  ASSERT_NE(nvml, nullptr);
  TelemetrySampler sampler(std::chrono::milliseconds(20));
  sampler.Start(nvml.get(), kFakeUuid, 1980);
  std::this_thread::sleep_for(std::chrono::milliseconds(150));
  v1::Telemetry t = sampler.Stop();
  EXPECT_TRUE(t.available()) << t.unavailable_reason();
  EXPECT_EQ(t.unavailable_reason(), "");
  EXPECT_DOUBLE_EQ(t.sm_clock_mhz_mean(), 1980);
  EXPECT_DOUBLE_EQ(t.mem_clock_mhz_max(), 3201);
  EXPECT_DOUBLE_EQ(t.power_w_mean(), 350.5);
  EXPECT_DOUBLE_EQ(t.temperature_c_min(), 61);
  EXPECT_EQ(t.throttled_samples(), 0);
  EXPECT_GE(SampleCalls(), 3);
  EXPECT_LE(SampleCalls(), 12);
  // No clock was touched by sampling.
  EXPECT_THAT(ClockCalls(), IsEmpty());
}

TEST_F(TelemetrySamplerFakeTest, ShortMeasurementStillHasStartAndStopSamples) {
  auto nvml = LoadFake();
  ASSERT_NE(nvml, nullptr);
  TelemetrySampler sampler(std::chrono::seconds(10));
  sampler.Start(nvml.get(), kFakeUuid, 0);
  v1::Telemetry t = sampler.Stop();
  EXPECT_TRUE(t.available());
  EXPECT_EQ(SampleCalls(), 2);
}

TEST_F(TelemetrySamplerFakeTest, FlagsPowerCappedSamples) {
  setenv("FAKE_NVML_THROTTLE", "0x4", 1);
  auto nvml = LoadFake();
  ASSERT_NE(nvml, nullptr);
  TelemetrySampler sampler(std::chrono::milliseconds(20));
  sampler.Start(nvml.get(), kFakeUuid, 1980);
  std::this_thread::sleep_for(std::chrono::milliseconds(60));
  v1::Telemetry t = sampler.Stop();
  EXPECT_THAT(t.throttle_reasons(), ElementsAre("sw_power_cap"));
  EXPECT_EQ(t.throttled_samples(), SampleCalls());
}

TEST_F(TelemetrySamplerFakeTest, FlagsAClockWellBelowTheExpectedOne) {
  setenv("FAKE_NVML_SM_MHZ", "1500", 1);
  auto nvml = LoadFake();
  ASSERT_NE(nvml, nullptr);
  TelemetrySampler sampler(std::chrono::milliseconds(20));
  sampler.Start(nvml.get(), kFakeUuid, 1980);
  v1::Telemetry t = sampler.Stop();
  EXPECT_THAT(t.throttle_reasons(), IsEmpty());
  EXPECT_EQ(t.throttled_samples(), SampleCalls());
  EXPECT_GT(t.throttled_samples(), 0);
  // Restarting resets what was collected.
  sampler.Start(nvml.get(), kFakeUuid, 1500);
  EXPECT_EQ(sampler.Stop().throttled_samples(), 0);
}

TEST_F(TelemetrySamplerFakeTest, UnknownDeviceIsUnavailableWithTheReason) {
  auto nvml = LoadFake();
  ASSERT_NE(nvml, nullptr);
  TelemetrySampler sampler(std::chrono::milliseconds(20));
  sampler.Start(nvml.get(), "GPU-ffffffff-0000-0000-0000-000000000000", 0);
  v1::Telemetry t = sampler.Stop();
  EXPECT_FALSE(t.available());
  EXPECT_THAT(t.unavailable_reason(), HasSubstr("nvmlDeviceGetHandleByUUID: Not Found"));
}

TEST_F(TelemetrySamplerFakeTest, LiveTelemetryIsOneSample) {
  auto nvml = LoadFake();
  ASSERT_NE(nvml, nullptr);
  v1::Telemetry t = LiveTelemetry(nvml.get(), kFakeUuid, "");
  EXPECT_TRUE(t.available());
  EXPECT_DOUBLE_EQ(t.sm_clock_mhz_mean(), 1980);
  EXPECT_DOUBLE_EQ(t.sm_clock_mhz_min(), t.sm_clock_mhz_max());
  EXPECT_EQ(SampleCalls(), 1);
}

}  // namespace
}  // namespace ablation::core
