// The command line itself, through RunApp against an in-process fake daemon: the dtype a request
// is sent with (inferred from the names, aliases, contradictions), how every command names a run
// (the argument; --run deprecated), -o FILE, one meaning per flag (-f), --version, --width, the
// completion command, and sweep taking every measuring option run takes.
#include <fnmatch.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <sstream>

#include "ablation/v1/ablation.grpc.pb.h"
#include "client/app.h"
#include "client/cli/exit_codes.h"
#include "client/commands/cmd_run.h"
#include "client/commands/cmd_sweep.h"

namespace ablation::client {
namespace {

// Records what it is asked; answers from a small catalog of the daemon's real names.
class FakeDaemon final : public v1::Ablation::Service {
 public:
  grpc::Status RunAblation(grpc::ServerContext*, const v1::RunRequest* request,
                           grpc::ServerWriter<v1::RunEvent>* writer) override {
    {
      std::lock_guard lock(mutex_);
      runs_.push_back(*request);
    }
    if (!run_status_.ok()) return run_status_;
    v1::RunEvent e;
    e.mutable_queued()->set_run_id(7);
    writer->Write(e);
    e.mutable_finished()->set_run_id(7);
    e.mutable_finished()->set_state(v1::RUN_STATE_SUCCEEDED);
    writer->Write(e);
    return grpc::Status::OK;
  }
  grpc::Status WatchRun(grpc::ServerContext*, const v1::WatchRunRequest* request,
                        grpc::ServerWriter<v1::RunEvent>* writer) override {
    Record("watch", request->run_id());
    v1::RunEvent e;
    e.mutable_finished()->set_run_id(request->run_id());
    e.mutable_finished()->set_state(v1::RUN_STATE_SUCCEEDED);
    writer->Write(e);
    return grpc::Status::OK;
  }
  grpc::Status Verify(grpc::ServerContext*, const v1::VerifyRequest* request,
                      v1::VerifyResponse* response) override {
    std::lock_guard lock(mutex_);
    verify_ = *request;
    response->set_run_id(11);
    return grpc::Status::OK;
  }
  grpc::Status Profile(grpc::ServerContext*, const v1::ProfileRequest* request,
                       v1::ProfileResponse*) override {
    std::lock_guard lock(mutex_);
    profile_ = *request;
    return grpc::Status::OK;
  }
  grpc::Status InspectSass(grpc::ServerContext*, const v1::SassRequest* request,
                           v1::SassResponse*) override {
    std::lock_guard lock(mutex_);
    sass_ = *request;
    return grpc::Status::OK;
  }
  grpc::Status Advise(grpc::ServerContext*, const v1::AdviseRequest* request,
                      v1::AdviseResponse*) override {
    std::lock_guard lock(mutex_);
    advise_ = *request;
    return grpc::Status::OK;
  }
  grpc::Status ListVariants(grpc::ServerContext*, const v1::ListVariantsRequest* request,
                            v1::ListVariantsResponse* response) override {
    static const std::map<std::string, std::vector<std::string>> kCatalog = {
        {"abl_L1_R1_bl0_s3_sw1", {"bf16", "fp16"}},
        {"cublas_bf16", {"bf16"}},
        {"cublas_fp16", {"fp16"}},
        {"pipe_cpasync_i8_64x64x32", {"int8"}},
        {"simt_at", {"fp32"}},
        {"simt_tiling", {"fp32"}}};
    std::string glob = request->glob() == "L1_R1_s3" ? "abl_L1_R1_bl0_s3_sw1" : request->glob();
    for (const auto& [name, dtypes] : kCatalog) {
      if (!glob.empty() && fnmatch(glob.c_str(), name.c_str(), 0) != 0) continue;
      v1::Variant* v = response->add_variants();
      v->set_name(name);
      for (const std::string& d : dtypes) v->add_dtypes(d);
    }
    return grpc::Status::OK;
  }
  grpc::Status ListRuns(grpc::ServerContext*, const v1::ListRunsRequest*,
                        v1::ListRunsResponse* response) override {
    Record("list", 0);
    v1::Run* run = response->add_runs();
    run->set_id(12);
    run->set_state(v1::RUN_STATE_SUCCEEDED);
    return grpc::Status::OK;
  }
  grpc::Status GetRun(grpc::ServerContext*, const v1::GetRunRequest* request,
                      v1::GetRunResponse* response) override {
    Record("get", request->run_id());
    if (request->run_id() == 404) return {grpc::StatusCode::NOT_FOUND, "no run 404"};
    response->mutable_run()->set_id(request->run_id() == 0 ? 12 : request->run_id());
    response->mutable_run()->set_state(v1::RUN_STATE_SUCCEEDED);
    return grpc::Status::OK;
  }
  grpc::Status QueryMeasurements(grpc::ServerContext*, const v1::QueryMeasurementsRequest* request,
                                 v1::QueryMeasurementsResponse* response) override {
    {
      std::lock_guard lock(mutex_);
      queries_.push_back(*request);
    }
    v1::Measurement* m = response->add_measurements();
    m->set_variant("abl_L0_R0_bl0_s1_sw0");
    m->set_dtype("bf16");
    m->mutable_shape()->set_m(4096);
    m->mutable_shape()->set_n(4096);
    m->mutable_shape()->set_k(4096);
    m->set_status(v1::MEASUREMENT_STATUS_FAILED);
    m->set_error(
        "worker died: an illegal memory access was encountered (the kernel read past its "
        "shared memory); the worker was restarted and the run went on without it");
    return grpc::Status::OK;
  }
  grpc::Status CancelRun(grpc::ServerContext*, const v1::CancelRunRequest* request,
                         v1::CancelRunResponse* response) override {
    Record("cancel", request->run_id());
    response->set_state(v1::RUN_STATE_CANCELLED);
    return grpc::Status::OK;
  }
  grpc::Status ListPresets(grpc::ServerContext*, const v1::ListPresetsRequest* request,
                           v1::ListPresetsResponse* response) override {
    if (request->name().empty() || request->name() == "toy") {
      v1::Preset* p = response->add_presets();
      p->set_name("toy");
      p->set_planned(2);
    }
    return grpc::Status::OK;
  }

