// Test fixture around the stand-in NVML (tests/support/fake_nvml.cc): a fresh call log and
// environment per test, and a guard that refuses to run anything unless the library at
// FAKE_NVML_PATH really is the stand-in, so that no test can ever change a real GPU's clocks.
#pragma once

#include <dlfcn.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "server/core/gpu/nvml.h"

namespace ablation::core::testing {

inline constexpr const char* kFakeUuid = "GPU-00000000-0000-0000-0000-000000000000";

class FakeNvmlTest : public ::testing::Test {
 protected:
  void SetUp() override {
    guard_ = dlopen(FAKE_NVML_PATH, RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(guard_, nullptr) << dlerror();
    ASSERT_NE(dlsym(guard_, "fake_nvml_is_fake"), nullptr)
        << FAKE_NVML_PATH << " is not the stand-in NVML; refusing to run clock tests";
    char tmpl[] = "/tmp/nvml_test.XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    log_ = dir_ + "/calls.log";
    for (const char* name : kKnobs) unsetenv(name);
    setenv("FAKE_NVML_LOG", log_.c_str(), 1);
  }

  void TearDown() override {
    for (const char* name : kKnobs) unsetenv(name);
    unsetenv("FAKE_NVML_LOG");
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
    if (guard_) dlclose(guard_);
  }

  std::unique_ptr<Nvml> LoadFake() {
    std::string why;
    auto nvml = Nvml::Load(FAKE_NVML_PATH, &why);
    EXPECT_NE(nvml, nullptr) << why;
    return nvml;
  }

  /// Every logged call, in order.
  std::vector<std::string> Calls() const {
    std::vector<std::string> lines;
    std::ifstream in(log_);
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
  }

  /// Only the clock-changing calls (lock_*, reset_*), in order.
  std::vector<std::string> ClockCalls() const {
    std::vector<std::string> out;
    for (const auto& line : Calls()) {
      if (line.rfind("lock_", 0) == 0 || line.rfind("reset_", 0) == 0) out.push_back(line);
    }
    return out;
  }

  /// Every successful lock of a clock is followed by a successful reset of that clock, and
  /// nothing is left locked at the end of the log.
  void ExpectEveryLockReset() const {
    bool gpu_locked = false, mem_locked = false;
    for (const auto& line : ClockCalls()) {
      bool ok = line.find(" rc=0") != std::string::npos;
      if (line.rfind("lock_gpu", 0) == 0 && ok) gpu_locked = true;
      if (line.rfind("lock_mem", 0) == 0 && ok) mem_locked = true;
      if (line.rfind("reset_gpu", 0) == 0 && ok) gpu_locked = false;
      if (line.rfind("reset_mem", 0) == 0 && ok) mem_locked = false;
    }
    EXPECT_FALSE(gpu_locked) << "an SM clock lock was never reset";
    EXPECT_FALSE(mem_locked) << "a memory clock lock was never reset";
  }

  std::string dir_;
  std::string log_;

 private:
  static constexpr const char* kKnobs[] = {
      "FAKE_NVML_UUID",        "FAKE_NVML_NO_PERMISSION", "FAKE_NVML_THROTTLE",
      "FAKE_NVML_SM_MHZ",      "FAKE_NVML_INIT_FAIL",     "FAKE_NVML_MEM_LOCK_UNSUPPORTED",
      "FAKE_NVML_GPU_LOCK_RC", "FAKE_NVML_WATCH_FILE"};
  void* guard_ = nullptr;
};

}  // namespace ablation::core::testing
