// Run execution in-process: the run manager with an in-process worker and a real store, so the
// queue, worker deaths and hangs, cancellation, shutdown and verify-then-time are tested without
// processes or gRPC.
#include <gtest/gtest.h>

#include <unistd.h>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <filesystem>
#include <future>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "db/store.h"
#include "kernels/registry.h"
#include "server/core/plan/verification_policy.h"
#include "server/core/runs/measurement_step.h"
#include "server/core/runs/run_manager.h"
#include "tests/support/in_process_worker.h"

namespace ablation::core {
namespace {

using testing::InProcessWorkers;
using testing::WorkerLog;
using testing::WorkerScript;
using Action = WorkerScript::Action;

constexpr const char* kA = "abl_L1_R1_bl0_s3_sw1";
constexpr const char* kB = "abl_L1_R1_bl0_s4_sw1";
constexpr const char* kC = "cublas_bf16";

// Records what the core reports, and checks that each measurement it hears of is already stored.
class Recorder final : public RunObserver {
 public:
  explicit Recorder(db::Store* store = nullptr) : store_(store) {}
  void OnEvent(const v1::RunEvent& e) override {
    std::lock_guard lock(mu_);
    if (e.has_measurement() && store_) {
      bool stored = false;
      for (const auto& m : store_->MeasurementsOfRun(e.measurement().run_id(), false))
        stored |= m.id() == e.measurement().id();
      stored_before_event_ &= stored;
    }
    events.push_back(e);
  }
  void OnVerified(const v1::VerifyResult& r) override {
    std::lock_guard lock(mu_);
    verified.push_back(r);
  }
  void OnEnd(const Status& status) override {
    std::lock_guard lock(mu_);
    end = status;
    ended = true;
    cv_.notify_all();
  }
  bool WaitEnd(std::chrono::seconds timeout = std::chrono::seconds(20)) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, timeout, [&] { return ended; });
  }
  std::string Kinds() {
    std::lock_guard lock(mu_);
    std::string out;
    for (const auto& e : events) {
      if (!out.empty()) out += ",";
      out += e.has_queued()        ? "queued"
             : e.has_started()     ? "started"
             : e.has_measurement() ? "measurement"
             : e.has_finished()    ? "finished"
                                   : "failed";
    }
    return out;
  }
  bool stored_before_event() const { return stored_before_event_; }

  std::vector<v1::RunEvent> events;
  std::vector<v1::VerifyResult> verified;
  Status end;
  bool ended = false;

 private:
  db::Store* store_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stored_before_event_ = true;
};

// A latch the scripted worker waits on, so that a test holds a run at a chosen measurement.
struct Gate {
  std::mutex mu;
  std::condition_variable cv;
  bool reached = false, open = false;
  void Wait() {
    std::unique_lock lock(mu);
    reached = true;
    cv.notify_all();
    cv.wait(lock, [&] { return open; });
  }
  void AwaitReached() {
    std::unique_lock lock(mu);
    cv.wait_for(lock, std::chrono::seconds(20), [&] { return reached; });
  }
  void Open() {
    std::lock_guard lock(mu);
    open = true;
    cv.notify_all();
  }
};

class RunExecutionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    kernels::RegisterCatalog(registry_);
    path_ = std::filesystem::temp_directory_path() /
            ("run_execution_" + std::to_string(::getpid()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".db");
    std::filesystem::remove(path_);
    store_ = db::Store::Open(path_.string());
  }
  void TearDown() override {
    runs_.reset();
    store_.reset();
    for (const char* ext : {"", "-wal", "-shm"}) std::filesystem::remove(path_.string() + ext);
  }
  // Settling in chunks of 0.25 s (the in-process worker's spans are virtual: nothing sleeps):
  // three spans of 0.5 s, so a window at a constant clock is 6 chunks (the first with the
  // warm-up) and then the measured window.
  static constexpr int kCallsPerWindow = 7;
  // Then each variant alone (its solo span) from that state: chunks until three spans agree over
  // solo_seconds (3 s) of GPU time: 12 chunks at a constant clock.
  static constexpr int kSoloChunks = 12;
  void StartManager() {
    RunManagerOptions options;
    options.worker_factory = InProcessWorkers(script_, log_);
    options.timing.min_seconds = 0.01;
    options.timing.max_seconds = 1;
    options.timing.regime_params = params_;
    runs_ = std::make_unique<RunManager>(options, store_.get(), &registry_);
    runs_->Start();
  }
  static RegimeParams FastParams() {
    RegimeParams p;
    p.span_seconds = 0.5;
    p.settle_min_seconds = 1.0;
    p.cool_min_seconds = 0.005;
    p.cool_max_seconds = 0.05;
    return p;
  }
  // The windows the worker was asked to measure (not the settling chunks, the warm-ups or the
  // burst's short windows): those of the plan's window length.
  std::vector<WorkerLog::Window> MeasuredWindows() const {
    std::vector<WorkerLog::Window> out;
    for (const auto& w : log_->windows)
      if (w.seconds == params_.window_seconds) out.push_back(w);
    return out;
  }
  bool Ran(const std::string& variant) const {
    return std::count(log_->measured_variants.begin(), log_->measured_variants.end(), variant) > 0;
  }
  static v1::RunRequest Request(std::vector<std::string> variants, bool verify = false) {
    v1::RunRequest r;
    for (auto& v : variants) r.add_variants(v);
    auto* s = r.add_shapes();
    s->set_m(256);
    s->set_n(256);
    s->set_k(256);
    r.set_verify(verify);
    return r;
  }
  int64_t Submit(const v1::RunRequest& request, std::shared_ptr<Recorder> observer) {
    int64_t id = 0;
    Status st = runs_->SubmitRun(request, "test", observer, &id);
    EXPECT_TRUE(st.ok()) << st.message();
    return id;
  }

  kernels::Registry registry_;
  std::filesystem::path path_;
  std::unique_ptr<db::Store> store_;
  std::shared_ptr<WorkerScript> script_ = std::make_shared<WorkerScript>();
  std::shared_ptr<WorkerLog> log_ = std::make_shared<WorkerLog>();
  std::unique_ptr<RunManager> runs_;
  RegimeParams params_ = FastParams();
};

