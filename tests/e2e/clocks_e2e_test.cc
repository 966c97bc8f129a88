// Clock locking and telemetry through the real daemon, against the stand-in NVML library
// (tests/support/fake_nvml.cc), which records every call: each lock must be followed by its reset
// on every way out of a run. No test here can reach a real GPU's clock controls: the daemon is
// always pointed at the stand-in with --nvml-library.
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include <cerrno>
#include <cstring>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include <gmock/gmock.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include "db/store.h"
#include "tests/e2e/harness.h"

namespace ablation::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

class Clocks : public ::testing::Test {
 protected:
  void StartDaemon(std::map<std::string, std::string> env = {}) {
    if (dir_.empty()) dir_ = MakeTempDir();
    env["FAKE_NVML_LOG"] = log_path();
    daemon_ = std::make_unique<Daemon>(dir_, FAKE_WORKER_PATH, env);
    daemon_->set_extra_args({"--nvml-library", FAKE_NVML_PATH});
    ASSERT_EQ(daemon_->Start(), "");
    guard_ = GuardPid();
  }
  void TearDown() override {
    if (daemon_) daemon_->Stop(SIGTERM);
    // The guard may still be resetting, writing into dir_, just after its daemon's end.
    if (guard_ > 0) GoneWithin10s(guard_);
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }
  std::string log_path() const { return dir_ + "/nvml-calls.log"; }

  // The NVML calls that change clocks, in order ("lock_gpu ...", "reset_gpu", ...).
  std::vector<std::string> ClockCalls() const {
    std::ifstream in(log_path());
    std::vector<std::string> out;
    std::string line;
    while (std::getline(in, line))
      if (line.rfind("lock_", 0) == 0 || line.rfind("reset_", 0) == 0) out.push_back(line);
    return out;
  }
  // Every successful lock is followed, later, by a successful reset of the same clock.
  void ExpectEveryLockReset() const {
    int gpu = 0, mem = 0;
    for (const auto& c : ClockCalls()) {
      bool ok = c.find("rc=0") != std::string::npos;
      if (!ok) continue;
      if (c.rfind("lock_gpu", 0) == 0) ++gpu;
      if (c.rfind("reset_gpu", 0) == 0 && gpu > 0) --gpu;
      if (c.rfind("lock_mem", 0) == 0) ++mem;
      if (c.rfind("reset_mem", 0) == 0 && mem > 0) --mem;
    }
    EXPECT_EQ(gpu, 0) << "an SM clock lock was never reset";
    EXPECT_EQ(mem, 0) << "a memory clock lock was never reset";
  }
  bool HasLock() const {
    for (const auto& c : ClockCalls())
      if (c.rfind("lock_gpu", 0) == 0 && c.find("rc=0") != std::string::npos) return true;
    return false;
  }

