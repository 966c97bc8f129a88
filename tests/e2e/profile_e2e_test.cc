// Counters end to end: client -> ablationd -> fake worker (names the kernel) -> a stand-in ncu
// that prints the real H200 output of tests/core/testdata/ncu for the variant it is asked about,
// or the permission error; then the rows in SQLite and back through show / results.
#include <signal.h>
#include <sqlite3.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/e2e/daemon_fixture.h"
#include "tests/e2e/harness.h"

namespace ablation::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// NVIDIA's documented text for a user without access to the counters.
constexpr const char* kPermissionError =
    "==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU "
    "Performance Counters on the target device 0. For instructions on enabling permissions and "
    "to get more information see https://developer.nvidia.com/ERR_NVGPUCTRPERM";

class ProfileE2E : public DaemonFixture {
 protected:
  void StartDaemon(std::map<std::string, std::string> env) {
    env.emplace("ABLATION_FAKE_SLEEP_MS", "1");
    StartFakeDaemon(std::move(env));
  }
  // A stand-in ncu: logs its arguments, then prints `body`'s output ($variant is the one asked).
  std::string FakeNcu(const std::string& body) {
    const std::string path = dir_ + "/ncu";
    std::ofstream f(path);
    f << "#!/bin/sh\n"
         "if [ \"$1\" = --version ]; then echo 'Version 2025.3.1.0 (build 36398880)'; exit 0; fi\n"
         "echo \"$@\" >> \"$(dirname \"$0\")/ncu.log\"\n"
         "while [ $# -gt 0 ]; do [ \"$1\" = --variant ] && variant=$2; shift; done\n"
      << body << "\n";
    f.close();
    ::chmod(path.c_str(), 0755);
    return path;
  }
  std::string RealOutput() {
    return FakeNcu("cat \"" + std::string(NCU_TESTDATA_DIR) + "/$variant.csv\"");
  }
  int NcuCalls() {
    std::ifstream f(dir_ + "/ncu.log");
    int n = 0;
    for (std::string line; std::getline(f, line);) ++n;
    return n;
  }
  // One number from the daemon's database, read as a dashboard would (read-only).
  int64_t Sql(const std::string& query) {
    sqlite3* db = nullptr;
    int64_t value = -1;
    if (sqlite3_open_v2(daemon_->db_path().c_str(), &db, SQLITE_OPEN_READONLY, nullptr) ==
        SQLITE_OK) {
      sqlite3_stmt* s = nullptr;
      if (sqlite3_prepare_v2(db, query.c_str(), -1, &s, nullptr) == SQLITE_OK &&
          sqlite3_step(s) == SQLITE_ROW)
        value = sqlite3_column_int64(s, 0);
      else
        ADD_FAILURE() << query << ": " << sqlite3_errmsg(db);
      sqlite3_finalize(s);
    }
    sqlite3_close(db);
    return value;
  }
};