TEST_F(RunExecutionTest, StoresEachMeasurementBeforeItsEventAndFinishes) {
  StartManager();
  auto rec = std::make_shared<Recorder>(store_.get());
  const int64_t id = Submit(Request({kA, kB, kC}), rec);
  ASSERT_TRUE(rec->WaitEnd());
  EXPECT_TRUE(rec->end.ok());
  EXPECT_EQ(rec->Kinds(), "queued,started,measurement,measurement,measurement,finished");
  EXPECT_TRUE(rec->stored_before_event());
  const auto& fin = rec->events.back().finished();
  EXPECT_EQ(fin.state(), v1::RUN_STATE_SUCCEEDED);
  EXPECT_EQ(fin.ok(), 3);
  EXPECT_EQ(rec->events[1].started().total(), 3);

  auto run = store_->GetRun(id);
  ASSERT_TRUE(run);
  EXPECT_EQ(run->state(), v1::RUN_STATE_SUCCEEDED);
  EXPECT_EQ(run->kind(), v1::RUN_KIND_ABLATION);
  EXPECT_EQ(run->device().uuid(), "GPU-test-0000");
  auto rows = store_->MeasurementsOfRun(id, true);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].variant(), kA);
  EXPECT_EQ(rows[0].status(), v1::MEASUREMENT_STATUS_OK);
  EXPECT_DOUBLE_EQ(rows[0].stats().median_ms(), 2.5);
  EXPECT_EQ(rows[0].sample_ms_size(), 4);
  // 2*256^3 flops in 2.5 ms.
  EXPECT_NEAR(rows[0].tflops(), 2.0 * 256 * 256 * 256 / 2.5e-3 / 1e12, 1e-12);
  EXPECT_EQ(rows[0].l2(), v1::L2_MODE_COLD);
  EXPECT_EQ(rows[0].clock_policy(), "observe");
  EXPECT_EQ(rows[0].verification_outcome(), v1::VERIFICATION_OUTCOME_UNSPECIFIED);
  EXPECT_EQ(rows[0].occupancy().registers_per_thread(), 128);
  EXPECT_GT(rows[0].wall_seconds(), 0);  // v6: stored like every other field, by name
  EXPECT_LT(rows[0].wall_seconds(), 5);
  // The regime (v11): the three items of the one shape in one window, settled first.
  for (const auto& row : rows) {
    EXPECT_EQ(row.regime(), v1::REGIME_SUSTAINED);
    EXPECT_EQ(row.window(), rows[0].window());
    EXPECT_EQ(row.window_members(), 3);
    EXPECT_EQ(row.windows(), 1);
    EXPECT_TRUE(row.conditioned()) << row.regime_note();
    EXPECT_EQ(row.regime_note().rfind("settled after 1.50 s of GPU time: clock 1980 MHz (3 spans "
                                      "of 0.5 s within 0.00%)",
                                      0),
              0u)
        << row.regime_note();
    // Clock-normalised: 2*256^3 flops in 2.5 ms at 1.98 GHz, against the H100/H200 dense bf16
    // peak at that clock (4096 flops per clock per SM, 132 SMs).
    EXPECT_DOUBLE_EQ(row.stats().median_sm_mhz(), 1980);
    EXPECT_NEAR(row.tflops_per_ghz(), row.tflops() / 1.98, 1e-12);
    EXPECT_NEAR(row.peak_tflops(), 4096.0 * 132 * 1980e6 / 1e12, 1e-9);
    EXPECT_NEAR(row.peak_share(), row.tflops() / row.peak_tflops(), 1e-12);
  }
  EXPECT_GT(rows[0].window(), 0);
  EXPECT_EQ(run->regime(), v1::REGIME_SUSTAINED);
  EXPECT_TRUE(run->paired());
  // What the worker was asked: settling chunks (the first warms up), then one window of all
  // three interleaved in plan order, then each alone in chunks (its solo span).
  ASSERT_EQ(log_->windows.size(), size_t(kCallsPerWindow + 3 * kSoloChunks));
  EXPECT_TRUE(log_->windows[0].warmup);
  EXPECT_DOUBLE_EQ(log_->windows[0].seconds, 0.25);
  const auto& paired = log_->windows[kCallsPerWindow - 1];
  EXPECT_FALSE(paired.warmup);
  EXPECT_DOUBLE_EQ(paired.seconds, 3.0);
  EXPECT_EQ(paired.variants, (std::vector<std::string>{kA, kB, kC}));
  const std::string order[] = {kA, kB, kC};
  for (int i = 0; i < 3 * kSoloChunks; ++i) {
    const auto& chunk = log_->windows[size_t(kCallsPerWindow + i)];
    EXPECT_EQ(chunk.variants, std::vector<std::string>{order[i / kSoloChunks]});
    EXPECT_FALSE(chunk.warmup) << "warmed up in the paired window";
    EXPECT_DOUBLE_EQ(chunk.seconds, 0.25);
  }
  // Alone at the same constant clock, each gives its window's figure, and says how it settled.
  for (const auto& row : rows) {
    const v1::SoloFigures& solo = row.solo();
    EXPECT_TRUE(solo.solo_measured()) << solo.solo_note();
    EXPECT_DOUBLE_EQ(solo.solo_tflops(), row.tflops());
    EXPECT_DOUBLE_EQ(solo.solo_sm_mhz(), 1980);
    EXPECT_TRUE(solo.solo_conditioned());
    EXPECT_EQ(solo.solo_note().rfind("settled after 3.00 s of GPU time: clock 1980 MHz", 0), 0u)
        << solo.solo_note();
    EXPECT_DOUBLE_EQ(solo.solo_gpu_seconds(), 12 * 0.010) << "the chunks' samples";
    EXPECT_GT(row.cost().solo_seconds(), 0);
    EXPECT_FALSE(solo.has_solo_energy_j()) << "no NVML in this test: no energy";
  }
  // The input seed: the run's and the problem's, the same for every item of the problem.
  ASSERT_FALSE(log_->seeds.empty());
  for (uint64_t seed : log_->seeds)
    EXPECT_EQ(seed, InputSeed(id, {256, 256, 256, kernels::DType::kBF16}));
}

