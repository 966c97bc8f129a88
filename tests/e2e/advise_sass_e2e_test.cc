// advise and sass end to end: client -> ablationd -> store / fake worker -> a stand-in
// disassembler that prints the real SASS fixtures of tests/core/testdata/sass.
#include <signal.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/e2e/harness.h"

namespace ablation::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

class AdviseSassE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = MakeTempDir();
    ASSERT_FALSE(dir_.empty());
  }
  void StartDaemon(std::map<std::string, std::string> env = {}) {
    daemon_ = std::make_unique<Daemon>(dir_, FAKE_WORKER_PATH, std::move(env));
    ASSERT_EQ(daemon_->Start(), "");
  }
  void TearDown() override {
    if (daemon_) daemon_->Stop(SIGTERM);
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }

  // A cuobjdump stand-in: for `-sass -arch A -fun S1,S2 BINARY` it prints each S that has a
  // listing S.sass beside it, under cuobjdump's own headers, as the real tool does.
  std::string FakeCuobjdump() {
    const std::string path = dir_ + "/cuobjdump";
    std::ofstream f(path);
    f << "#!/bin/sh\n"
         "dir=$(dirname \"$0\")\n"
         "while [ $# -gt 0 ]; do case \"$1\" in -fun) funs=$2; shift 2;; -arch) arch=$2; shift 2;;"
         " *) shift;; esac; done\n"
         "echo \"args: arch=$arch\" >> \"$dir/cuobjdump.log\"\n"
         "printf '\\nFatbin elf code:\\n================\\narch = %s\\n\\n\\tcode for %s\\n' "
         "\"$arch\" \"$arch\"\n"
         "for s in $(echo \"$funs\" | tr ',' ' '); do\n"
         "  [ -f \"$dir/$s.sass\" ] || continue\n"
         "  sed \"s/Function : .*/Function : $s/; /code for sm_/d\" \"$dir/$s.sass\"\n"
         "done\n";
    f.close();
    ::chmod(path.c_str(), 0755);
    return path;
  }
  void Listing(const std::string& fixture, const std::string& symbol) {
    std::filesystem::copy_file(std::string(SASS_TESTDATA_DIR) + "/" + fixture,
                               dir_ + "/" + symbol + ".sass");
  }

  std::string dir_;
  std::unique_ptr<Daemon> daemon_;
};

