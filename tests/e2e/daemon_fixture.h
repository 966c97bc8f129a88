// The fixture most end-to-end tests share: a temporary directory made before each test and
// removed after it, and at most one daemon on it (with the fake worker), stopped with SIGTERM
// before the directory goes.
#pragma once

#include <signal.h>

#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/e2e/harness.h"

namespace ablation::testing {

class DaemonFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = MakeTempDir();
    ASSERT_FALSE(dir_.empty());
  }
  void TearDown() override {
    if (daemon_) daemon_->Stop(SIGTERM);
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }
  /// A daemon on the test's one database, its fake worker set up by `env`, started with `args`
  /// besides the harness's own; the previous one stops first. Fails the test when it does not
  /// listen.
  void StartFakeDaemon(std::map<std::string, std::string> env = {},
                       std::vector<std::string> args = {}) {
    if (daemon_) daemon_->Stop(SIGTERM);
    daemon_ = std::make_unique<Daemon>(dir_, FAKE_WORKER_PATH, std::move(env));
    daemon_->set_extra_args(std::move(args));
    ASSERT_EQ(daemon_->Start(), "");
  }
  CommandResult Client(std::vector<std::string> args) { return daemon_->Client(std::move(args)); }

  std::string dir_;
  std::unique_ptr<Daemon> daemon_;
};

}  // namespace ablation::testing