TEST_F(RunExecutionTest, EachRowSaysWhereItsWallTimeWentAndTheRunReleasesItsInputs) {
  StartManager();
  auto rec = std::make_shared<Recorder>(store_.get());
  const int64_t id = Submit(Request({kA, kB}, /*verify=*/true), rec);
  ASSERT_TRUE(rec->WaitEnd());
  auto rows = store_->MeasurementsOfRun(id, false);
  ASSERT_EQ(rows.size(), 2u);
  // The window's cost is shared equally by its two rows and each row's solo span is its own,
  // so that the rows add up to what the worker reported for every task of the window: settling
  // chunks, the window itself, and the solo chunks.
  double worker = 0, sampling = 0, solo_worker = 0;
  for (size_t i = 0; i < log_->windows.size(); ++i) {
    const auto& w = log_->windows[i];
    (i < size_t(kCallsPerWindow) ? worker : solo_worker) += 0.012 + w.seconds;
    sampling += w.seconds;
  }
  EXPECT_EQ(log_->windows.size(), size_t(kCallsPerWindow + 2 * kSoloChunks));
  double row_worker = 0, row_sampling = 0;
  for (const auto& row : rows) {
    row_worker += row.cost().worker_seconds();
    row_sampling += row.cost().sampling_seconds();
    EXPECT_NEAR(row.cost().worker_seconds(), worker / 2 + solo_worker / 2, 1e-9)
        << "its share of the window and its own solo chunks (as many as the other's)";
  }
  EXPECT_NEAR(row_worker, worker + solo_worker, 1e-9);
  EXPECT_NEAR(row_sampling, sampling, 1e-9);
  for (const auto& row : rows) {
    const v1::Cost& c = row.cost();
    EXPECT_DOUBLE_EQ(c.warmup_seconds(), 0.001 / 2) << "one warm-up, with the first chunk";
    EXPECT_DOUBLE_EQ(c.setup_seconds(), 0.001 / 2) << "the inputs made once, for the first task";
    EXPECT_FALSE(c.inputs_reused()) << "made for this window";
    // The regime's settling, shared too; no cool-down in the sustained regime.
    ASSERT_TRUE(c.has_settle_seconds());
    EXPECT_GT(c.settle_seconds(), 0);
    EXPECT_FALSE(c.has_cool_seconds());
    // The daemon's: the verification before timing, inside the row's wall time.
    ASSERT_TRUE(c.has_verify_seconds());
    EXPECT_GE(c.verify_seconds(), 0);
    EXPECT_LE(c.verify_seconds(), row.wall_seconds());
    EXPECT_DOUBLE_EQ(row.stats().total_seconds(), 0.010);  // the GPU time sampled
  }
  EXPECT_EQ(log_->releases, 1);  // at the end of the run

  // A run of its own has seeds of its own: nothing of the first run's is reused.
  auto second = std::make_shared<Recorder>(store_.get());
  const int64_t next = Submit(Request({kA}), second);
  ASSERT_TRUE(second->WaitEnd());
  auto later = store_->MeasurementsOfRun(next, false);
  ASSERT_EQ(later.size(), 1u);
  EXPECT_FALSE(later[0].cost().inputs_reused());
  EXPECT_FALSE(later[0].cost().has_verify_seconds());  // not asked to verify
  EXPECT_EQ(log_->releases, 2);
}

