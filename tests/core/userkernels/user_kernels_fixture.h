// The fixture of the tests of a daemon's user kernels (server/core/userkernels/user_kernels.h): a
// database in a folder of the test's own, the real ablation-compile, and callers to add as.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "server/core/userkernels/user_kernels.h"
#include "tests/db/db_test_support.h"

namespace ablation::core::testing {

class UserKernelsFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("ablation_user_kernels_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->test_suite_name() + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
    options_.compiler_path = COMPILER_PATH;
  }
  void TearDown() override {
    kernels_.reset();
    store_.reset();
    std::filesystem::remove_all(dir_);
  }
  /// A daemon's kernels on the folder's database with options_ (and `builtin`, the catalog it
  /// extends); what Load said.
  std::vector<std::string> Open(const kernels::Registry* builtin = nullptr) {
    kernels_.reset();
    store_.reset();
    store_ = db::Store::Open((dir_ / "results.db").string());
    kernels_ = std::make_unique<UserKernels>(store_.get(), options_, builtin);
    std::vector<std::string> problems;
    kernels_->Load(&problems);
    return problems;
  }

  std::filesystem::path dir_;
  UserKernelOptions options_;
  std::unique_ptr<db::Store> store_;
  std::unique_ptr<UserKernels> kernels_;
  const KernelCaller alice_{"alice", false, true};
  const KernelCaller bob_{"bob", false, true};
  const KernelCaller admin_{"root", true, true};
};

}  // namespace ablation::core::testing
