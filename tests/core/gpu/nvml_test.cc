// Nvml against the stand-in library: loading, sampling, clock tables, lock/reset and the one
// place that turns NVML's return codes into statuses. Never loads the real NVML for a lock.
#include "server/core/gpu/nvml.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/support/fake_nvml_env.h"

namespace ablation::core {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using testing::FakeNvmlTest;
using ::testing::HasSubstr;
using testing::kFakeUuid;
using ::testing::Not;

TEST(NvmlLoadTest, MissingLibrarySaysWhy) {
  std::string why;
  auto nvml = Nvml::Load("/nonexistent/libnvidia-ml.so.1", &why);
  EXPECT_EQ(nvml, nullptr);
  EXPECT_THAT(why, AllOf(HasSubstr("NVML is not available"),
                         HasSubstr("cannot load /nonexistent/libnvidia-ml.so.1")));
}

TEST(NvmlLoadTest, LibraryWithoutNvmlSymbolsIsRefused) {
  // libdl/libc is a shared library, but no NVML: the missing function is named.
  std::string why;
  auto nvml = Nvml::Load("libc.so.6", &why);
  EXPECT_EQ(nvml, nullptr);
  EXPECT_THAT(why, HasSubstr("lacks nvmlInit_v2"));
}

TEST(ReasonNamesTest, NamesEveryKnownBitWithoutCommas) {
  EXPECT_THAT(ReasonNames(0x1FF), ElementsAre("gpu_idle", "applications_clocks", "sw_power_cap",
                                              "hw_slowdown", "sync_boost", "sw_thermal",
                                              "hw_thermal", "hw_power_brake", "display_clocks"));
  EXPECT_THAT(ReasonNames(0), ElementsAre());
  EXPECT_THAT(ReasonNames(0x204), ElementsAre("sw_power_cap", "reason_0x200"));
  for (const auto& name : ReasonNames(~uint64_t{0})) EXPECT_THAT(name, Not(HasSubstr(",")));
}

TEST(ReasonNamesTest, IdleIsNotThrottling) {
  EXPECT_EQ(kThrottleReasonsMask & nvml_abi::kReasonGpuIdle, 0u);
  EXPECT_EQ(kThrottleReasonsMask, 0x4u | 0x8u | 0x20u | 0x40u | 0x80u);
}

class NvmlTest : public FakeNvmlTest {};

TEST_F(NvmlTest, InitFailureSaysWhy) {
  setenv("FAKE_NVML_INIT_FAIL", "1", 1);
  std::string why;
  EXPECT_EQ(Nvml::Load(FAKE_NVML_PATH, &why), nullptr);
  EXPECT_THAT(why, HasSubstr("nvmlInit_v2: Driver Not Loaded"));
}

TEST_F(NvmlTest, LoadsInitialisesAndShutsDown) {
  {
    auto nvml = LoadFake();
    ASSERT_NE(nvml, nullptr);
    EXPECT_EQ(nvml->DriverVersion(), "999.99.99-fake");
    EXPECT_EQ(nvml->library_path(), FAKE_NVML_PATH);
  }
  EXPECT_THAT(Calls(), ElementsAre("init", "shutdown"));
}

TEST_F(NvmlTest, SampleReadsClocksPowerTemperatureAndReasons) {
  setenv("FAKE_NVML_THROTTLE", "0x24", 1);
  auto nvml = LoadFake();
  ASSERT_NE(nvml, nullptr);
  NvmlSample s;
  ASSERT_TRUE(nvml->Sample(kFakeUuid, &s).ok());
  EXPECT_EQ(s.sm_mhz, 1980);
  EXPECT_EQ(s.mem_mhz, 3201);
  EXPECT_DOUBLE_EQ(s.power_w.value_or(0), 350.5);  // from milliwatts
  EXPECT_EQ(s.temp_c, 61);
  EXPECT_EQ(s.reasons, 0x24u);
  EXPECT_THAT(ReasonNames(*s.reasons), ElementsAre("sw_power_cap", "sw_thermal"));
  EXPECT_THAT(Calls(), ElementsAre("init", "sample"));
}

TEST_F(NvmlTest, DeviceProvenanceReadsVbiosPowerLimitAndEcc) {
  auto nvml = LoadFake();
  ASSERT_NE(nvml, nullptr);
  const Nvml::Provenance p = nvml->DeviceProvenance(kFakeUuid);
  EXPECT_EQ(p.vbios_version, "96.00.FA.KE.01");
  EXPECT_DOUBLE_EQ(p.power_limit_w.value_or(0), 700.0);  // from milliwatts
  EXPECT_EQ(p.ecc_mode, "on");
  // An unknown board: nothing known, no error.
  const Nvml::Provenance none = nvml->DeviceProvenance("GPU-ffffffff-0000-0000-0000-000000000000");
  EXPECT_EQ(none.vbios_version, "");
  EXPECT_FALSE(none.power_limit_w.has_value());
  EXPECT_EQ(none.ecc_mode, "");
}

TEST_F(NvmlTest, DevicesAreFoundByUuidOnly) {
  auto nvml = LoadFake();
  ASSERT_NE(nvml, nullptr);
  NvmlSample s;
  Status st = nvml->Sample("GPU-ffffffff-0000-0000-0000-000000000000", &s);
  EXPECT_EQ(st.code(), Code::kNotFound);
  EXPECT_THAT(st.message(), AllOf(HasSubstr("nvmlDeviceGetHandleByUUID: Not Found"),
                                  HasSubstr("GPU-ffffffff-0000-0000-0000-000000000000")));
}

TEST_F(NvmlTest, SupportedMaxAndBaseClocks) {
  auto nvml = LoadFake();
  ASSERT_NE(nvml, nullptr);
  SupportedClocks supported;
  ASSERT_TRUE(nvml->GetSupportedClocks(kFakeUuid, &supported).ok());
  EXPECT_THAT(supported.mem_mhz, ElementsAre(3201));
  const auto& sm = supported.sm_mhz_by_mem.at(3201);
  ASSERT_EQ(sm.size(), 110u);
  EXPECT_EQ(sm.front(), 1980);
  EXPECT_EQ(sm.back(), 345);
  ClockPair max, base;
  ASSERT_TRUE(nvml->MaxClocks(kFakeUuid, &max).ok());
  EXPECT_EQ(max.sm_mhz, 1980);
  EXPECT_EQ(max.mem_mhz, 3201);
  ASSERT_TRUE(nvml->BaseClocks(kFakeUuid, &base).ok());
  EXPECT_EQ(base.sm_mhz, 1590);
  EXPECT_EQ(base.mem_mhz, 3201);
}

TEST_F(NvmlTest, LockThenResetInOrder) {
  auto nvml = LoadFake();
  ASSERT_NE(nvml, nullptr);
  ASSERT_TRUE(nvml->LockClocks(kFakeUuid, 1410, 3201).ok());
  NvmlSample s;
  ASSERT_TRUE(nvml->Sample(kFakeUuid, &s).ok());
  EXPECT_EQ(s.sm_mhz, 1410);  // the stand-in runs at the locked clock
  ASSERT_TRUE(nvml->ResetClocks(kFakeUuid).ok());
  EXPECT_THAT(ClockCalls(), ElementsAre("lock_mem 3201 3201 rc=0", "lock_gpu 1410 1410 rc=0",
                                        "reset_gpu rc=0", "reset_mem rc=0"));
  ExpectEveryLockReset();
}

TEST_F(NvmlTest, SmOnlyLockLeavesMemoryAlone) {
  auto nvml = LoadFake();
  ASSERT_NE(nvml, nullptr);
  ASSERT_TRUE(nvml->LockClocks(kFakeUuid, 1410, 0).ok());
  ASSERT_TRUE(nvml->ResetClocks(kFakeUuid).ok());
  EXPECT_THAT(ClockCalls(),
              ElementsAre("lock_gpu 1410 1410 rc=0", "reset_gpu rc=0", "reset_mem rc=0"));
}

TEST_F(NvmlTest, NoPermissionIsAnActionableFailedPrecondition) {
  setenv("FAKE_NVML_NO_PERMISSION", "1", 1);
  auto nvml = LoadFake();
  ASSERT_NE(nvml, nullptr);
  Status s = nvml->LockClocks(kFakeUuid, 1410, 3201);
  EXPECT_EQ(s.code(), Code::kFailedPrecondition);
  EXPECT_THAT(s.message(),
              AllOf(HasSubstr("locking clocks needs root or the CAP_SYS_ADMIN capability"),
                    HasSubstr("clocks.mode=observe"),
                    HasSubstr("nvmlDeviceSetMemoryLockedClocks: Insufficient Permissions")));
  for (const auto& line : ClockCalls()) EXPECT_THAT(line, Not(HasSubstr("rc=0")));
  ExpectEveryLockReset();
}

TEST_F(NvmlTest, SecondLockRefusedUndoesTheFirst) {
  setenv("FAKE_NVML_GPU_LOCK_RC", "4", 1);
  auto nvml = LoadFake();
  ASSERT_NE(nvml, nullptr);
  Status s = nvml->LockClocks(kFakeUuid, 1410, 3201);
  EXPECT_EQ(s.code(), Code::kFailedPrecondition);
  EXPECT_THAT(s.message(), HasSubstr("nvmlDeviceSetGpuLockedClocks: Insufficient Permissions"));
  EXPECT_THAT(ClockCalls(),
              ElementsAre("lock_mem 3201 3201 rc=0", "lock_gpu 1410 1410 rc=4", "reset_mem rc=0"));
  ExpectEveryLockReset();
}

TEST_F(NvmlTest, UnlockableSingleMemoryClockIsAcceptedOnlyAsItself) {
  // HBM parts: one memory clock, and NVML refuses to lock it. Asking for that clock is fine.
  setenv("FAKE_NVML_MEM_LOCK_UNSUPPORTED", "1", 1);
  auto nvml = LoadFake();
  ASSERT_NE(nvml, nullptr);
  EXPECT_TRUE(nvml->LockClocks(kFakeUuid, 1410, 3201).ok());
  EXPECT_TRUE(nvml->ResetClocks(kFakeUuid).ok());  // NOT_SUPPORTED reset of memory is no error
  Status s = nvml->LockClocks(kFakeUuid, 1410, 1600);
  EXPECT_EQ(s.code(), Code::kFailedPrecondition);
  EXPECT_THAT(s.message(), HasSubstr("nvmlDeviceSetMemoryLockedClocks: Not Supported"));
  ExpectEveryLockReset();
}

TEST_F(NvmlTest, CheckNamesTheCallAndMapsCodes) {
  auto nvml = LoadFake();
  ASSERT_NE(nvml, nullptr);
  EXPECT_TRUE(nvml->Check(0, "nvmlX").ok());
  Status s = nvml->Check(nvml_abi::NVML_ERROR_NOT_SUPPORTED, "nvmlDeviceGetPowerUsage");
  EXPECT_EQ(s.code(), Code::kFailedPrecondition);
  EXPECT_THAT(s.message(), HasSubstr("nvmlDeviceGetPowerUsage: Not Supported"));
  EXPECT_EQ(nvml->Check(nvml_abi::NVML_ERROR_INVALID_ARGUMENT, "f").code(), Code::kInvalidArgument);
  EXPECT_EQ(nvml->Check(nvml_abi::NVML_ERROR_NOT_FOUND, "f").code(), Code::kNotFound);
  EXPECT_EQ(nvml->Check(999, "nvmlDeviceGetTemperature").code(), Code::kInternal);
  EXPECT_THAT(
      nvml->Check(nvml_abi::NVML_ERROR_NO_PERMISSION, "nvmlDeviceSetGpuLockedClocks").message(),
      AllOf(HasSubstr(kNoPermissionSentence),
            HasSubstr("nvmlDeviceSetGpuLockedClocks: Insufficient Permissions")));
}

}  // namespace
}  // namespace ablation::core