  void Record(const std::string& what, std::int64_t run_id) {
    std::lock_guard lock(mutex_);
    calls_.push_back(what + " " + std::to_string(run_id));
  }

  std::mutex mutex_;
  grpc::Status run_status_;
  std::vector<v1::RunRequest> runs_;
  std::vector<v1::QueryMeasurementsRequest> queries_;
  std::vector<std::string> calls_;
  v1::VerifyRequest verify_;
  v1::ProfileRequest profile_;
  v1::SassRequest sass_;
  v1::AdviseRequest advise_;
};

class CliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    grpc::ServerBuilder builder;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port_);
    builder.RegisterService(&service_);
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
    dir_ = std::filesystem::temp_directory_path() /
           ("cli_test." + std::to_string(::getpid()) + "." +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override {
    server_->Shutdown();
    std::filesystem::remove_all(dir_);
  }

  int Run(std::vector<std::string> args) {
    args.insert(args.begin(),
                {"ablation-client", "--server", "127.0.0.1:" + std::to_string(port_)});
    std::ostringstream out, err;
    const int code = RunApp(args, out, err, &interrupted_);
    out_ = out.str();
    err_ = err.str();
    return code;
  }
  std::string LastDtype() {
    return service_.runs_.empty() ? "<no run>" : service_.runs_.back().dtype();
  }
  static std::string Read(const std::filesystem::path& path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }

  FakeDaemon service_;
  std::unique_ptr<grpc::Server> server_;
  int port_ = 0;
  std::atomic<bool> interrupted_{false};
  std::string out_, err_;
  std::filesystem::path dir_;
};

// ---- dtype

TEST_F(CliTest, RunTakesTheDtypeTheVariantNameNames) {
  // `run -v cublas_fp16` was refused ("has no bf16 kernel"): --dtype defaulted to bf16.
  ASSERT_EQ(Run({"-q", "run", "-v", "cublas_fp16"}), kExitOk) << err_;
  EXPECT_EQ(LastDtype(), "fp16");
  ASSERT_EQ(Run({"-q", "run", "-v", "pipe_*_i8_*"}), kExitOk) << err_;
  EXPECT_EQ(LastDtype(), "int8");
  // A glob or short name that names none follows the one that does.
  ASSERT_EQ(Run({"-q", "run", "-v", "cublas_fp16", "-v", "abl_L1_*"}), kExitOk) << err_;
  EXPECT_EQ(LastDtype(), "fp16");
  // Nothing named, and bf16 suits them: the daemon's default.
  ASSERT_EQ(Run({"-q", "run", "-v", "L1_R1_s3", "-v", "cublas_*"}), kExitOk) << err_;
  EXPECT_EQ(LastDtype(), "");
}

TEST_F(CliTest, RunTakesTheOnlyDtypeOfVariantsWhoseNamesNameNone) {
  ASSERT_EQ(Run({"-q", "run", "-v", "simt_at"}), kExitOk) << err_;
  EXPECT_EQ(LastDtype(), "fp32");
  ASSERT_EQ(Run({"-q", "run", "-v", "simt_*"}), kExitOk) << err_;
  EXPECT_EQ(LastDtype(), "fp32");
  const std::size_t asked = service_.runs_.size();
  EXPECT_EQ(Run({"-q", "run", "-v", "simt_at", "-v", "L1_R1_s3"}), kExitUsage);
  EXPECT_EQ(err_,
            "error: the variants have no dtype in common (simt_at: fp32; L1_R1_s3: bf16, fp16); "
            "a run measures one dtype: run them separately\n");
  EXPECT_EQ(service_.runs_.size(), asked) << "refused before the run is queued";
}

TEST_F(CliTest, DtypeAliasesAreAcceptedWhereverADtypeIs) {
  ASSERT_EQ(Run({"-q", "run", "-v", "L1_R1_s3", "--dtype", "f16"}), kExitOk) << err_;
  EXPECT_EQ(LastDtype(), "fp16");
  ASSERT_EQ(Run({"-q", "run", "-v", "pipe_cpasync_i8_64x64x32", "--dtype", "i8"}), kExitOk);
  EXPECT_EQ(LastDtype(), "int8");
  ASSERT_EQ(Run({"verify", "-v", "L1_R1_s3", "--dtype", "F16"}), kExitOk) << err_;
  EXPECT_EQ(service_.verify_.dtype(), "fp16");
  ASSERT_EQ(Run({"profile", "L1_R1_s3", "--dtype", "f16"}), kExitOk) << err_;
  EXPECT_EQ(service_.profile_.dtype(), "fp16");
  ASSERT_EQ(Run({"sass", "L1_R1_s3", "--dtype", "f16"}), kExitOk) << err_;
  EXPECT_EQ(service_.sass_.dtype(), "fp16");
  ASSERT_EQ(
      Run({"advise", "--bm", "64", "--bn", "64", "--bk", "32", "--dtype", "i8", "--arch", "sm_80"}),
      kExitOk)
      << err_;
  EXPECT_EQ(service_.advise_.dtype(), "int8");
  ASSERT_EQ(Run({"results", "--dtype", "f16"}), kExitOk) << err_;
  EXPECT_EQ(service_.queries_.back().dtype(), "fp16");
  EXPECT_EQ(Run({"run", "-v", "L1_R1_s3", "--dtype", "f8"}), kExitUsage);
  EXPECT_NE(err_.find("--dtype: 'f8' is not a dtype; use bf16, fp16 (f16), fp32 (f32), tf32, "
                      "int8 (i8) or fp8 (e4m3)"),
            std::string::npos)
      << err_;
}

TEST_F(CliTest, AnExplicitDtypeThatContradictsTheNameIsRefusedNamingBoth) {
  EXPECT_EQ(Run({"run", "-v", "cublas_fp16", "--dtype", "bf16"}), kExitUsage);
  EXPECT_EQ(err_,
            "error: --dtype bf16 contradicts the variant cublas_fp16, whose name says fp16; leave "
            "--dtype out to measure fp16, or choose a variant of bf16\n");
  EXPECT_TRUE(service_.runs_.empty());
  EXPECT_EQ(Run({"verify", "-v", "pipe_cpasync_i8_64x64x32", "--dtype", "fp16"}), kExitUsage);
  EXPECT_NE(err_.find("contradicts the variant pipe_cpasync_i8_64x64x32, whose name says int8"),
            std::string::npos);
  EXPECT_EQ(Run({"sass", "cublas_bf16", "--dtype", "f16"}), kExitUsage);
  EXPECT_NE(err_.find("--dtype fp16 contradicts the variant cublas_bf16"), std::string::npos);
  // Agreeing is fine, alias or not.
  ASSERT_EQ(Run({"-q", "run", "-v", "cublas_fp16", "--dtype", "f16"}), kExitOk) << err_;
  EXPECT_EQ(LastDtype(), "fp16");
}

TEST_F(CliTest, VariantsNamingDifferentDtypesAreOneClearError) {
  EXPECT_EQ(Run({"run", "-v", "cublas_fp16", "-v", "cublas_bf16"}), kExitUsage);
  EXPECT_EQ(err_,
            "error: the variants name different dtypes: cublas_fp16 (fp16), cublas_bf16 (bf16); "
            "a run measures one dtype: run them separately, or as a preset, whose groups may "
            "differ in dtype (see `presets`)\n");
  EXPECT_TRUE(service_.runs_.empty());
}

TEST_F(CliTest, ARefusalSaysWhereAnInferredDtypeCameFrom) {
  service_.run_status_ = {grpc::StatusCode::INVALID_ARGUMENT,
                          "variants[1]: simt_at has no fp16 kernel (it has: fp32)"};
  EXPECT_EQ(Run({"run", "-v", "cublas_fp16", "-v", "simt_at"}), kExitDataError);
  EXPECT_NE(err_.find("error: INVALID_ARGUMENT: variants[1]: simt_at has no fp16 kernel"),
            std::string::npos)
      << err_;
  EXPECT_NE(err_.find("note: dtype fp16 was inferred from the name cublas_fp16; --dtype "
                      "overrides it\n"),
            std::string::npos)
      << err_;
}

TEST_F(CliTest, VerifyAndProfileInferToo) {
  ASSERT_EQ(Run({"verify", "-v", "cublas_fp16"}), kExitOk) << err_;
  EXPECT_EQ(service_.verify_.dtype(), "fp16");
  ASSERT_EQ(Run({"profile", "pipe_cpasync_i8_64x64x32"}), kExitOk) << err_;
  EXPECT_EQ(service_.profile_.dtype(), "int8");
  ASSERT_EQ(Run({"profile", "simt_tiling"}), kExitOk) << err_;
  EXPECT_EQ(service_.profile_.dtype(), "fp32");
  ASSERT_EQ(Run({"sass", "cublas_fp16"}), kExitOk) << err_;
  EXPECT_EQ(service_.sass_.dtype(), "fp16");
}

// ---- sweep takes what run takes

TEST_F(CliTest, SweepDefinesEveryMeasuringOptionRunDefines) {
  CLI::App app;
  RunOptions run;
  SweepOptions sweep;
  CLI::App* run_cmd = SetupRun(app, run);
  CLI::App* sweep_cmd = SetupSweep(app, sweep);
  std::set<std::string> in_sweep;
  for (const CLI::Option* o : sweep_cmd->get_options()) in_sweep.insert(o->get_name());
  // What a preset decides itself: the variants and their dtypes.
  const std::set<std::string> the_presets = {"--variant", "--dtype"};
  int checked = 0;
  for (const CLI::Option* o : run_cmd->get_options()) {
    if (the_presets.count(o->get_name()) > 0) continue;
    EXPECT_EQ(in_sweep.count(o->get_name()), 1u) << "sweep lacks run's " << o->get_name();
    ++checked;
  }
  EXPECT_GE(checked, 17);  // timing, L2, clocks, rounds, seed, device, tag, shape, profile, ...
}

TEST_F(CliTest, SweepSendsEveryTimingClockAndRoundsOption) {
  ASSERT_EQ(Run({"-q",
                 "sweep",
                 "--preset",
                 "toy",
                 "--min-samples",
                 "20",
                 "--max-seconds",
                 "2.5",
                 "--target-noise",
                 "0.01",
                 "--rounds",
                 "5",
                 "--order-seed",
                 "99",
                 "--lock-sm-clock",
                 "max",
                 "--lock-mem-clock",
                 "1593",
                 "--flush-l2",
                 "--fresh-inputs",
                 "--verify",
                 "--device",
                 "1",
                 "--profile",
                 "--profile-metrics",
                 "lsu",
                 "--tag",
                 "t",
                 "--shape",
                 "512"}),
            kExitOk)
      << err_;
  ASSERT_EQ(service_.runs_.size(), 1u);
  const v1::RunRequest& r = service_.runs_[0];
  EXPECT_EQ(r.preset(), "toy");
  EXPECT_EQ(r.timing().min_samples(), 20);
  EXPECT_DOUBLE_EQ(r.timing().max_seconds(), 2.5);
  EXPECT_DOUBLE_EQ(r.timing().target_noise(), 0.01);
  EXPECT_TRUE(r.timing().flush_l2());
  EXPECT_TRUE(r.timing().fresh_inputs());
  EXPECT_EQ(r.rounds(), 5);
  EXPECT_EQ(r.order_seed(), 99u);
  EXPECT_EQ(r.clocks().mode(), v1::CLOCK_MODE_LOCK);
  EXPECT_EQ(r.clocks().sm_mhz(), "max");
  EXPECT_EQ(r.clocks().mem_mhz(), "1593");
  EXPECT_TRUE(r.verify());
  EXPECT_EQ(r.device(), 1);
  EXPECT_TRUE(r.profile());
  ASSERT_EQ(r.profile_metrics_size(), 1);
  EXPECT_EQ(r.tags(0), "t");
  ASSERT_EQ(r.shapes_size(), 1);
  EXPECT_EQ(r.dtype(), "");  // the preset's
  ASSERT_EQ(Run({"-q", "sweep", "--preset", "toy", "--hot-l2"}), kExitOk) << err_;
  EXPECT_TRUE(service_.runs_.back().timing().hot_l2());
  EXPECT_FALSE(service_.runs_.back().timing().fresh_inputs());
}

// ---- one way to name a run

TEST_F(CliTest, EveryCommandTakesTheRunAsItsArgument) {
  ASSERT_EQ(Run({"show", "5"}), kExitOk) << err_;
  ASSERT_EQ(Run({"report", "6"}), kExitOk) << err_;
  ASSERT_EQ(Run({"watch", "8"}), kExitOk) << err_;
  ASSERT_EQ(Run({"cancel", "9"}), kExitOk) << err_;
  ASSERT_EQ(Run({"results", "10"}), kExitOk) << err_;
  EXPECT_EQ(service_.queries_.back().run_id(), 10);
  for (const char* call : {"get 5", "get 6", "watch 8", "cancel 9"})
    EXPECT_NE(std::find(service_.calls_.begin(), service_.calls_.end(), call),
              service_.calls_.end())
        << call;
  // 'latest' where a stored run is read; results resolves it to the newest run's id.
  ASSERT_EQ(Run({"results", "latest"}), kExitOk) << err_;
  EXPECT_EQ(service_.queries_.back().run_id(), 12);
  ASSERT_EQ(Run({"results"}), kExitOk) << err_;
  EXPECT_EQ(service_.queries_.back().run_id(), 0);  // every run
}

TEST_F(CliTest, TheOldRunOptionStillWorksAndSaysWhatToWrite) {
  ASSERT_EQ(Run({"report", "--run", "6"}), kExitOk) << err_;
  EXPECT_EQ(err_.find("warning: `report --run 6` is deprecated; write `report 6`\n"), 0u) << err_;
  EXPECT_EQ(service_.calls_.back(), "get 6");
  ASSERT_EQ(Run({"results", "--run", "10"}), kExitOk) << err_;
  EXPECT_EQ(service_.queries_.back().run_id(), 10);
  EXPECT_NE(err_.find("warning: `results --run 10` is deprecated; write `results 10`"),
            std::string::npos);
  ASSERT_EQ(Run({"-q", "show", "--run", "5"}), kExitOk) << err_;
  EXPECT_EQ(err_, "");  // --quiet: no warning
  ASSERT_EQ(Run({"cancel", "--run", "9"}), kExitOk) << err_;
  EXPECT_EQ(service_.calls_.back(), "cancel 9");
  // The same run both ways is that run; two different ones is bad usage.
  ASSERT_EQ(Run({"show", "5", "--run", "5"}), kExitOk) << err_;
  EXPECT_EQ(Run({"show", "5", "--run", "6"}), kExitUsage);
  EXPECT_NE(err_.find("the run is given twice ('5' and '6')"), std::string::npos) << err_;
}

TEST_F(CliTest, ACommandThatNeedsARunSaysSo) {
  EXPECT_EQ(Run({"watch"}), kExitUsage);
  EXPECT_NE(err_.find("RUN (the run, e.g. `watch 42`) is required"), std::string::npos) << err_;
  EXPECT_EQ(Run({"cancel"}), kExitUsage);
  EXPECT_EQ(Run({"cancel", "latest"}), kExitUsage);  // cancelling needs the id
  EXPECT_EQ(Run({"results", "abc"}), kExitUsage);
  EXPECT_NE(err_.find("'abc': expected a run id (a positive integer) or 'latest'"),
            std::string::npos)
      << err_;
}

// ---- -o FILE, -f, --version, --width

TEST_F(CliTest, OutputGoesToTheFileInsteadOfStdout) {
  const std::string file = (dir_ / "runs.csv").string();
  ASSERT_EQ(Run({"runs", "-f", "csv", "-o", file}), kExitOk) << err_;
  EXPECT_EQ(out_, "");
  EXPECT_EQ(Read(file).substr(0, 3), "id,");
  // Any command, global option before or after it; an existing file is replaced.
  ASSERT_EQ(Run({"-o", file, "show", "5"}), kExitOk) << err_;
  EXPECT_NE(Read(file).find("run           5"), std::string::npos) << Read(file);
  ASSERT_EQ(Run({"report", "5", "--format", "html", "--output", file}), kExitOk) << err_;
  EXPECT_EQ(Read(file).rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(err_.find("report of run 5 written to " + file), std::string::npos) << err_;
  // "-" is stdout.
  ASSERT_EQ(Run({"runs", "-o", "-"}), kExitOk);
  EXPECT_NE(out_.find("succeeded"), std::string::npos);
  // No temporary file is left beside it.
  int entries = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir_)) entries += e.exists();
  EXPECT_EQ(entries, 1);
}

