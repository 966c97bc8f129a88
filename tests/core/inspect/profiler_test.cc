// The profile of one launch without a GPU: ncu's command line, and a stand-in ncu (a shell
// script) that prints the real H200 output, the permission error, a driver refusal, or nothing.
#include "server/core/inspect/profiler.h"

#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

namespace ablation::core {
namespace {

// NVIDIA's documented text for a user without access to the counters (ERR_NVGPUCTRPERM).
constexpr const char* kPermissionError =
    "==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU "
    "Performance Counters on the target device 0. For instructions on enabling permissions and "
    "to get more information see https://developer.nvidia.com/ERR_NVGPUCTRPERM";

ProfileTarget Target() {
  ProfileTarget t;
  t.variant = "abl_L1_R0_bl0_s3_sw1";
  t.dtype = "bf16";
  t.shape.set_m(4096);
  t.shape.set_n(4096);
  t.shape.set_k(4096);
  t.device = 1;
  t.symbol = "_ZN8ablation7kernels13ablation_gemm18AblationGemmKernelI";
  t.binary = "/opt/ablationd/bin/ablation-worker";
  t.arch = "sm_90";
  t.warmup = 3;
  t.seed = 42;
  return t;
}

class ProfilerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::path(::testing::TempDir()) /
           ("ablation_profiler_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // A stand-in ncu: `--version` as the real one answers it, otherwise `body` (sh).
  std::string FakeNcu(const std::string& body) {
    const std::string path = (dir_ / "ncu").string();
    std::ofstream f(path);
    f << "#!/bin/sh\n"
         "if [ \"$1\" = --version ]; then echo 'NVIDIA (R) Nsight Compute Command Line "
         "Profiler'; echo 'Version 2025.3.1.0 (build 36398880) (public-release)'; exit 0; fi\n"
         "echo \"$@\" >> \"$(dirname \"$0\")/args\"\n"
      << body << "\n";
    f.close();
    ::chmod(path.c_str(), 0755);
    return path;
  }
  std::string Args() {
    std::ifstream f(dir_ / "args");
    std::stringstream s;
    s << f.rdbuf();
    return s.str();
  }
  ProfileResult Profile(const std::string& tool, std::vector<std::string> words = {}) {
    ProfilerOptions options;
    options.tool = tool;
    options.timeout = std::chrono::seconds(30);
    Profiler profiler(options, nullptr, nullptr);
    std::vector<CounterSelection> counters;
    EXPECT_TRUE(SelectCounters(words, "sm_90", &counters).ok());
    return profiler.ProfileLaunch(Target(), counters);
  }
  std::string Fixture(const std::string& name) {
    return std::string(NCU_TESTDATA_DIR) + "/" + name;
  }

  std::filesystem::path dir_;
};

TEST_F(ProfilerTest, CommandLineSelectsOneLaunchOfTheKernelAfterWarmUpWithClocksAlone) {
  std::vector<CounterSelection> counters;
  ASSERT_TRUE(SelectCounters({"lsu_pipe_utilisation,stall_wait"}, "sm_90", &counters).ok());
  const std::vector<std::string> argv = NcuArgv("/usr/local/cuda/bin/ncu", Target(), counters);
  const std::vector<std::string> expected = {
      "/usr/local/cuda/bin/ncu",
      "--clock-control",
      "none",
      "--launch-skip",
      "3",
      "--launch-count",
      "1",
      "--kernel-name-base",
      "mangled",
      "--kernel-name",
      Target().symbol,
      "--csv",
      "--page",
      "raw",
      "--print-units",
      "base",
      "--metrics",
      "sm__inst_executed_pipe_lsu.avg.pct_of_peak_sustained_active,"
      "smsp__average_warps_issue_stalled_wait_per_issue_active.ratio",
      "/opt/ablationd/bin/ablation-worker",
      "--profile-once",
      "--device",
      "1",
      "--variant",
      "abl_L1_R0_bl0_s3_sw1",
      "--dtype",
      "bf16",
      "--shape",
      "4096x4096x4096",
      "--warmup",
      "3",
      "--seed",
      "42"};
  EXPECT_EQ(argv, expected);
}

TEST_F(ProfilerTest, ReadsTheRealOutputIntoCountersWithTheToolsVersion) {
  const ProfileResult r =
      Profile(FakeNcu("cat '" + Fixture("abl_L1_R1_bl0_s3_sw1.csv") + "'"), {"lsu"});
  ASSERT_EQ(r.refusal, ProfileRefusal::kNone) << r.message;
  ASSERT_EQ(r.counters.size(), 5u);
  EXPECT_EQ(r.counters[0].metric(), "shared_load_instructions");
  EXPECT_DOUBLE_EQ(r.counters[0].value(), 0);
  EXPECT_EQ(r.counters[1].metric(), "ldmatrix_instructions");
  EXPECT_DOUBLE_EQ(r.counters[1].value(), 16777216);
  EXPECT_EQ(r.counters[1].tool_version(), "2025.3.1.0");
  EXPECT_NE(Args().find("--clock-control none"), std::string::npos);
}

TEST_F(ProfilerTest, PermissionErrorIsARefusalSayingHowToAllowProfiling) {
  const ProfileResult r = Profile(FakeNcu(std::string("echo '") + kPermissionError + "'\nexit 1"));
  EXPECT_EQ(r.refusal, ProfileRefusal::kPermission);
  EXPECT_NE(r.message.find("ERR_NVGPUCTRPERM"), std::string::npos);
  EXPECT_NE(r.message.find("NVreg_RestrictProfilingToAdminUsers=0"), std::string::npos);
  EXPECT_NE(r.message.find("run ablationd as root"), std::string::npos);
  EXPECT_TRUE(r.counters.empty());
}

TEST_F(ProfilerTest, PermissionErrorOnStderrWithExitZeroIsStillARefusal) {
  const ProfileResult r = Profile(FakeNcu(std::string("echo '") + kPermissionError + "' >&2"));
  EXPECT_EQ(r.refusal, ProfileRefusal::kPermission);
}

TEST_F(ProfilerTest, ADriverWithoutProfilingIsADriverRefusal) {
  const ProfileResult r = Profile(
      FakeNcu("echo '==ERROR== Failed to initialize the profiler: LibraryNotLoaded'\nexit 1"));
  EXPECT_EQ(r.refusal, ProfileRefusal::kDriver);
  EXPECT_NE(r.message.find("the driver refused the profiler (ncu: Failed to initialize"),
            std::string::npos)
      << r.message;
}

TEST_F(ProfilerTest, NoLaunchProfiledIsAFailureOfThisLaunchWithTheWorkersWords) {
  const ProfileResult r = Profile(FakeNcu(
      "echo '==WARNING== No kernels were profiled.'\n"
      "echo 'ablation-worker: profile-once: problem does not fit in device memory' >&2\nexit 1"));
  EXPECT_EQ(r.refusal, ProfileRefusal::kFailed);
  EXPECT_NE(r.message.find("ncu profiled no launch of " + Target().symbol), std::string::npos);
  EXPECT_NE(r.message.find("No kernels were profiled"), std::string::npos);
  EXPECT_NE(r.message.find("the worker said: ablation-worker: profile-once: problem does not fit"),
            std::string::npos)
      << r.message;
}

// A library's kernels (cuBLAS) have no symbol of ours: ncu takes the first kernel launched inside
// the one-shot worker's cudaProfilerStart .. Stop (its profiled call), with no name filter and no
// launches to skip, and the result names the kernel as ncu printed it.
TEST_F(ProfilerTest, ALibrarysKernelIsTheFirstInsideTheProfiledCallNamedAsNcuPrintsIt) {
  ProfileTarget t = Target();
  t.variant = "cublas_bf16";
  t.symbol = "";
  std::vector<CounterSelection> counters;
  ASSERT_TRUE(SelectCounters({"lsu"}, "sm_90", &counters).ok());
  const std::vector<std::string> argv = NcuArgv("ncu", t, counters);
  const std::vector<std::string> head = {"ncu", "--clock-control", "none", "--profile-from-start",
                                         "off", "--launch-count",  "1",    "--csv"};
  ASSERT_GE(argv.size(), head.size());
  EXPECT_EQ(std::vector<std::string>(argv.begin(), argv.begin() + long(head.size())), head);
  for (const char* absent : {"--kernel-name", "--launch-skip", "--kernel-name-base"})
    EXPECT_EQ(std::find(argv.begin(), argv.end(), absent), argv.end()) << absent;
  EXPECT_NE(std::find(argv.begin(), argv.end(), "cublas_bf16"), argv.end());

  EXPECT_EQ(std::find(argv.begin(), argv.end(), "--library-algo"), argv.end());

  // A _best variant's algorithm, as the resident worker held it, goes to the one-shot worker in
  // hexadecimal: the profiled launch is the timed one's.
  ProfileTarget best = t;
  best.variant = "cublas_bf16_best";
  for (int i = 0; i < 64; ++i) best.library_algo.push_back(char(i * 4));
  const std::vector<std::string> with = NcuArgv("ncu", best, counters);
  ASSERT_GE(with.size(), 2u);
  EXPECT_EQ(with[with.size() - 2], "--library-algo");
  EXPECT_EQ(with.back().size(), 128u);
  EXPECT_EQ(with.back().substr(0, 16), "0004080c1014181c") << with.back();
  EXPECT_EQ(with.back().substr(120), "f0f4f8fc") << with.back();

  ProfilerOptions options;
  options.tool = FakeNcu("cat '" + Fixture("abl_L1_R1_bl0_s3_sw1.csv") + "'");
  options.timeout = std::chrono::seconds(30);
  Profiler profiler(options, nullptr, nullptr);
  const ProfileResult r = profiler.ProfileLaunch(t, counters);
  ASSERT_EQ(r.refusal, ProfileRefusal::kNone) << r.message;
  EXPECT_EQ(r.kernel_name,
            "void AblationGemmKernel<__nv_bfloat16, Config<1, 1, 0, 3, 1, 0>>(const T1 *, const T1 "
            "*, T1 *, int, int, int)");
  EXPECT_EQ(r.counters.size(), 5u);
  EXPECT_NE(Args().find("--profile-from-start off"), std::string::npos);

  // Nothing inside the range: the failure names the variant's library kernel, not an empty name.
  options.tool = FakeNcu("echo '==WARNING== No kernels were profiled.'; exit 0");
  Profiler none(options, nullptr, nullptr);
  const ProfileResult n = none.ProfileLaunch(t, counters);
  EXPECT_EQ(n.refusal, ProfileRefusal::kFailed);
  EXPECT_NE(n.message.find("ncu profiled no launch of cublas_bf16's library kernel"),
            std::string::npos)
      << n.message;
}

TEST_F(ProfilerTest, NoToolIsARefusalNamingWhereItLooked) {
  const ProfileResult r = Profile((dir_ / "no-such-ncu").string());
  EXPECT_EQ(r.refusal, ProfileRefusal::kNoTool);
  EXPECT_NE(r.message.find("no Nsight Compute (ncu) on the daemon's host"), std::string::npos);
  EXPECT_NE(r.message.find("ABLATION_NCU=" + (dir_ / "no-such-ncu").string()), std::string::npos);
}

TEST_F(ProfilerTest, AMetricThisNcuDoesNotKnowIsDroppedAndNoted) {
  // Fails naming the metric while it is asked for, as ncu does; then prints the real output.
  const std::string tool = FakeNcu(
      "case \"$*\" in *bogus__metric.sum*) echo '==ERROR== Failed to find metric "
      "bogus__metric.sum'; exit 1;; esac\ncat '" +
      Fixture("abl_L1_R0_bl0_s3_sw1.csv") + "'");
  const ProfileResult r = Profile(tool, {"shared_load_instructions,bogus__metric.sum"});
  ASSERT_EQ(r.refusal, ProfileRefusal::kNone) << r.message;
  ASSERT_EQ(r.counters.size(), 2u);
  EXPECT_DOUBLE_EQ(r.counters[0].value(), 67108864);
  EXPECT_FALSE(r.counters[1].has_value());
  EXPECT_NE(r.counters[1].note().find("does not know it on sm_90"), std::string::npos)
      << r.counters[1].note();
}

TEST_F(ProfilerTest, HungProfilerIsKilledAtTheDeadline) {
  ProfilerOptions options;
  options.tool = FakeNcu("sleep 30");
  options.timeout = std::chrono::seconds(1);
  Profiler profiler(options, nullptr, nullptr);
  std::vector<CounterSelection> counters;
  ASSERT_TRUE(SelectCounters({"lsu"}, "sm_90", &counters).ok());
  const auto t0 = std::chrono::steady_clock::now();
  const ProfileResult r = profiler.ProfileLaunch(Target(), counters);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(10));
  EXPECT_EQ(r.refusal, ProfileRefusal::kFailed);
  EXPECT_NE(r.message.find("did not finish in 1 s"), std::string::npos) << r.message;
}

TEST(ApplyProfileRequest, ChecksTheWordsAndCarriesThemIntoThePlan) {
  v1::RunRequest request;
  RunPlan plan;
  request.add_profile_metrics("lsu");
  EXPECT_EQ(ApplyProfileRequest(request, &plan).message(),
            "profile_metrics: given without profile");
  request.set_profile(true);
  EXPECT_TRUE(ApplyProfileRequest(request, &plan).ok());
  EXPECT_TRUE(plan.profile);
  EXPECT_EQ(plan.profile_metrics, std::vector<std::string>{"lsu"});
  request.add_profile_metrics("everything");
  EXPECT_EQ(ApplyProfileRequest(request, &plan).code(), Code::kInvalidArgument);
}

}  // namespace
}  // namespace ablation::core