// timing.fresh_inputs: the worker's inputs are released between rounds, so each round's first
// window makes its own (none reused); without it, rounds 1 and 2 find round 0's resident. One
// round refuses it, naming why.
TEST_F(RunExecutionTest, FreshInputsMakeEveryRoundAllocateItsOwn) {
  StartManager();
  for (const bool fresh : {false, true}) {
    SCOPED_TRACE(fresh ? "fresh inputs" : "resident inputs");
    const int releases_before = log_->releases;
    v1::RunRequest request = Request({kA, kB});
    request.set_rounds(3);
    request.mutable_timing()->set_fresh_inputs(fresh);
    auto rec = std::make_shared<Recorder>(store_.get());
    const int64_t id = Submit(request, rec);
    ASSERT_TRUE(rec->WaitEnd());
    const auto rows = store_->MeasurementsOfRun(id, false);
    ASSERT_EQ(rows.size(), 6u);
    for (const auto& row : rows)
      EXPECT_EQ(row.cost().inputs_reused(), !fresh && row.round() > 0)
          << row.variant() << " round " << row.round();
    // Between rounds 0 and 1 and rounds 1 and 2, and at the run's end.
    EXPECT_EQ(log_->releases - releases_before, fresh ? 3 : 1);
  }
  v1::RunRequest one = Request({kA});
  one.mutable_timing()->set_fresh_inputs(true);
  int64_t id = 0;
  const Status st = runs_->SubmitRun(one, "test", std::make_shared<Recorder>(store_.get()), &id);
  EXPECT_EQ(st.code(), Code::kInvalidArgument);
  EXPECT_NE(st.message().find("timing.fresh_inputs: inputs made anew for each round need 2 or "
                              "more rounds (rounds: 1)"),
            std::string::npos)
      << st.message();
}

TEST_F(RunExecutionTest, AWorkerDeathFailsThatMeasurementAndTheRunGoesOn) {
  script_->by_variant[kB] = Action::kDie;
  StartManager();
  auto rec = std::make_shared<Recorder>(store_.get());
  const int64_t id = Submit(Request({kA, kB, kC}), rec);
  ASSERT_TRUE(rec->WaitEnd());
  const auto& fin = rec->events.back().finished();
  EXPECT_EQ(fin.state(), v1::RUN_STATE_PARTIAL);
  EXPECT_EQ(fin.ok(), 2);
  EXPECT_EQ(fin.failed(), 1);
  auto rows = store_->MeasurementsOfRun(id, false);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[1].status(), v1::MEASUREMENT_STATUS_FAILED);
  EXPECT_NE(rows[1].error().find("signal 9"), std::string::npos) << rows[1].error();
  // The window of all three died without naming a variant: each was measured alone, which found
  // the one that dies; the others say why they were measured apart.
  for (size_t i : {0u, 2u}) {
    EXPECT_EQ(rows[i].status(), v1::MEASUREMENT_STATUS_OK);
    EXPECT_EQ(rows[i].window_members(), 1);
    EXPECT_NE(rows[i].regime_note().find("measured apart: its window with 2 other variants failed "
                                         "(the worker died: signal 9"),
              std::string::npos)
        << rows[i].regime_note();
  }
  EXPECT_NE(rows[0].window(), rows[2].window());
  EXPECT_EQ(log_->starts, 3);  // restarted after the window's death and after kB's alone
}

TEST_F(RunExecutionTest, AWindowWhoseLaunchFailsIsMeasuredAgainWithoutThatVariant) {
  script_->by_variant[kB] = Action::kRefuse;
  StartManager();
  auto rec = std::make_shared<Recorder>(store_.get());
  const int64_t id = Submit(Request({kA, kB, kC}), rec);
  ASSERT_TRUE(rec->WaitEnd());
  auto rows = store_->MeasurementsOfRun(id, false);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[1].status(), v1::MEASUREMENT_STATUS_FAILED);
  EXPECT_EQ(rows[1].error(), std::string(kB) + ": cannot launch (test)");
  // The worker named the variant: the other two were measured together again.
  EXPECT_EQ(rows[0].status(), v1::MEASUREMENT_STATUS_OK);
  EXPECT_EQ(rows[2].status(), v1::MEASUREMENT_STATUS_OK);
  EXPECT_EQ(rows[0].window(), rows[2].window());
  EXPECT_EQ(rows[0].window_members(), 2);
  EXPECT_EQ(MeasuredWindows().back().variants, (std::vector<std::string>{kA, kC}));
  EXPECT_EQ(log_->starts, 1) << "a refused launch is no reason for a new worker";
}

TEST_F(RunExecutionTest, AHangIsRecordedOnItsMeasurement) {
  script_->by_variant[kA] = Action::kHang;
  StartManager();
  auto rec = std::make_shared<Recorder>(store_.get());
  const int64_t id = Submit(Request({kA, kC}), rec);
  ASSERT_TRUE(rec->WaitEnd());
  auto rows = store_->MeasurementsOfRun(id, false);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_NE(rows[0].error().find("hung"), std::string::npos) << rows[0].error();
  EXPECT_EQ(rows[1].status(), v1::MEASUREMENT_STATUS_OK);
  EXPECT_EQ(store_->GetRun(id)->state(), v1::RUN_STATE_PARTIAL);
}