TEST_F(ProfileE2E, ProfileReadsStoresAndShowsTheCountersOfEachRung) {
  StartDaemon({{"ABLATION_NCU", RealOutput()}});
  auto r = daemon_->Client({"profile", "abl_L1_R0_bl0_s3_sw1", "L1_R1_s3", "--shape", "4096"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("ncu 2025.3.1.0"));
  EXPECT_THAT(r.out, HasSubstr("abl_L1_R0_bl0_s3_sw1 bf16 4096x4096x4096"));
  EXPECT_THAT(r.out, HasSubstr("shared_load_instructions       67.11M  inst"));
  EXPECT_THAT(r.out, HasSubstr("ldmatrix_instructions          16.78M  inst"));
  EXPECT_THAT(r.out, HasSubstr("top stalls (cycles per issued instruction): wait 2.73"));
  EXPECT_EQ(NcuCalls(), 2);
  EXPECT_EQ(Sql("SELECT count(*) FROM counters WHERE run_id IS NULL"), 2 * 31);
  EXPECT_EQ(Sql("SELECT value FROM latest_counters WHERE variant = 'abl_L1_R1_bl0_s3_sw1' AND "
                "metric = 'ldmatrix_instructions'"),
            16777216);

  auto csv = daemon_->Client({"-f", "csv", "profile", "L1_R0_s3", "--metrics", "lsu"});
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  EXPECT_THAT(csv.out, HasSubstr("variant,dtype,shape,metric,value,unit,ncu_name,note"));
  EXPECT_THAT(csv.out, HasSubstr("abl_L1_R0_bl0_s3_sw1,bf16,4096x4096x4096,"
                                 "shared_load_instructions,67108864,inst,"
                                 "smsp__sass_inst_executed_op_shared_ld.sum,"));
  EXPECT_THAT(csv.out, Not(HasSubstr("dram_throughput")));
}

// cuBLAS launches kernels of its own choice: the worker names none (describe: library), ncu takes
// the first kernel inside the profiled call, and the counters are stored and shown with the name
// ncu printed for it.
TEST_F(ProfileE2E, ALibraryVariantIsProfiledThroughTheFirstKernelOfItsCall) {
  StartDaemon({{"ABLATION_NCU",
                FakeNcu("cat '" + std::string(NCU_TESTDATA_DIR) + "/abl_L1_R1_bl0_s3_sw1.csv'")}});
  auto r = daemon_->Client({"profile", "cublas_bf16", "--shape", "4096"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("cublas_bf16 bf16 4096x4096x4096"));
  EXPECT_THAT(r.out, HasSubstr("the library's first kernel of the call: void AblationGemmKernel"));
  EXPECT_THAT(r.out, HasSubstr("ldmatrix_instructions          16.78M  inst"));
  std::ifstream log(dir_ + "/ncu.log");
  std::stringstream args;
  args << log.rdbuf();
  EXPECT_THAT(args.str(), HasSubstr("--profile-from-start off --launch-count 1 --csv"));
  EXPECT_THAT(args.str(), Not(HasSubstr("--kernel-name")));

  auto run = daemon_->Client({"-q", "run", "-v", "cublas_bf16", "-s", "256", "--profile"});
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  auto show = daemon_->Client({"show", "latest", "--metrics"});
  ASSERT_EQ(show.exit_code, 0) << show.err;
  EXPECT_THAT(show.out, HasSubstr("16.78M"));
  EXPECT_THAT(show.out,
              HasSubstr("the library's first kernel of the call: void AblationGemmKernel"));
  // sass still refuses it: there is no code of ours to read.
  auto sass = daemon_->Client({"sass", "cublas_bf16"});
  EXPECT_THAT(sass.out + sass.err, HasSubstr("there is no kernel of ours to disassemble"));
}

TEST_F(ProfileE2E, ProfileWithoutPermissionIsRefusedSayingHowToAllowIt) {
  StartDaemon({{"ABLATION_NCU", FakeNcu(std::string("echo '") + kPermissionError + "'\nexit 1")}});
  auto r = daemon_->Client({"profile", "L1_R1_s3"});
  EXPECT_EQ(r.exit_code, 69);  // the daemon cannot do it here
  EXPECT_THAT(r.err, HasSubstr("FAILED_PRECONDITION"));
  EXPECT_THAT(r.err, HasSubstr("restricted to administrators (ncu: ERR_NVGPUCTRPERM)"));
  EXPECT_THAT(r.err, HasSubstr("NVreg_RestrictProfilingToAdminUsers=0"));
  EXPECT_THAT(r.err, HasSubstr("or run ablationd as root"));
  EXPECT_EQ(Sql("SELECT count(*) FROM counters"), 0);
}

TEST_F(ProfileE2E, ProfileWithoutNcuIsRefused) {
  StartDaemon({{"ABLATION_NCU", dir_ + "/no-such-ncu"}});
  auto r = daemon_->Client({"profile", "L1_R1_s3"});
  EXPECT_EQ(r.exit_code, 69);  // the daemon cannot do it here
  EXPECT_THAT(r.err,
              HasSubstr("FAILED_PRECONDITION: no Nsight Compute (ncu) on the daemon's host"));
  EXPECT_THAT(r.err, HasSubstr("no-such-ncu"));
}

TEST_F(ProfileE2E, ProfileRefusesBadInputNamingTheField) {
  StartDaemon({{"ABLATION_NCU", RealOutput()}});
  auto r = daemon_->Client({"profile", "L1_R1_s3", "--metrics", "lsu,bandwidth"});
  EXPECT_EQ(r.exit_code, 65);  // the daemon refused the input
  EXPECT_THAT(r.err, HasSubstr("INVALID_ARGUMENT: metrics: unknown set or counter 'bandwidth'"));
  r = daemon_->Client({"profile", "abl_nope"});
  EXPECT_THAT(r.err, HasSubstr("INVALID_ARGUMENT"));
  r = daemon_->Client({"run", "-v", "L1_R1_s3", "--profile-metrics", "lsu"});
  EXPECT_THAT(r.err, HasSubstr("profile_metrics: given without profile"));
  EXPECT_EQ(NcuCalls(), 0);
}

TEST_F(ProfileE2E, RunProfileStoresCountersWithTheFirstRoundAndShowsThem) {
  StartDaemon({{"ABLATION_NCU", RealOutput()}});
  auto run = daemon_->Client({"-q", "run", "-v", "abl_L1_R0_bl0_s3_sw1", "-v", "L1_R1_s3", "-s",
                              "256", "--profile", "--rounds", "2"});
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  // The live table already has the counters: they travel in the measurement's event.
  EXPECT_THAT(run.out, HasSubstr("LDS inst"));
  EXPECT_THAT(run.out, HasSubstr("67.11M"));
  EXPECT_EQ(NcuCalls(), 2);  // each item once, after its first round's timing
  EXPECT_EQ(Sql("SELECT count(DISTINCT measurement_id) FROM counters"), 2);
  EXPECT_EQ(Sql("SELECT count(*) FROM counters c JOIN measurements m ON m.id = c.measurement_id "
                "WHERE m.round != 0"),
            0);

  auto show = daemon_->Client({"show", "latest", "--metrics"});
  ASSERT_EQ(show.exit_code, 0) << show.err;
  EXPECT_THAT(show.out, HasSubstr("LSU %"));
  EXPECT_THAT(show.out, HasSubstr("16.78M"));
  auto plain = daemon_->Client({"show", "latest"});
  EXPECT_THAT(plain.out, Not(HasSubstr("LSU %")));

  auto csv = daemon_->Client({"-f", "csv", "results", "--metrics", "--variant", "L1_R1_s3"});
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  EXPECT_THAT(csv.out, HasSubstr(",ldmatrix_instructions,"));
  EXPECT_THAT(csv.out, HasSubstr(",stall_short_scoreboard,"));
  EXPECT_THAT(csv.out, HasSubstr(",16777216,"));
  auto json = daemon_->Client({"-f", "json", "results", "--metrics"});
  EXPECT_THAT(json.out, HasSubstr("\"ncu_name\":\"smsp__sass_inst_executed_op_ldsm.sum\""));
}

TEST_F(ProfileE2E, RunProfileWithoutPermissionNotesEachRowAndTimesOn) {
  StartDaemon({{"ABLATION_NCU", FakeNcu(std::string("echo '") + kPermissionError + "'\nexit 1")}});
  auto run = daemon_->Client(
      {"-q", "run", "-v", "abl_L1_R0_bl0_s3_sw1", "-v", "L1_R1_s3", "-s", "256", "--profile"});
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;  // timing went on: the run succeeded
  EXPECT_THAT(run.out, HasSubstr("not profiled: the GPU's performance counters are restricted"));
  EXPECT_THAT(run.out, HasSubstr("the timing is unaffected"));
  EXPECT_EQ(NcuCalls(), 1);  // the refusal is the host's: asked once per run
  EXPECT_EQ(Sql("SELECT count(*) FROM measurements WHERE status = 'ok'"), 2);
  EXPECT_EQ(Sql("SELECT count(*) FROM counters WHERE metric = '' AND note LIKE "
                "'%NVreg_RestrictProfilingToAdminUsers=0%'"),
            2);
  auto show = daemon_->Client({"-f", "json", "show", "latest", "--metrics"});
  EXPECT_THAT(show.out, HasSubstr("\"counters_note\":\"not profiled: "));
}

}  // namespace
}  // namespace ablation::testing
