// The search for ncu and cuobjdump (server/core/inspect/cuda_tool.h) over a scratch directory of
// stand-in tools, with PATH, CUDA_HOME and the tool's variable set for each test.
#include "server/core/inspect/cuda_tool.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>

namespace ablation::core {
namespace {

namespace fs = std::filesystem;

/// Sets an environment variable for the test's life and puts back what was there.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    if (const char* v = std::getenv(name)) old_ = v;
    ::setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (old_) {
      ::setenv(name_, old_->c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

class CudaToolTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("cuda_tool_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  /// A file at dir_/rel, executable or not.
  std::string Tool(const std::string& rel, bool executable = true) {
    const fs::path p = dir_ / rel;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << "#!/bin/sh\n";
    ::chmod(p.c_str(), executable ? 0755 : 0644);
    return p.string();
  }

  fs::path dir_;
};

TEST_F(CudaToolTest, FindsTheToolOnPathBeforeCudaHome) {
  const std::string on_path = Tool("path/cuobjdump");
  Tool("home/bin/cuobjdump");
  ScopedEnv path("PATH", (dir_ / "empty").string() + "::" + (dir_ / "path").string());
  ScopedEnv home("CUDA_HOME", (dir_ / "home").string());
  ScopedEnv var("ABLATION_CUOBJDUMP", "");
  std::string looked = "unchanged";
  EXPECT_EQ(FindCudaTool({.name = "cuobjdump", .env_var = "ABLATION_CUOBJDUMP"}, &looked), on_path);
  EXPECT_EQ(looked, "unchanged");
}

TEST_F(CudaToolTest, SkipsAFileThatIsNotExecutableAndFallsBackToCudaHome) {
  Tool("path/ncu", /*executable=*/false);
  const std::string in_home = Tool("home/bin/ncu");
  ScopedEnv path("PATH", (dir_ / "path").string());
  ScopedEnv home("CUDA_HOME", (dir_ / "home").string());
  ScopedEnv var("ABLATION_NCU", "");
  EXPECT_EQ(FindCudaTool({.name = "ncu", .env_var = "ABLATION_NCU"}, nullptr), in_home);
}

TEST_F(CudaToolTest, LooksAtTheMorePlacesLastAndNamesThemWhenNothingIsThere) {
  const std::string extra = Tool("opt/2025.1/ncu");
  ScopedEnv path("PATH", (dir_ / "nothing").string());
  ScopedEnv home("CUDA_HOME", (dir_ / "nohome").string());
  ScopedEnv var("ABLATION_NCU", "");
  CudaToolSearch s{.name = "ncu",
                   .env_var = "ABLATION_NCU",
                   .more = {extra},
                   .more_looked = "/opt/nvidia/nsight-compute/*"};
  EXPECT_EQ(FindCudaTool(s, nullptr), extra);
  s.more = {(dir_ / "opt/none/ncu").string()};
  std::string looked;
  EXPECT_EQ(FindCudaTool(s, &looked), "");
  EXPECT_EQ(looked, "PATH, $CUDA_HOME/bin, /usr/local/cuda/bin, /opt/nvidia/nsight-compute/*");
  s.more_looked.clear();
  FindCudaTool(s, &looked);
  EXPECT_EQ(looked, "PATH, $CUDA_HOME/bin, /usr/local/cuda/bin");
}

TEST_F(CudaToolTest, AConfiguredPathIsThatToolOrNoneNeverAnotherCopy) {
  Tool("path/cuobjdump");  // on PATH, and must not be taken for the wrong configured path
  const std::string mine = Tool("mine/cuobjdump");
  ScopedEnv path("PATH", (dir_ / "path").string());
  ScopedEnv var("ABLATION_CUOBJDUMP", "");
  CudaToolSearch s{.name = "cuobjdump", .env_var = "ABLATION_CUOBJDUMP", .configured = mine};
  EXPECT_EQ(FindCudaTool(s, nullptr), mine);
  s.configured = (dir_ / "mine/missing").string();
  std::string looked;
  EXPECT_EQ(FindCudaTool(s, &looked), "");
  EXPECT_EQ(looked, "ABLATION_CUOBJDUMP=" + s.configured);
}

TEST_F(CudaToolTest, TheVariableNamesTheToolWhenNothingIsConfiguredAndABareNameGoesToPath) {
  const std::string renamed = Tool("path/ncu-2025");
  Tool("path/ncu");
  ScopedEnv path("PATH", (dir_ / "path").string());
  {
    ScopedEnv var("ABLATION_NCU", "ncu-2025");
    EXPECT_EQ(FindCudaTool({.name = "ncu", .env_var = "ABLATION_NCU"}, nullptr), renamed);
  }
  {
    ScopedEnv var("ABLATION_NCU", "ncu-none");
    std::string looked;
    EXPECT_EQ(FindCudaTool({.name = "ncu", .env_var = "ABLATION_NCU"}, &looked), "");
    EXPECT_EQ(looked, "ABLATION_NCU=ncu-none");
  }
}

TEST(OnPath, JoinsEveryNonEmptyEntryWithTheName) {
  ScopedEnv path("PATH", "/a::/b/c:");
  EXPECT_EQ(OnPath("x"), (std::vector<std::string>{"/a/x", "/b/c/x"}));
}

}  // namespace
}  // namespace ablation::core