TEST_F(RunExecutionTest, AWorkerThatCannotRestartFailsTheRunWithTheReason) {
  script_->by_variant[kA] = Action::kDie;
  script_->fail_restart = true;
  StartManager();
  auto first = std::make_shared<Recorder>(store_.get());
  Submit(Request({kA}), first);
  ASSERT_TRUE(first->WaitEnd());
  auto second = std::make_shared<Recorder>(store_.get());
  const int64_t id = Submit(Request({kC}), second);
  ASSERT_TRUE(second->WaitEnd());
  EXPECT_EQ(second->Kinds(), "queued,failed");
  EXPECT_EQ(second->end.code(), Code::kFailedPrecondition);
  EXPECT_NE(second->events.back().failed().reason().find("cannot restart the worker: exit code 3"),
            std::string::npos)
      << second->events.back().failed().reason();
  EXPECT_EQ(store_->GetRun(id)->state(), v1::RUN_STATE_FAILED);
}

TEST_F(RunExecutionTest, CancelStopsARunningRunAtTheNextMeasurement) {
  RunManager* runs = nullptr;
  int64_t id = 0;
  v1::CancelRunResponse cancel;
  // Unpaired: a window per item. The cancel comes while the second window settles.
  script_->before_measure = [&](int index) {
    if (index == kCallsPerWindow + 1) (void)runs->Cancel(id, &cancel);
  };
  StartManager();
  runs = runs_.get();
  auto rec = std::make_shared<Recorder>(store_.get());
  v1::RunRequest request = Request({kA, kB, kC});
  request.set_unpaired(true);
  id = Submit(request, rec);
  ASSERT_TRUE(rec->WaitEnd());
  EXPECT_TRUE(cancel.cancelling());
  EXPECT_EQ(cancel.state(), v1::RUN_STATE_RUNNING);
  EXPECT_EQ(rec->events.back().finished().state(), v1::RUN_STATE_CANCELLED);
  // The window that was settling is given up at its next chunk; the one measured stays.
  EXPECT_EQ(store_->MeasurementsOfRun(id, false).size(), 1u);
  EXPECT_LE(log_->measures, kCallsPerWindow + 2);
  auto run = store_->GetRun(id);
  EXPECT_EQ(run->state(), v1::RUN_STATE_CANCELLED);
  EXPECT_EQ(run->error(), "cancelled");
}

TEST_F(RunExecutionTest, AQueuedRunWaitsItsTurnAndCanBeCancelledThere) {
  Gate gate;
  script_->before_measure = [&](int index) {
    if (index == 0) gate.Wait();
  };
  StartManager();
  auto first = std::make_shared<Recorder>(store_.get());
  const int64_t a = Submit(Request({kA}), first);
  gate.AwaitReached();
  auto second = std::make_shared<Recorder>(store_.get());
  const int64_t b = Submit(Request({kB}), second);
  EXPECT_EQ(second->events.at(0).queued().position(), 0);
  EXPECT_EQ(store_->GetRun(b)->state(), v1::RUN_STATE_QUEUED);
  v1::CancelRunResponse response;
  ASSERT_TRUE(runs_->Cancel(b, &response).ok());
  EXPECT_EQ(response.state(), v1::RUN_STATE_CANCELLED);
  EXPECT_FALSE(response.cancelling());
  ASSERT_TRUE(second->WaitEnd());
  EXPECT_EQ(second->Kinds(), "queued,finished");
  EXPECT_EQ(store_->GetRun(b)->error(), "cancelled before it started");
  gate.Open();
  ASSERT_TRUE(first->WaitEnd());
  EXPECT_EQ(store_->GetRun(a)->state(), v1::RUN_STATE_SUCCEEDED);
  EXPECT_TRUE(Ran(kA));
  EXPECT_FALSE(Ran(kB)) << "b never ran";
}

TEST_F(RunExecutionTest, ShutdownCancelsTheRunningRunAndTellsQueuedOnesTheyWereCancelled) {
  Gate gate;
  script_->before_measure = [&](int index) {
    if (index == 0) gate.Wait();
  };
  StartManager();
  auto first = std::make_shared<Recorder>(store_.get());
  const int64_t a = Submit(Request({kA, kB}), first);
  gate.AwaitReached();
  auto second = std::make_shared<Recorder>(store_.get());
  const int64_t b = Submit(Request({kC}), second);
  std::thread opener([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    gate.Open();
  });
  runs_->Shutdown();
  opener.join();
  ASSERT_TRUE(second->ended);
  EXPECT_EQ(second->Kinds(), "queued,finished");
  EXPECT_EQ(second->events.back().finished().state(), v1::RUN_STATE_CANCELLED);
  EXPECT_EQ(second->end.code(), Code::kUnavailable);
  EXPECT_EQ(store_->GetRun(b)->state(), v1::RUN_STATE_CANCELLED);
  ASSERT_TRUE(first->ended);
  EXPECT_EQ(store_->GetRun(a)->state(), v1::RUN_STATE_CANCELLED);
  EXPECT_EQ(store_->GetRun(a)->error(), "daemon shut down");
  // Its one window (both items of the shape) was settling: given up, nothing measured.
  EXPECT_EQ(store_->MeasurementsOfRun(a, false).size(), 0u);
  v1::RunRequest late = Request({kA});
  int64_t id = 0;
  EXPECT_EQ(runs_->SubmitRun(late, "test", std::make_shared<Recorder>(), &id).code(),
            Code::kUnavailable);
}