TEST_F(CliTest, ACommandRefusedBeforeItPrintedLeavesTheFileAlone) {
  const std::string file = (dir_ / "kept.txt").string();
  std::ofstream(file) << "yesterday's report\n";
  EXPECT_EQ(Run({"show", "404", "-o", file}), kExitDataError);
  EXPECT_NE(err_.find("NOT_FOUND"), std::string::npos);
  EXPECT_EQ(Read(file), "yesterday's report\n");
}

TEST_F(CliTest, AnUnwritableOutputIsRefusedBeforeAnythingRuns) {
  EXPECT_EQ(Run({"run", "-v", "L1_R1_s3", "-o", (dir_ / "no" / "such" / "dir.txt").string()}),
            kExitUsage);
  EXPECT_NE(err_.find("error: -o: cannot write in "), std::string::npos) << err_;
  EXPECT_EQ(Run({"runs", "-o", dir_.string()}), kExitUsage);
  EXPECT_NE(err_.find("is a directory"), std::string::npos) << err_;
  EXPECT_TRUE(service_.runs_.empty());
}

TEST_F(CliTest, FormatIsOneFlagWithOneMeaning) {
  // report used to have its own -f (md|html|csv|json); now -f/--format is the global one.
  ASSERT_EQ(Run({"report", "5", "-f", "html"}), kExitOk) << err_;
  EXPECT_EQ(out_.rfind("<!DOCTYPE html>", 0), 0u);
  ASSERT_EQ(Run({"-f", "md", "report", "5"}), kExitOk) << err_;
  EXPECT_EQ(out_.rfind("# Ablation report: run 5", 0), 0u) << out_;
  ASSERT_EQ(Run({"report", "5"}), kExitOk);  // table: Markdown, as before
  EXPECT_EQ(out_.rfind("# Ablation report: run 5", 0), 0u);
  ASSERT_EQ(Run({"report", "5", "-f", "json"}), kExitOk);
  EXPECT_EQ(out_.front(), '{');
  EXPECT_EQ(Run({"runs", "-f", "html"}), kExitUsage);
  EXPECT_EQ(err_,
            "error: --format html is for report and history; use table, json, csv or markdown\n");
}

