// Several GPUs in one daemon: one worker, one queue and one thread per GPU. Runs on different GPUs
// execute at the same time, runs on one GPU wait their turn, and what happens to one GPU's worker
// stays with that GPU.
#include <gtest/gtest.h>

#include <unistd.h>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <mutex>

#include "db/store.h"
#include "server/core/runs/run_manager.h"
#include "tests/support/in_process_worker.h"

namespace ablation::core {
namespace {

using testing::WorkerScript;

class Ended final : public RunObserver {
 public:
  void OnEvent(const v1::RunEvent& e) override {
    std::lock_guard lock(mu_);
    events.push_back(e);
  }
  void OnEnd(const Status&) override {
    std::lock_guard lock(mu_);
    ended = true;
    cv_.notify_all();
  }
  bool Wait() {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, std::chrono::seconds(20), [&] { return ended; });
  }
  std::vector<v1::RunEvent> events;
  bool ended = false;

 private:
  std::mutex mu_;
  std::condition_variable cv_;
};

class MultiGpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    kernels::RegisterCatalog(registry_);
    path_ = std::filesystem::temp_directory_path() /
            ("multi_gpu_" + std::to_string(::getpid()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".db");
    std::filesystem::remove(path_);
    store_ = db::Store::Open(path_.string());
    script_->device_count = 2;
  }
  void TearDown() override {
    runs_.reset();
    store_.reset();
    for (const char* ext : {"", "-wal", "-shm"}) std::filesystem::remove(path_.string() + ext);
  }
  void Start() {
    RunManagerOptions options;
    options.worker_factory = testing::InProcessWorkers(script_, log_);
    options.timing.min_seconds = 0.01;
    runs_ = std::make_unique<RunManager>(options, store_.get(), &registry_);
    runs_->Start();
  }
  int64_t Submit(int device, const std::string& variant, std::shared_ptr<Ended> observer) {
    v1::RunRequest r;
    r.add_variants(variant);
    auto* s = r.add_shapes();
    s->set_m(128);
    s->set_n(128);
    s->set_k(128);
    r.set_device(device);
    int64_t id = 0;
    Status st = runs_->SubmitRun(r, "test", observer, &id);
    EXPECT_TRUE(st.ok()) << st.message();
    return id;
  }

  kernels::Registry registry_;
  std::filesystem::path path_;
  std::unique_ptr<db::Store> store_;
  std::shared_ptr<WorkerScript> script_ = std::make_shared<WorkerScript>();
  std::shared_ptr<testing::WorkerLog> log_ = std::make_shared<testing::WorkerLog>();
  std::unique_ptr<RunManager> runs_;
};

TEST_F(MultiGpuTest, RunsOnTwoGpusExecuteTogetherWhileASecondRunForGpu0Waits) {
  std::mutex mu;
  std::condition_variable cv;
  int inside = 0;
  bool both_seen = false, open = false;
  script_->before_measure_on = [&](int, const std::string& variant) {
    if (variant != "cublas_bf16") return;
    std::unique_lock lock(mu);
    if (++inside == 2) both_seen = true;
    cv.notify_all();
    cv.wait_for(lock, std::chrono::seconds(20), [&] { return open; });
    --inside;
  };
  Start();
  auto a = std::make_shared<Ended>(), b = std::make_shared<Ended>(), c = std::make_shared<Ended>();
  const int64_t run_a = Submit(0, "cublas_bf16", a);
  const int64_t run_b = Submit(1, "cublas_bf16", b);
  {
    std::unique_lock lock(mu);
    ASSERT_TRUE(cv.wait_for(lock, std::chrono::seconds(20), [&] { return both_seen; }))
        << "the two GPUs did not run at the same time";
  }
  const int64_t run_c = Submit(0, "abl_L1_R1_bl0_s3_sw1", c);
  EXPECT_EQ(c->events.at(0).queued().position(), 0);  // waits behind run a on GPU 0
  EXPECT_EQ(store_->GetRun(run_c)->state(), v1::RUN_STATE_QUEUED);
  EXPECT_EQ(runs_->Device(0).queued, 1);
  EXPECT_EQ(runs_->Device(1).queued, 0);
  {
    std::lock_guard lock(mu);
    open = true;
  }
  cv.notify_all();
  ASSERT_TRUE(a->Wait() && b->Wait() && c->Wait());
  auto ra = store_->GetRun(run_a), rb = store_->GetRun(run_b), rc = store_->GetRun(run_c);
  EXPECT_EQ(ra->device().uuid(), "GPU-test-0000");
  EXPECT_EQ(rb->device().uuid(), "GPU-test-0001");
  EXPECT_EQ(rb->device().index(), 1);
  EXPECT_EQ(rc->device().uuid(), "GPU-test-0000");
  EXPECT_GE(rc->started_at_ms(), ra->finished_at_ms()) << "one run at a time per GPU";
  EXPECT_EQ(runs_->Device(1).identity.uuid(), "GPU-test-0001");
  EXPECT_EQ(runs_->Device(0).device_count, 2);
}

TEST_F(MultiGpuTest, AWorkerDeathOnOneGpuRestartsThatGpusWorkerOnly) {
  script_->by_variant["abl_L1_R1_bl0_s3_sw1"] = WorkerScript::Action::kDieOnGpu1;
  Start();
  auto on0 = std::make_shared<Ended>(), on1 = std::make_shared<Ended>();
  const int64_t r0 = Submit(0, "abl_L1_R1_bl0_s3_sw1", on0);
  const int64_t r1 = Submit(1, "abl_L1_R1_bl0_s3_sw1", on1);
  ASSERT_TRUE(on0->Wait() && on1->Wait());
  EXPECT_EQ(store_->GetRun(r0)->state(), v1::RUN_STATE_SUCCEEDED);
  EXPECT_EQ(store_->GetRun(r1)->state(), v1::RUN_STATE_FAILED);
  // The next run on GPU 1 gets a new worker; GPU 0 keeps its first one.
  auto again = std::make_shared<Ended>();
  const int64_t r2 = Submit(1, "cublas_bf16", again);
  ASSERT_TRUE(again->Wait());
  EXPECT_EQ(store_->GetRun(r2)->state(), v1::RUN_STATE_SUCCEEDED);
  EXPECT_EQ(log_->starts_by_device[0], 1);
  EXPECT_EQ(log_->starts_by_device[1], 2);
}

TEST_F(MultiGpuTest, AnUnknownGpuIsRefusedNamingTheIndex) {
  Start();
  v1::RunRequest r;
  r.add_variants("cublas_bf16");
  auto* s = r.add_shapes();
  s->set_m(64);
  s->set_n(64);
  s->set_k(64);
  r.set_device(2);
  int64_t id = 0;
  Status st = runs_->SubmitRun(r, "test", std::make_shared<Ended>(), &id);
  EXPECT_EQ(st.code(), Code::kInvalidArgument);
  EXPECT_EQ(st.message(), "device: there is no GPU 2");
}

}  // namespace
}  // namespace ablation::core