TEST(DescribeFailedVerification, AWorkerThatNeverComparedSaysOnlyWhatFailed) {
  v1::VerifyResult killed;
  killed.set_error("worker did not answer within 36 s and was killed (signal 9 (Killed))");
  EXPECT_EQ(DescribeFailedVerification(killed),
            "failed: worker did not answer within 36 s and was killed (signal 9 (Killed))");
  v1::VerifyResult compared;
  compared.set_reference(v1::REFERENCE_CUBLAS);
  compared.set_tolerance(0.01);
  compared.set_rel_frobenius_error(0.5);
  compared.set_error("a note");
  EXPECT_EQ(
      DescribeFailedVerification(compared).rfind("failed against cublas: rel frobenius 0.5", 0),
      0u);
}

TEST_F(RunExecutionTest, VerifyThenTimeTimesOnlyWhatPassed) {
  script_->by_variant[kB] = Action::kFailVerification;
  StartManager();
  auto rec = std::make_shared<Recorder>(store_.get());
  const int64_t id = Submit(Request({kA, kB}, /*verify=*/true), rec);
  ASSERT_TRUE(rec->WaitEnd());
  auto rows = store_->MeasurementsOfRun(id, false);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].verification_outcome(), v1::VERIFICATION_OUTCOME_PASSED);
  EXPECT_EQ(rows[0].verification(), "passed");
  EXPECT_EQ(rows[0].status(), v1::MEASUREMENT_STATUS_OK);
  EXPECT_EQ(rows[1].verification_outcome(), v1::VERIFICATION_OUTCOME_FAILED);
  EXPECT_EQ(rows[1].status(), v1::MEASUREMENT_STATUS_FAILED);
  EXPECT_EQ(rows[1].verification(),
            "failed against cpu: rel frobenius 0.25, max abs 3.5, 12 mismatches, 0 NaN, 0 "
            "unwritten");
  EXPECT_TRUE(Ran(kA));
  EXPECT_FALSE(Ran(kB)) << "the failed one is not timed";
  auto checks = store_->VerificationsOfRun(id);
  ASSERT_EQ(checks.size(), 2u);
  EXPECT_EQ(checks[0].reference(), v1::REFERENCE_CPU);  // 256^3 is below the CPU default bound
  EXPECT_TRUE(checks[0].passed());
  EXPECT_FALSE(checks[1].passed());
  // The verification and the timing of an item see the same inputs.
  EXPECT_EQ(log_->seeds[0], log_->seeds[1]);
}

TEST_F(RunExecutionTest, RoundsVisitEveryItemOncePerRoundInAStoredShuffledOrder) {
  StartManager();
  auto rec = std::make_shared<Recorder>(store_.get());
  v1::RunRequest request = Request({kA, kB, kC, "abl_L0_R1_bl0_s1_sw1", "abl_L1_R0_bl0_s3_sw1"});
  request.set_rounds(3);
  request.set_order_seed(42);
  const int64_t id = Submit(request, rec);
  ASSERT_TRUE(rec->WaitEnd());
  EXPECT_EQ(rec->events[1].started().total(), 15);
  auto run = store_->GetRun(id);
  EXPECT_EQ(run->rounds(), 3);
  EXPECT_EQ(run->order_seed(), 42u);
  EXPECT_EQ(run->planned(), 15);
  auto rows = store_->MeasurementsOfRun(id, false);
  ASSERT_EQ(rows.size(), 15u);
  std::vector<std::vector<std::string>> orders(3);
  for (size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(rows[i].sequence(), int(i));
    EXPECT_EQ(rows[i].round(), int(i) / 5);
    orders[size_t(rows[i].round())].push_back(rows[i].variant());
  }
  for (auto& order : orders) {
    auto sorted = order;
    std::sort(sorted.begin(), sorted.end());
    EXPECT_EQ(std::unique(sorted.begin(), sorted.end()), sorted.end())
        << "an item twice in a round";
    EXPECT_EQ(sorted.size(), 5u);
  }
  EXPECT_TRUE(orders[0] != orders[1] || orders[1] != orders[2]) << "the rounds were not shuffled";
  // The per-item budget is shared among the rounds: min_samples 10 -> 4 per round.
  EXPECT_EQ(log_->measured_rounds_min_samples.front(), 4);
  // The same item sees the same inputs in every round: one problem, one seed.
  EXPECT_EQ(std::set<uint64_t>(log_->seeds.begin(), log_->seeds.end()).size(), 1u);
  // One window per round: the five interleaved, each round its own window and order.
  std::set<int64_t> windows;
  for (const auto& row : rows) windows.insert(row.window());
  EXPECT_EQ(windows.size(), 3u);
  ASSERT_EQ(MeasuredWindows().size(), 3u);
  for (size_t r = 0; r < 3; ++r) EXPECT_EQ(MeasuredWindows()[r].variants, orders[r]);
}