TEST_F(CliTest, VersionNamesTheClientAndItsRevision) {
  EXPECT_EQ(Run({"--version"}), kExitOk);
  EXPECT_EQ(out_.rfind("ablation-client 0.1.0 (git ", 0), 0u) << out_;
  EXPECT_TRUE(service_.calls_.empty());
}

TEST_F(CliTest, TablesFitTheWidth) {
  auto widest = [](const std::string& text) {
    std::size_t widest = 0, width = 0;
    for (unsigned char c : text) {
      if (c == '\n') {
        widest = std::max(widest, width);
        width = 0;
      } else {
        width += (c & 0xC0) != 0x80;
      }
    }
    return widest;
  };
  ASSERT_EQ(Run({"results", "--width", "0"}), kExitOk);
  EXPECT_GT(widest(out_), 200u);  // the error on one line
  ASSERT_EQ(Run({"results", "--width", "80"}), kExitOk);
  EXPECT_LE(widest(out_), 80u) << out_;
  EXPECT_NE(out_.find("worker died: an illegal"), std::string::npos) << out_;
  // Not a terminal: $COLUMNS.
  setenv("COLUMNS", "100", 1);
  ASSERT_EQ(Run({"results"}), kExitOk);
  unsetenv("COLUMNS");
  EXPECT_LE(widest(out_), 100u) << out_;
  EXPECT_GT(widest(out_), 80u) << out_;
  // CSV and JSON are for machines: never wrapped.
  ASSERT_EQ(Run({"results", "--width", "80", "-f", "csv"}), kExitOk);
  EXPECT_GT(widest(out_), 200u);
}

TEST_F(CliTest, CompletionNeedsNoDaemon) {
  std::ostringstream out, err;
  // Port 1: nothing listens; the completion script is made from the parser alone.
  ASSERT_EQ(RunApp({"ablation-client", "--server", "127.0.0.1:1", "completion", "bash"}, out, err),
            kExitOk);
  EXPECT_NE(out.str().find("complete -F _ablation_client ablation-client"), std::string::npos);
  EXPECT_EQ(Run({"completion", "fish"}), kExitUsage);
}

}  // namespace
}  // namespace ablation::client