  // What the daemon (and its guard) logged on stdout (its stderr is daemon_->log()).
  std::string Out() const {
    std::ifstream in(dir_ + "/daemon.out");
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }
  // The daemon's clock guard (server/core/gpu/clock_guard.h): its child named ablationd-guard.
  pid_t GuardPid() const {
    auto guards = ChildrenNamed(daemon_->pid(), "ablationd-guard");
    return guards.size() == 1 ? guards[0] : -1;
  }
  // Waits (at most 10 s) until no process runs `pid` any more (the guard, once reparented, is
  // reaped by init or the nearest subreaper, not by this test).
  static bool GoneWithin10s(pid_t pid) {
    for (int i = 0; i < 500; ++i) {
      if (::kill(pid, 0) != 0 && errno == ESRCH) return true;
      std::string stat;
      std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
      std::getline(in, stat);
      if (stat.find(") Z") != std::string::npos) return true;  // ended, not yet reaped
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return false;
  }
  int Resets() const {
    int n = 0;
    for (const auto& c : ClockCalls()) n += c.rfind("reset_gpu", 0) == 0;
    return n;
  }
  // Starts a locked run on a streaming thread and returns once the lock is held.
  std::thread LockedRunUnderWay() {
    std::thread streamer([this] {
      std::vector<v1::RunEvent> events;
      Stream(LockRequest(), &events);
    });
    for (int i = 0; i < 100 && !HasLock(); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    return streamer;
  }

  static v1::RunRequest LockRequest(int variants_glob_stages = 4) {
    v1::RunRequest req;
    req.add_variants(variants_glob_stages == 1 ? "abl_L1_R1_bl0_s1_sw1" : "abl_L1_R1_bl0_s*_sw1");
    auto* s = req.add_shapes();
    s->set_m(256);
    s->set_n(256);
    s->set_k(256);
    req.mutable_clocks()->set_mode(v1::CLOCK_MODE_LOCK);
    req.mutable_clocks()->set_sm_mhz("max");
    req.mutable_clocks()->set_mem_mhz("max");
    return req;
  }

  grpc::Status Stream(const v1::RunRequest& req, std::vector<v1::RunEvent>* events) {
    auto stub = daemon_->Stub();
    grpc::ClientContext ctx;
    auto reader = stub->RunAblation(&ctx, req);
    v1::RunEvent ev;
    while (reader->Read(&ev)) events->push_back(ev);
    return reader->Finish();
  }

  std::string dir_;
  std::unique_ptr<Daemon> daemon_;
  pid_t guard_ = -1;  ///< the last started daemon's clock guard
};

TEST_F(Clocks, LockedRunLocksBeforeAndResetsAfterAndRecordsPolicyAndTelemetry) {
  StartDaemon();
  std::vector<v1::RunEvent> events;
  ASSERT_TRUE(Stream(LockRequest(), &events).ok());
  ASSERT_TRUE(events.back().has_finished());
  EXPECT_EQ(events.back().finished().state(), v1::RUN_STATE_SUCCEEDED);
  auto calls = ClockCalls();
  ASSERT_FALSE(calls.empty());
  EXPECT_THAT(calls.front(), HasSubstr("lock_"));
  ExpectEveryLockReset();
  auto store = db::Store::OpenReadOnly(daemon_->db_path());
  auto run = store->LatestRun();
  ASSERT_TRUE(run);
  EXPECT_EQ(run->clock_policy(), "lock sm=1980 mem=3201");
  auto ms = store->MeasurementsOfRun(run->id(), false);
  ASSERT_EQ(ms.size(), 4u);
  for (const auto& m : ms) {
    EXPECT_EQ(m.clock_policy(), "lock sm=1980 mem=3201");
    // The bandwidth each row is held against is the one measured under its run's clocks (the
    // test double's: 3.9 TB/s locked, 4.2 in observe mode).
    EXPECT_EQ(m.roofline().roofline_bandwidth(), 3.9e12);
    EXPECT_TRUE(m.telemetry().available()) << m.telemetry().unavailable_reason();
    EXPECT_GT(m.telemetry().sm_clock_mhz_mean(), 0);
    EXPECT_GT(m.telemetry().power_w_max(), 0);
  }
  EXPECT_FALSE(std::filesystem::exists(daemon_->db_path() + ".clocks"))
      << "the journal is empty once the lock is reset";
}

TEST_F(Clocks, ObserveNeverTouchesClocksButRecordsTelemetryAndGetDeviceShowsLiveValues) {
  StartDaemon();
  auto req = LockRequest();
  req.clear_clocks();
  std::vector<v1::RunEvent> events;
  ASSERT_TRUE(Stream(req, &events).ok());
  EXPECT_TRUE(ClockCalls().empty());
  auto store = db::Store::OpenReadOnly(daemon_->db_path());
  auto ms = store->MeasurementsOfRun(store->LatestRun()->id(), false);
  ASSERT_FALSE(ms.empty());
  EXPECT_EQ(ms[0].clock_policy(), "observe");
  EXPECT_TRUE(ms[0].telemetry().available());

  grpc::ClientContext ctx;
  v1::GetDeviceRequest dreq;
  v1::GetDeviceResponse dresp;
  ASSERT_TRUE(daemon_->Stub()->GetDevice(&ctx, dreq, &dresp).ok());
  EXPECT_TRUE(dresp.live().available()) << dresp.live().unavailable_reason();
  EXPECT_GT(dresp.live().sm_clock_mhz_mean(), 0);
  EXPECT_FALSE(dresp.supported_sm_clocks_mhz().empty());
  EXPECT_FALSE(dresp.supported_mem_clocks_mhz().empty());
}

TEST_F(Clocks, CancelledRunResetsItsLock) {
  StartDaemon({{"ABLATION_FAKE_SLEEP_MS", "300"}});
  auto stub = daemon_->Stub();
  grpc::ClientContext ctx;
  // 16 measurements of 300 ms: the cancel sent at the first lands long before the last even on a
  // loaded machine (with 4, a cancel 0.9 s late found the run done, once, in a full suite run).
  v1::RunRequest request = LockRequest();
  for (int k : {512, 768, 1024}) {
    auto* shape = request.add_shapes();
    shape->set_m(256);
    shape->set_n(256);
    shape->set_k(k);
  }
  auto reader = stub->RunAblation(&ctx, request);
  v1::RunEvent ev;
  int64_t run_id = 0;
  while (reader->Read(&ev)) {
    if (ev.has_queued()) run_id = ev.queued().run_id();
    if (ev.has_measurement()) {
      grpc::ClientContext c2;
      v1::CancelRunRequest creq;
      creq.set_run_id(run_id);
      v1::CancelRunResponse cresp;
      ASSERT_TRUE(stub->CancelRun(&c2, creq, &cresp).ok());
    }
  }
  ASSERT_TRUE(reader->Finish().ok());
  EXPECT_EQ(ev.finished().state(), v1::RUN_STATE_CANCELLED);
  EXPECT_TRUE(HasLock());
  ExpectEveryLockReset();
}

TEST_F(Clocks, RunWhoseWorkerDiesStillResetsItsLock) {
  StartDaemon({{"ABLATION_FAKE_CRASH_ON", "abl_L1_R1_bl0_s2_sw1"}});
  std::vector<v1::RunEvent> events;
  ASSERT_TRUE(Stream(LockRequest(), &events).ok());
  EXPECT_EQ(events.back().finished().state(), v1::RUN_STATE_PARTIAL);
  EXPECT_TRUE(HasLock());
  ExpectEveryLockReset();
}

TEST_F(Clocks, RunThatFailsEveryMeasurementStillResetsItsLock) {
  StartDaemon({{"ABLATION_FAKE_CRASH_ON", "abl_L1_R1_bl0_s1_sw1"}});
  std::vector<v1::RunEvent> events;
  ASSERT_TRUE(Stream(LockRequest(1), &events).ok());
  EXPECT_EQ(events.back().finished().state(), v1::RUN_STATE_FAILED);
  EXPECT_TRUE(HasLock());
  ExpectEveryLockReset();
}

// The daemon resets the lock on its way out; its clock guard finds nothing of it left in the
// journal, resets nothing a second time and ends with the daemon.
TEST_F(Clocks, SigtermDuringALockedRunResetsTheLock) {
  StartDaemon({{"ABLATION_FAKE_SLEEP_MS", "400"}});
  const pid_t guard = GuardPid();
  ASSERT_GT(guard, 0) << "no ablationd-guard child of the daemon";
  std::thread streamer = LockedRunUnderWay();
  ASSERT_TRUE(HasLock());
  int st = daemon_->Stop(SIGTERM);
  streamer.join();
  EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  ExpectEveryLockReset();
  EXPECT_TRUE(GoneWithin10s(guard)) << "the guard outlived its daemon";
  EXPECT_EQ(Resets(), 1) << "reset twice";
  EXPECT_THAT(Out(), Not(HasSubstr("clock lock(s) of daemon pid")));
}

// A fatal signal while a lock is held (abort, a segfault, a bus error, a floating-point trap:
// sent from outside here, which runs the same handler as the fault itself) resets the lock before
// the daemon dies, best effort (clock_lock.h), then dies of that signal as it would have; the
// journal entry stays for the next start, whose second reset is harmless.
TEST_F(Clocks, AFatalSignalResetsTheLockBeforeTheDaemonDies) {
  const rlimit no_core{0, 0};  // the daemon inherits it: no core files from this test
  ASSERT_EQ(::setrlimit(RLIMIT_CORE, &no_core), 0);
  for (int sig : {SIGABRT, SIGSEGV, SIGBUS, SIGFPE}) {
    SCOPED_TRACE(strsignal(sig));
    StartDaemon({{"ABLATION_FAKE_SLEEP_MS", "400"}});
    std::thread streamer = LockedRunUnderWay();
    ASSERT_TRUE(HasLock());
    const int st = daemon_->Stop(sig);
    streamer.join();
    EXPECT_TRUE(WIFSIGNALED(st) && WTERMSIG(st) == sig) << st;
    ExpectEveryLockReset();
    EXPECT_THAT(daemon_->log(), HasSubstr("1 clock lock(s) reset before exiting"));
    EXPECT_TRUE(GoneWithin10s(guard_));  // it resets the journal's entry too (a harmless second)
    daemon_.reset();
    std::filesystem::remove(log_path());
    std::filesystem::remove(dir_ + "/daemon.log");
  }
}

TEST_F(Clocks, DaemonKilledWithALockResetsItAtTheNextStartAndOnDemand) {
  StartDaemon({{"ABLATION_FAKE_SLEEP_MS", "400"}});
  std::thread streamer = LockedRunUnderWay();
  ASSERT_TRUE(HasLock());
  // Its guard killed first (as when the daemon is a container's PID 1, whose death takes every
  // process of the namespace with it): only the journal is left to undo the lock.
  const pid_t guard = GuardPid();
  ASSERT_GT(guard, 0);
  ASSERT_EQ(::kill(guard, SIGKILL), 0);
  daemon_->Stop(SIGKILL);
  streamer.join();
  // The lock is left behind, recorded in the journal.
  ASSERT_TRUE(std::filesystem::exists(daemon_->db_path() + ".clocks"));
  int gpu_locks = 0;
  for (const auto& c : ClockCalls()) gpu_locks += c.rfind("reset_gpu", 0) == 0;
  EXPECT_EQ(gpu_locks, 0) << "nothing reset it yet";

  // --reset-clocks does it on demand (systemd ExecStopPost=)...
  auto reset = RunCommand({ABLATIOND_PATH, "--db", daemon_->db_path(), "--nvml-library",
                           FAKE_NVML_PATH, "--reset-clocks"},
                          {{"FAKE_NVML_LOG", log_path()}});
  EXPECT_EQ(reset.exit_code, 0) << reset.err;
  EXPECT_THAT(reset.out, HasSubstr("1 GPU(s) reset"));
  ExpectEveryLockReset();
  EXPECT_FALSE(std::filesystem::exists(daemon_->db_path() + ".clocks"));
}

TEST_F(Clocks, DaemonRestartedAfterSigkillResetsTheLockItLeft) {
  StartDaemon({{"ABLATION_FAKE_SLEEP_MS", "400"}});
  std::thread streamer = LockedRunUnderWay();
  ASSERT_TRUE(HasLock());
  const pid_t guard = GuardPid();  // killed first: only the journal is left (see above)
  ASSERT_GT(guard, 0);
  ASSERT_EQ(::kill(guard, SIGKILL), 0);
  daemon_->Stop(SIGKILL);
  streamer.join();
  EXPECT_EQ(Resets(), 0);
  StartDaemon();
  ExpectEveryLockReset();
  EXPECT_FALSE(std::filesystem::exists(daemon_->db_path() + ".clocks"));
}

// SIGKILL (the OOM killer, kill -9) runs nothing in the daemon: its guard, a process of its own
// waiting for the daemon's end, resets the lock at once, without a restart, and then ends.
TEST_F(Clocks, ADaemonKilledOutrightHasItsLockResetByItsGuardAtOnce) {
  StartDaemon({{"ABLATION_FAKE_SLEEP_MS", "400"}});
  const pid_t guard = GuardPid();
  ASSERT_GT(guard, 0) << "no ablationd-guard child of the daemon";
  std::thread streamer = LockedRunUnderWay();
  ASSERT_TRUE(HasLock());
  const pid_t daemon_pid = daemon_->pid();
  const int st = daemon_->Stop(SIGKILL);
  streamer.join();
  EXPECT_TRUE(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL) << st;
  EXPECT_TRUE(GoneWithin10s(guard)) << "the guard outlived its daemon";
  ExpectEveryLockReset();
  EXPECT_EQ(Resets(), 1);
  EXPECT_FALSE(std::filesystem::exists(daemon_->db_path() + ".clocks"));
  EXPECT_THAT(Out(),
              HasSubstr("1 clock lock(s) of daemon pid " + std::to_string(daemon_pid) + " reset"));
  // The next start finds nothing to reset.
  StartDaemon();
  EXPECT_EQ(Resets(), 1);
}

// A stack overflow leaves the fatal-signal handler no stack to run on: the kernel kills the
// daemon with SIGSEGV at once. The overflow is real: the stand-in NVML recurses in the daemon's
// telemetry thread while the run holds its lock. The guard resets the lock.
TEST_F(Clocks, AStackOverflowInTheDaemonHasItsLockResetByItsGuard) {
  const rlimit no_core{0, 0};  // the daemon inherits it: no core file from this test
  ASSERT_EQ(::setrlimit(RLIMIT_CORE, &no_core), 0);
  dir_ = MakeTempDir();
  const std::string overflow = dir_ + "/overflow-now";
  StartDaemon({{"ABLATION_FAKE_SLEEP_MS", "400"}, {"FAKE_NVML_OVERFLOW_FILE", overflow}});
  const pid_t guard = GuardPid();
  ASSERT_GT(guard, 0);
  std::thread streamer = LockedRunUnderWay();
  ASSERT_TRUE(HasLock());
  std::ofstream(overflow) << "now\n";
  const int st = daemon_->Stop(0);  // waits for the daemon to die of its own overflow
  streamer.join();
  EXPECT_TRUE(WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV) << st;
  EXPECT_THAT(daemon_->log(), Not(HasSubstr("reset before exiting")))
      << "the handler ran: this was no stack overflow";
  EXPECT_TRUE(GoneWithin10s(guard));
  ExpectEveryLockReset();
  EXPECT_FALSE(std::filesystem::exists(daemon_->db_path() + ".clocks"));
}

// The guard is the daemon's own executable; run by hand with wrong arguments it says how it is
// started and does nothing.
TEST_F(Clocks, TheGuardByHandWithWrongArgumentsSaysWhatItIs) {
  auto r = RunCommand({ABLATIOND_PATH, "--clock-guard", "x"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("started by the daemon itself"));
}

TEST_F(Clocks, NoPermissionFailsThePreconditionWithASentenceAndNeverFallsBack) {
  StartDaemon({{"FAKE_NVML_NO_PERMISSION", "1"}});
  std::vector<v1::RunEvent> events;
  grpc::Status st = Stream(LockRequest(), &events);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_THAT(st.error_message(), HasSubstr("CAP_SYS_ADMIN"));
  for (const auto& e : events) EXPECT_FALSE(e.has_measurement()) << "no unlocked numbers";
  EXPECT_FALSE(HasLock());
  auto store = db::Store::OpenReadOnly(daemon_->db_path());
  auto run = store->LatestRun();
  ASSERT_TRUE(run);
  EXPECT_EQ(run->state(), v1::RUN_STATE_FAILED);
  EXPECT_TRUE(store->MeasurementsOfRun(run->id(), false).empty());
}

TEST_F(Clocks, UnsupportedClockIsRefusedBeforeAnythingIsWritten) {
  StartDaemon();
  auto req = LockRequest();
  req.mutable_clocks()->set_sm_mhz("1401");
  std::vector<v1::RunEvent> events;
  grpc::Status st = Stream(req, &events);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(st.error_message(), HasSubstr("clocks.sm_mhz"));
  EXPECT_FALSE(db::Store::OpenReadOnly(daemon_->db_path())->LatestRun().has_value());
  EXPECT_TRUE(ClockCalls().empty());
}

TEST(ClocksWithoutNvml, LockIsRefusedSayingWhyAndObserveStillRuns) {
  std::string dir = MakeTempDir();
  Daemon daemon(dir, FAKE_WORKER_PATH);
  daemon.set_extra_args({"--nvml-library", dir + "/no-such-libnvidia-ml.so"});
  ASSERT_EQ(daemon.Start(), "");
  auto run =
      daemon.Client({"run", "--variant", "L1_R1_s3", "--shape", "256", "--lock-sm-clock", "max"});
  EXPECT_NE(run.exit_code, 0);
  EXPECT_THAT(run.err, HasSubstr("FAILED_PRECONDITION"));
  EXPECT_THAT(run.err, HasSubstr("NVML"));
  auto ok = daemon.Client({"run", "--variant", "L1_R1_s3", "--shape", "256"});
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  auto store = db::Store::OpenReadOnly(daemon.db_path());
  auto ms = store->MeasurementsOfRun(store->LatestRun()->id(), false);
  ASSERT_EQ(ms.size(), 1u);
  EXPECT_FALSE(ms[0].telemetry().available());
  EXPECT_THAT(ms[0].telemetry().unavailable_reason(), HasSubstr("no-such-libnvidia-ml"));
  daemon.Stop(SIGTERM);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace ablation::testing