TEST_F(RunExecutionTest, SustainedSettlesUntilTheClockHoldsThenMeasures) {
  // The clock falls for the first chunks (a power cap engaging), then holds at 1500 MHz.
  script_->clock_mhz = [](int i) { return i < 6 ? 1980.0 - 80.0 * i : 1500.0; };
  StartManager();
  auto rec = std::make_shared<Recorder>(store_.get());
  const int64_t id = Submit(Request({kA, kC}), rec);
  ASSERT_TRUE(rec->WaitEnd());
  auto rows = store_->MeasurementsOfRun(id, false);
  ASSERT_EQ(rows.size(), 2u);
  // Chunks 0-5 fall; the first three spans of two chunks at 1500 are 6-11: settled at 11; the
  // window; then each variant alone, at the settled clock already: 12 chunks each.
  ASSERT_EQ(log_->windows.size(), 13u + 2 * kSoloChunks);
  EXPECT_DOUBLE_EQ(log_->windows[12].seconds, 3.0);
  for (const auto& row : rows) {
    EXPECT_TRUE(row.conditioned());
    EXPECT_EQ(row.regime_note().rfind("settled after 3.00 s of GPU time: clock 1500 MHz (3 spans "
                                      "of 0.5 s within 0.00%)",
                                      0),
              0u)
        << row.regime_note();
    EXPECT_DOUBLE_EQ(row.stats().median_sm_mhz(), 1500);
    EXPECT_NEAR(row.tflops_per_ghz(), row.tflops() / 1.5, 1e-12);
  }
}

TEST_F(RunExecutionTest, AClockThatNeverSettlesIsMeasuredAnywayAndSaysSo) {
  script_->clock_mhz = [](int i) { return 1980.0 * std::pow(0.98, i); };
  params_.settle_max_seconds = 0;  // wall time: give up after the first chunk that could tell
  StartManager();
  auto rec = std::make_shared<Recorder>(store_.get());
  const int64_t id = Submit(Request({kA}), rec);
  ASSERT_TRUE(rec->WaitEnd());
  auto rows = store_->MeasurementsOfRun(id, false);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].status(), v1::MEASUREMENT_STATUS_OK);
  EXPECT_FALSE(rows[0].conditioned());
  EXPECT_EQ(rows[0].regime_note().rfind("not settled after 0.25 s of GPU time", 0), 0u)
      << rows[0].regime_note();
}

TEST_F(RunExecutionTest, BurstCoolsBeforeEachShortWindowAndPoolsThem) {
  StartManager();
  auto rec = std::make_shared<Recorder>(store_.get());
  v1::RunRequest request = Request({kA, kC});
  request.set_regime(v1::REGIME_BURST);
  const int64_t id = Submit(request, rec);
  ASSERT_TRUE(rec->WaitEnd());
  EXPECT_EQ(store_->GetRun(id)->regime(), v1::REGIME_BURST);
  auto rows = store_->MeasurementsOfRun(id, true);
  ASSERT_EQ(rows.size(), 2u);
  // A warm-up task, then short windows of 20 ms, each after a cool-down: three at least, and
  // the in-process worker's samples ({1, 2, 3, 4} ms) are far from the 0.5% noise target, so
  // they go on to the GPU-time cap (max_seconds 1 s: 100 windows of 10 ms of samples).
  ASSERT_GE(log_->windows.size(), 4u);
  EXPECT_TRUE(log_->windows[0].warmup);
  for (size_t i = 1; i < log_->windows.size(); ++i)
    EXPECT_DOUBLE_EQ(log_->windows[i].seconds, 0.02);
  const int windows = int(log_->windows.size()) - 1;
  for (const auto& row : rows) {
    EXPECT_EQ(row.regime(), v1::REGIME_BURST);
    EXPECT_EQ(row.windows(), windows);
    EXPECT_EQ(row.sample_ms_size(), 4 * windows) << "every short window's samples, pooled";
    EXPECT_EQ(row.stats().samples(), 4 * windows);
    EXPECT_TRUE(row.conditioned()) << row.regime_note();
    EXPECT_NE(row.regime_note().find("short windows of 20.0 ms, each after a cool-down"),
              std::string::npos)
        << row.regime_note();
    EXPECT_GT(row.cost().cool_seconds(), 0);
    EXPECT_FALSE(row.cost().has_settle_seconds());
  }
}

TEST_F(RunExecutionTest, ABurstWindowThePowerCapCutIntoIsRejectedAndTheNextIsShorter) {
  script_->cap_after_seconds = 0.015;
  StartManager();
  auto rec = std::make_shared<Recorder>(store_.get());
  v1::RunRequest request = Request({kA});
  request.set_regime(v1::REGIME_BURST);
  const int64_t id = Submit(request, rec);
  ASSERT_TRUE(rec->WaitEnd());
  auto rows = store_->MeasurementsOfRun(id, false);
  ASSERT_EQ(rows.size(), 1u);
  ASSERT_GE(log_->windows.size(), 3u);
  EXPECT_DOUBLE_EQ(log_->windows[1].seconds, 0.02) << "the first, cut into by the cap";
  EXPECT_DOUBLE_EQ(log_->windows[2].seconds, 0.01) << "half as long";
  EXPECT_EQ(rows[0].windows(), int(log_->windows.size()) - 2) << "the rejected one not pooled";
  EXPECT_NE(rows[0].regime_note().find("1 windows rejected (last: the clock fell 10.0% within "
                                       "the window"),
            std::string::npos)
      << rows[0].regime_note();
}