TEST_F(AdviseSassE2E, AdviseFromTheNumbersWithNothingMeasured) {
  StartDaemon();
  auto r = daemon_->Client(
      {"advise", "--bm", "128", "--bn", "128", "--bk", "56", "--dtype", "fp16", "--arch", "sm_86"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("pipelining may not pay"));  // 128 / 2 bytes = 64:1
  EXPECT_THAT(r.out, HasSubstr("crosses the 50 KB cliff"));
  EXPECT_THAT(r.out, HasSubstr("not measured on this GPU yet"));

  auto bad = daemon_->Client(
      {"advise", "--bm", "64", "--bn", "64", "--bk", "16", "--dtype", "fp4", "--arch", "sm_90"});
  EXPECT_EQ(bad.exit_code, 64);  // usage: refused by the client
  // The client knows the dtypes (and their aliases): refused before any call.
  EXPECT_THAT(bad.err, HasSubstr("--dtype: 'fp4' is not a dtype; use bf16, fp16 (f16)"));
  bad = daemon_->Client(
      {"advise", "--bm", "64", "--bn", "64", "--bk", "16", "--dtype", "fp16", "--arch", "sm_75"});
  EXPECT_THAT(bad.err, HasSubstr("arch: unknown architecture 'sm_75'"));
}

TEST_F(AdviseSassE2E, AdviseShowsWhatThisGpuMeasured) {
  StartDaemon();
  auto list = daemon_->Client({"variants", "pipe_*_f16_64x64x16"});
  if (list.exit_code != 0 || list.out.find("pipe_cpasync_f16_64x64x16") == std::string::npos)
    GTEST_SKIP() << "the pipe_ family is not registered in this build";
  auto run = daemon_->Client(
      {"run", "--variant", "pipe_*_f16_64x64x16", "--dtype", "fp16", "--shape", "256x256x256"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  auto r = daemon_->Client(
      {"advise", "--bm", "64", "--bn", "64", "--bk", "16", "--dtype", "fp16", "--arch", "sm_90"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("won at 256x256x256"));
  EXPECT_THAT(r.out, HasSubstr("no measurement at 4096x4096x4096"));
  EXPECT_THAT(r.out, Not(HasSubstr("not measured on this GPU yet")));
}

// This GPU's stored rows say cp.async gains 38% at a tile where the rule of thumb (ratio above
// 20) says pipelining may not pay; advise leads with the measurement.
TEST_F(AdviseSassE2E, AMeasurementThatContradictsTheRuleLeadsTheAdvice) {
  StartDaemon({{"ABLATION_FAKE_SPEEDUP", "pipe_cpasync_f16_128x128x32=1.38"}});
  auto list = daemon_->Client({"variants", "pipe_*_f16_128x128x32"});
  if (list.exit_code != 0 || list.out.find("pipe_cpasync_f16_128x128x32") == std::string::npos)
    GTEST_SKIP() << "the pipe_ family is not registered in this build";
  auto run = daemon_->Client({"run", "--variant", "pipe_baseline_f16_128x128x32", "--variant",
                              "pipe_cpasync_f16_128x128x32", "--dtype", "fp16", "--shape", "4096"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  auto r = daemon_->Client(
      {"advise", "--bm", "128", "--bn", "128", "--bk", "32", "--dtype", "fp16", "--arch", "sm_90"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string first = r.out.substr(0, r.out.find('\n'));
  EXPECT_THAT(first, HasSubstr("measured on this GPU: pipe_cpasync_f16_128x128x32 +38.0% over "
                               "pipe_baseline_f16_128x128x32 at 4096x4096x4096"));
  EXPECT_THAT(first, HasSubstr("pipelining pays here"));
  EXPECT_THAT(r.out, HasSubstr("rule (contradicted by the measurement): pipelining may not pay"));
  EXPECT_THAT(r.out, HasSubstr("the rule expects at most +5%, this GPU measured +38.0%"));
  auto json = daemon_->Client({"--format", "json", "advise", "--bm", "128", "--bn", "128", "--bk",
                               "32", "--dtype", "fp16", "--arch", "sm_90"});
  EXPECT_THAT(json.out, HasSubstr("\"rule_check\":\"contradicted\""));
}

TEST_F(AdviseSassE2E, SassWithoutTheToolSaysSo) {
  StartDaemon({{"ABLATION_CUOBJDUMP", dir_ + "/no-such-cuobjdump"}});
  auto r = daemon_->Client({"sass", "L1_R1_s3", "--dtype", "fp16"});
  EXPECT_EQ(r.exit_code, 69);  // the daemon cannot do it here
  EXPECT_THAT(r.err, HasSubstr("FAILED_PRECONDITION"));
  EXPECT_THAT(r.err, HasSubstr("no cuobjdump on the daemon's host"));
  EXPECT_THAT(r.err, HasSubstr("no-such-cuobjdump"));
}

TEST_F(AdviseSassE2E, SassWithoutAGpuSaysSo) {
  StartDaemon({{"ABLATION_CUOBJDUMP", FakeCuobjdump()},
               {"ABLATION_FAKE_NO_DEVICE", "no CUDA device: CUDA driver not found (test)"}});
  auto r = daemon_->Client({"sass", "L1_R1_s3", "--dtype", "fp16"});
  EXPECT_EQ(r.exit_code, 69);  // the daemon cannot do it here
  EXPECT_THAT(r.err, HasSubstr("FAILED_PRECONDITION"));
  EXPECT_THAT(r.err, HasSubstr("CUDA driver not found"));
}

TEST_F(AdviseSassE2E, SassRefusesBadInputNamingTheField) {
  StartDaemon({{"ABLATION_CUOBJDUMP", FakeCuobjdump()}});
  auto r = daemon_->Client({"sass", "abl_nope"});
  EXPECT_EQ(r.exit_code, 65);  // the daemon refused the input
  EXPECT_THAT(r.err, HasSubstr("INVALID_ARGUMENT: variant"));
  r = daemon_->Client({"sass", "L1_R1_s3", "--dtype", "fp4"});
  EXPECT_EQ(r.exit_code, 64);  // usage: refused by the client
  EXPECT_THAT(r.err, HasSubstr("--dtype: 'fp4' is not a dtype"));
  // A dtype the variant has no kernel of is the daemon's refusal, naming both.
  r = daemon_->Client({"sass", "L1_R1_s3", "--dtype", "fp8"});
  EXPECT_EQ(r.exit_code, 65);  // the daemon refused the input
  EXPECT_THAT(r.err, HasSubstr("has no fp8 kernel"));
  r = daemon_->Client({"sass", "abl_*"});
  EXPECT_THAT(r.err, HasSubstr("give one"));
}

TEST_F(AdviseSassE2E, SassJudgesTheKernelTheWorkerNames) {
  // The worker (test double) names fake_<variant>_<dtype>; the stand-in tool prints the real
  // listings: the multistage kernel for s3, the single-stage one standing in for s1.
  Listing("abl_L1_R1_bl0_s3_sw1.fp16.sm_90.sass", "fake_abl_L1_R1_bl0_s3_sw1_fp16");
  Listing("abl_L0_R1_bl0_s1_sw1.fp16.sm_90.sass", "fake_abl_L1_R1_bl0_s1_sw1_fp16");
  StartDaemon({{"ABLATION_CUOBJDUMP", FakeCuobjdump()}});
  auto r = daemon_->Client({"sass", "L1_R1_s3", "--dtype", "fp16"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("abl_L1_R1_bl0_s3_sw1 fp16 sm_90: OVERLAP"));
  EXPECT_THAT(r.out, HasSubstr("[ok]   overlap"));
  EXPECT_THAT(r.out, HasSubstr("4 of 4 LDGSTS reach HMMA with no BAR.SYNC between"));
  EXPECT_THAT(r.out, HasSubstr("[ok]   barrier_after_compute"));
  EXPECT_THAT(r.out, HasSubstr("16 HMMA per iteration (16 in an inner loop), as in "
                               "abl_L1_R1_bl0_s1_sw1 16"));
  EXPECT_THAT(r.out, HasSubstr("[ok]   spills"));
  EXPECT_THAT(r.out, HasSubstr("0cf0  LOAD>   LDGSTS.E.BYPASS.LTC128B.128 [R77], [R68.64]"));
  // s2 and s4 have no listing: said per kernel, not a failure of the whole call.
  EXPECT_THAT(r.out, HasSubstr("printed no SASS for fake_abl_L1_R1_bl0_s2_sw1_fp16"));
  std::ifstream log(dir_ + "/cuobjdump.log");
  std::string line;
  std::getline(log, line);
  EXPECT_EQ(line, "args: arch=sm_90");

  auto json =
      daemon_->Client({"--format", "json", "sass", "abl_L1_R1_bl0_s3_sw1", "--dtype", "fp16"});
  EXPECT_EQ(json.exit_code, 0) << json.err;
  EXPECT_THAT(json.out, HasSubstr("\"verdict\":\"overlap\""));
  EXPECT_THAT(json.out, HasSubstr("\"compute_per_iteration\":16"));
}

TEST_F(AdviseSassE2E, SassOfTheSingleStageKernelReportsNoOverlap) {
  Listing("abl_L0_R1_bl0_s1_sw1.fp16.sm_90.sass", "fake_abl_L0_R1_bl0_s1_sw1_fp16");
  StartDaemon({{"ABLATION_CUOBJDUMP", FakeCuobjdump()}});
  auto r = daemon_->Client({"sass", "abl_L0_R1_bl0_s1_sw1", "--dtype", "fp16"});
  EXPECT_EQ(r.exit_code, 1) << r.err;  // the answer came; a check failed
  EXPECT_THAT(r.out, HasSubstr("NO OVERLAP"));
  EXPECT_THAT(r.out, HasSubstr("[FAIL] overlap"));
  EXPECT_THAT(r.out, HasSubstr("by a BAR.SYNC (0x0b20): load, sync, compute"));
}

// The build that runs a problem, named where kernels are named (kernels/sm90/sm90_plan.h): the
// last rung at 4096^3 runs without its clusters on an H200 (the test double's 132 SMs, 66 pairs).
TEST_F(AdviseSassE2E, SassAndVariantsNameTheBuildThatRunsAShape) {
  Listing("abl_L1_R1_bl0_s3_sw1.fp16.sm_90.sass", "fake_sm90_h12_fitted_unclustered_bf16");
  StartDaemon({{"ABLATION_CUOBJDUMP", FakeCuobjdump()}});
  auto r = daemon_->Client({"sass", "sm90_h12_fitted_unclustered", "--shape", "4096"});
  EXPECT_LE(r.exit_code, 1) << r.err;  // the stand-in listing is an mma.sync one: checks may fail
  EXPECT_THAT(r.out, HasSubstr("  build   own build; 128 CTAs without clusters (the rung's "
                               "clusters dropped: the grid is fitted to its rounds), 4 rounds"));
  r = daemon_->Client({"sass", "sm90_h12_fitted_unclustered"});
  EXPECT_THAT(r.out, Not(HasSubstr("  build ")));  // no shape: the variant's own build
  r = daemon_->Client({"sass", "sm90_h12_fitted_unclustered", "--shape", "4096x0x1"});
  EXPECT_EQ(r.exit_code, 64);  // usage: refused by the client
  EXPECT_THAT(r.err, HasSubstr("--shape"));

  auto v = daemon_->Client({"variants", "sm90_h1*", "--shape", "8192x8192x8192"});
  EXPECT_EQ(v.exit_code, 0) << v.err;
  EXPECT_THAT(v.out, HasSubstr("build at the shape"));
  EXPECT_THAT(v.out, HasSubstr("own build; 132 CTAs in 66 clusters of 2, 15 rounds, stream-K: 990 "
                               "units whole, the last 34 shared by 66 clusters"));
  v = daemon_->Client({"variants", "sm90_h12*", "--shape", "4096x4096x4089"});
  EXPECT_THAT(v.out,
              HasSubstr("guarded build on padded copies of A, B; 128 CTAs without clusters"));
  v = daemon_->Client({"variants", "sm90_fp8_f1*", "--shape", "4096", "--dtype", "bf16"});
  EXPECT_THAT(v.out, HasSubstr("cannot run it: no bf16 kernel"));
  v = daemon_->Client({"variants", "--dtype", "bf16"});
  EXPECT_EQ(v.exit_code, 64);  // usage: refused by the client
  EXPECT_THAT(v.err, HasSubstr("--dtype is the dtype of --shape"));
}

}  // namespace
}  // namespace ablation::testing
