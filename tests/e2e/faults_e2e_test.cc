// Faults that used to cost minutes or leave things behind, end to end with the fake worker: a
// run outlives its client (run --detach, watch), a hang is declared within twice the
// measurement's budget plus the margin, the worker dies with a SIGKILLed daemon, and a Verify
// whose client leaves is cancelled.
#include <signal.h>
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include <gmock/gmock.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include "db/store.h"
#include "tests/e2e/harness.h"

namespace ablation::testing {
namespace {

using ::testing::HasSubstr;
using Clock = std::chrono::steady_clock;

class Faults : public ::testing::Test {
 protected:
  void StartDaemon(std::map<std::string, std::string> env, const std::string& config = "") {
    dir_ = MakeTempDir();
    daemon_ = std::make_unique<Daemon>(dir_, FAKE_WORKER_PATH, std::move(env));
    if (!config.empty()) {
      std::ofstream(dir_ + "/ablationd.toml") << config;
      daemon_->set_extra_args({"--config", dir_ + "/ablationd.toml"});
    }
    ASSERT_EQ(daemon_->Start(), "");
  }
  void TearDown() override {
    if (daemon_) daemon_->Stop(SIGTERM);
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }
  v1::RunState WaitForEnd(int64_t run_id, int seconds) {
    for (int i = 0; i < seconds * 10; ++i) {
      auto run = db::Store::OpenReadOnly(daemon_->db_path())->GetRun(run_id);
      if (run && run->state() != v1::RUN_STATE_QUEUED && run->state() != v1::RUN_STATE_RUNNING)
        return run->state();
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return v1::RUN_STATE_RUNNING;
  }

  std::string dir_;
  std::unique_ptr<Daemon> daemon_;
};

TEST_F(Faults, DetachedRunGoesOnAndWatchFollowsItToTheEnd) {
  StartDaemon({{"ABLATION_FAKE_SLEEP_MS", "300"}});
  CommandResult detached =
      daemon_->Client({"run", "--detach", "--variant", "abl_L1_R1_bl0_s*_sw1", "--shape", "256"});
  ASSERT_EQ(detached.exit_code, 0) << detached.err;
  const std::string run_id = detached.out.substr(0, detached.out.find('\n'));
  EXPECT_THAT(detached.err, HasSubstr("watch " + run_id));
  CommandResult watched = daemon_->Client({"watch", run_id, "--format", "csv"});
  EXPECT_EQ(watched.exit_code, 0) << watched.err;
  // The table is the whole run's, also the measurements made before the watch began.
  EXPECT_EQ(std::count(watched.out.begin(), watched.out.end(), '\n'), 1 + 4) << watched.out;
  // Watching a run that is over answers at once with how it ended.
  CommandResult again = daemon_->Client({"watch", run_id});
  EXPECT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(daemon_->Client({"watch", "9999"}).exit_code, 65);  // the daemon refused the input
}

TEST_F(Faults, HangIsDeclaredWithinTwiceTheBudgetPlusTheMargin) {
  StartDaemon({{"ABLATION_FAKE_HANG_ON", "abl_L1_R1_bl0_s2_sw1"}}, "hang_margin_seconds = 2\n");
  v1::RunRequest request;
  request.add_variants("abl_L1_R1_bl0_s2_sw1");
  request.add_variants("abl_L1_R1_bl0_s3_sw1");
  auto* s = request.add_shapes();
  s->set_m(256);
  s->set_n(256);
  s->set_k(256);
  request.mutable_timing()->set_max_seconds(0.3);
  request.mutable_timing()->set_min_seconds(0.001);
  request.mutable_timing()->set_warmup_seconds(0.01);
  // Each in a window of its own, so that the hang is its window's alone (a window of both would
  // hang, and then be measured apart: a second hang).
  request.set_unpaired(true);
  // The first task of a window is a settling chunk of 0.25 s with the warm-up: budget 3 * 0.25 +
  // 1 + 0.3 (the warm-up's bound, max_seconds) = 2.05 s; declared hung after 2 * 2.05 + 2 = 6.1 s.
  auto stub = daemon_->Stub();
  grpc::ClientContext ctx;
  auto reader = stub->RunAblation(&ctx, request);
  v1::RunEvent event;
  std::vector<v1::Measurement> ms;
  Clock::time_point started;
  double hang_seconds = 0;
  while (reader->Read(&event)) {
    if (event.has_started()) started = Clock::now();
    if (event.has_measurement()) {
      if (ms.empty()) hang_seconds = std::chrono::duration<double>(Clock::now() - started).count();
      ms.push_back(event.measurement());
    }
  }
  ASSERT_TRUE(reader->Finish().ok());
  ASSERT_EQ(ms.size(), 2u);
  EXPECT_EQ(ms[0].status(), v1::MEASUREMENT_STATUS_FAILED);
  EXPECT_THAT(ms[0].error(), HasSubstr("did not answer within 6 s"));
  EXPECT_GE(hang_seconds, 6.0);
  EXPECT_LT(hang_seconds, 9.0);
  EXPECT_EQ(ms[1].status(), v1::MEASUREMENT_STATUS_OK) << "a new worker takes over";
}

TEST_F(Faults, AWorkerDiesWithItsSigkilledDaemonEvenMidMeasurement) {
  StartDaemon({{"ABLATION_FAKE_SLEEP_MS", "60000"}});
  auto workers = ChildrenNamed(daemon_->pid(), "fake-worker");
  ASSERT_EQ(workers.size(), 1u);
  const pid_t worker = workers[0];
  // A measurement of a minute under way, then the daemon is killed outright.
  CommandResult detached =
      daemon_->Client({"run", "--detach", "--variant", "cublas_bf16", "--shape", "256"});
  ASSERT_EQ(detached.exit_code, 0) << detached.err;
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  daemon_->Stop(SIGKILL);
  const std::string proc = "/proc/" + std::to_string(worker);
  bool gone = false;
  for (int i = 0; i < 30 && !gone; ++i) {
    struct stat st;
    // Gone, or a zombie waiting for init to reap it: either way it holds nothing.
    std::ifstream status(proc + "/stat");
    std::string text((std::istreambuf_iterator<char>(status)), {});
    gone = ::stat(proc.c_str(), &st) != 0 || text.find(") Z ") != std::string::npos;
    if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_TRUE(gone) << "worker " << worker << " outlived its daemon";
  daemon_.reset();
}

TEST_F(Faults, VerifyWhoseClientLeavesIsCancelled) {
  StartDaemon({{"ABLATION_FAKE_SLEEP_MS", "400"}});
  v1::VerifyRequest request;
  request.add_variants("abl_L1_R1_bl0_s*_sw1");
  for (int k = 256; k <= 256 * 6; k += 256) {
    auto* s = request.add_shapes();
    s->set_m(256);
    s->set_n(256);
    s->set_k(k);
  }  // 4 variants x 6 shapes at 0.4 s: ~10 s if it ran to its end
  auto stub = daemon_->Stub();
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(1000));
  v1::VerifyResponse response;
  EXPECT_EQ(stub->Verify(&ctx, request, &response).error_code(),
            grpc::StatusCode::DEADLINE_EXCEEDED);
  auto store = db::Store::OpenReadOnly(daemon_->db_path());
  const int64_t run_id = store->LatestRun()->id();
  EXPECT_EQ(WaitForEnd(run_id, 5), v1::RUN_STATE_CANCELLED);
  EXPECT_LT(store->VerificationsOfRun(run_id).size(), 24u);
}

// A worker killed while the GPU is idle is noticed, recorded and restarted before the next run:
// that run's first measurement no longer fails with "worker died (signal 9)" (a fault outside
// the run was charged to it before).
TEST_F(Faults, AWorkerKilledWhileIdleIsRestartedBeforeTheNextRun) {
  StartDaemon({});
  auto workers = ChildrenNamed(daemon_->pid(), "fake-worker");
  ASSERT_EQ(workers.size(), 1u);
  ASSERT_EQ(::kill(workers[0], SIGKILL), 0);
  // Noticed within the idle check's second, without any call: a new worker, and the log says so.
  std::vector<pid_t> now;
  for (int i = 0; i < 50; ++i) {
    now = ChildrenNamed(daemon_->pid(), "fake-worker");
    if (now.size() == 1 && now[0] != workers[0]) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_EQ(now.size(), 1u);
  EXPECT_NE(now[0], workers[0]);
  std::ifstream out(dir_ + "/daemon.out");  // spdlog writes to stdout
  EXPECT_THAT(std::string(std::istreambuf_iterator<char>(out), {}),
              HasSubstr("the worker died while the GPU was idle (signal 9"));
  // The next run has nothing to do with it: every measurement succeeds.
  CommandResult run = daemon_->Client({"run", "--variant", "cublas_bf16", "--shape", "256"});
  EXPECT_EQ(run.exit_code, 0) << run.err << run.out;
  auto stored = db::Store::OpenReadOnly(daemon_->db_path())->LatestRun();
  ASSERT_TRUE(stored);
  EXPECT_EQ(stored->state(), v1::RUN_STATE_SUCCEEDED);
  EXPECT_EQ(stored->failed(), 0);
}

// The same when the death falls between the idle check and the run: the run's start looks first.
TEST_F(Faults, AWorkerKilledJustBeforeARunIsRestartedByThatRunsStart) {
  StartDaemon({});
  auto workers = ChildrenNamed(daemon_->pid(), "fake-worker");
  ASSERT_EQ(workers.size(), 1u);
  ASSERT_EQ(::kill(workers[0], SIGKILL), 0);
  CommandResult run = daemon_->Client({"run", "--variant", "cublas_bf16", "--shape", "256"});
  EXPECT_EQ(run.exit_code, 0) << run.err << run.out;
  EXPECT_EQ(db::Store::OpenReadOnly(daemon_->db_path())->LatestRun()->failed(), 0);
}

}  // namespace
}  // namespace ablation::testing