TEST_F(RunExecutionTest, UnpairedItemsAndItemsOfOtherShapesGetWindowsOfTheirOwn) {
  StartManager();
  auto rec = std::make_shared<Recorder>(store_.get());
  v1::RunRequest request = Request({kA, kC});
  auto* s = request.add_shapes();
  s->set_m(128);
  s->set_n(128);
  s->set_k(128);
  const int64_t id = Submit(request, rec);
  ASSERT_TRUE(rec->WaitEnd());
  auto rows = store_->MeasurementsOfRun(id, false);
  ASSERT_EQ(rows.size(), 4u);
  std::map<int64_t, int> members;
  for (const auto& row : rows) ++members[row.window()];
  EXPECT_EQ(members.size(), 2u) << "a window per shape";
  for (const auto& [window, n] : members) EXPECT_EQ(n, 2);

  auto alone = std::make_shared<Recorder>(store_.get());
  request.set_unpaired(true);
  const int64_t unpaired = Submit(request, alone);
  ASSERT_TRUE(alone->WaitEnd());
  EXPECT_FALSE(store_->GetRun(unpaired)->paired());
  std::set<int64_t> windows;
  for (const auto& row : store_->MeasurementsOfRun(unpaired, false)) {
    windows.insert(row.window());
    EXPECT_EQ(row.window_members(), 1);
  }
  EXPECT_EQ(windows.size(), 4u);
}

TEST(ReferenceFailure, IsTheWorkersFieldNotTheErrorText) {
  v1::VerifyResult v;
  v.set_passed(false);
  v.set_error("reference: words a variant's own failure might also use");
  EXPECT_FALSE(IsReferenceFailure(v));  // the text is for people; the field is the protocol
  v.set_reference_failed(true);
  EXPECT_TRUE(IsReferenceFailure(v));
  v.set_passed(true);
  EXPECT_FALSE(IsReferenceFailure(v));
}

TEST_F(RunExecutionTest, AReferenceThatCannotRunLeavesTheVariantNotCheckedButTimed) {
  script_->by_variant[kA] = Action::kReferenceFails;
  StartManager();
  auto rec = std::make_shared<Recorder>(store_.get());
  const int64_t id = Submit(Request({kA}, /*verify=*/true), rec);
  ASSERT_TRUE(rec->WaitEnd());
  auto rows = store_->MeasurementsOfRun(id, false);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].status(), v1::MEASUREMENT_STATUS_OK);
  EXPECT_EQ(rows[0].verification_outcome(), v1::VERIFICATION_OUTCOME_NOT_CHECKED);
  EXPECT_EQ(rows[0].verification(), "not checked: reference: cuBLAS refuses 65x37x29 (test)");
  EXPECT_EQ(MeasuredWindows().size(), 1u);
}

TEST_F(RunExecutionTest, AVerifyRunReportsEachResultAndItsState) {
  script_->by_variant[kB] = Action::kFailVerification;
  StartManager();
  v1::VerifyRequest request;
  request.add_variants(kA);
  request.add_variants(kB);
  auto* s = request.add_shapes();
  s->set_m(128);
  s->set_n(128);
  s->set_k(128);
  request.set_reference(v1::REFERENCE_CUBLAS);
  auto rec = std::make_shared<Recorder>(store_.get());
  ASSERT_TRUE(runs_->SubmitVerify(request, "test", rec).ok());
  ASSERT_TRUE(rec->WaitEnd());
  EXPECT_TRUE(rec->end.ok());
  ASSERT_EQ(rec->verified.size(), 2u);
  EXPECT_TRUE(rec->verified[0].passed());
  EXPECT_EQ(rec->verified[0].reference(), v1::REFERENCE_CUBLAS);
  EXPECT_FALSE(rec->verified[1].passed());
  const int64_t id = rec->events.at(0).queued().run_id();
  auto run = store_->GetRun(id);
  EXPECT_EQ(run->kind(), v1::RUN_KIND_VERIFY);
  EXPECT_EQ(run->state(), v1::RUN_STATE_PARTIAL);
  EXPECT_EQ(log_->measures, 0);
  EXPECT_EQ(log_->releases, 1);  // the worker's inputs go with the run
  // Both items of the one problem are checked on the same inputs.
  ASSERT_EQ(log_->seeds.size(), 2u);
  EXPECT_EQ(log_->seeds[0], log_->seeds[1]);
}

TEST_F(RunExecutionTest, NoDeviceRefusesRunsAndStoresNothing) {
  script_->device_present = false;
  StartManager();
  int64_t id = 0;
  auto rec = std::make_shared<Recorder>();
  Status st = runs_->SubmitRun(Request({kA}), "test", rec, &id);
  EXPECT_EQ(st.code(), Code::kFailedPrecondition);
  EXPECT_NE(st.message().find("no CUDA device (test)"), std::string::npos) << st.message();
  EXPECT_TRUE(rec->events.empty());
  EXPECT_FALSE(store_->LatestRun());
}

}  // namespace
}  // namespace ablation::core
