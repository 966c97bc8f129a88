// The full path on a real GPU: ablation-client -> ablationd -> ablation-worker -> SQLite.
// Skipped, with the reason, where the worker sees no CUDA device.
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include <gmock/gmock.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include "db/store.h"
#include "tests/e2e/harness.h"

namespace ablation::testing {
namespace {

using ::testing::HasSubstr;

class GpuE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = MakeTempDir();
    daemon_ = std::make_unique<Daemon>(dir_, REAL_WORKER_PATH);
    ASSERT_EQ(daemon_->Start(), "");
    grpc::ClientContext ctx;
    v1::GetDeviceRequest req;
    v1::GetDeviceResponse resp;
    ASSERT_TRUE(daemon_->Stub()->GetDevice(&ctx, req, &resp).ok());
    if (!resp.available()) GTEST_SKIP() << resp.unavailable_reason();
  }
  void TearDown() override {
    if (daemon_) daemon_->Stop(SIGTERM);
    std::filesystem::remove_all(dir_);
  }
  std::string dir_;
  std::unique_ptr<Daemon> daemon_;
};

TEST_F(GpuE2E, ClientRunMeasuresBothKernelsAndStoresThem) {
  auto run = daemon_->Client({"run", "--variant", "L0_R1_s1", "--variant", "cublas_bf16", "--shape",
                              "1024x1024x1024", "--verify", "--tag", "gpu-test"});
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_THAT(run.out, HasSubstr("abl_L0_R1_bl0_s1_sw1"));
  auto store = db::Store::OpenReadOnly(daemon_->db_path());
  auto latest = store->LatestRun();
  ASSERT_TRUE(latest);
  EXPECT_EQ(latest->state(), v1::RUN_STATE_SUCCEEDED);
  EXPECT_FALSE(latest->device().uuid().empty());
  EXPECT_FALSE(latest->device().cublas_version().empty());
  auto ms = store->MeasurementsOfRun(latest->id(), true);
  ASSERT_EQ(ms.size(), 2u);
  for (const auto& m : ms) {
    EXPECT_EQ(m.status(), v1::MEASUREMENT_STATUS_OK) << m.error();
    EXPECT_EQ(m.verification(), "passed");
    EXPECT_GE(m.stats().samples(), 10);
    EXPECT_GT(m.tflops(), 1.0);
  }
  EXPECT_GT(ms[0].occupancy().registers_per_thread(), 0)
      << "the custom kernel reports its resources";
}

TEST_F(GpuE2E, KillingTheWorkerMidRunLeavesTheDaemonServingAndTheRunGoingOn) {
  v1::RunRequest req;
  req.add_variants("abl_L1_R1_bl0_s*_sw1");  // 4 variants
  req.add_variants("cublas_bf16");
  auto* s = req.add_shapes();
  s->set_m(4096);
  s->set_n(4096);
  s->set_k(4096);
  req.mutable_timing()->set_min_seconds(1.0);
  req.mutable_timing()->set_max_seconds(2.0);
  auto stub = daemon_->Stub();
  grpc::ClientContext ctx;
  auto reader = stub->RunAblation(&ctx, req);
  v1::RunEvent ev;
  std::vector<v1::Measurement> ms;
  bool killed = false;
  while (reader->Read(&ev)) {
    if (ev.has_started() && !killed) {
      // Let the window of all five get going (it settles for seconds), then kill the worker
      // under it.
      std::this_thread::sleep_for(std::chrono::milliseconds(700));
      auto workers = ChildrenNamed(daemon_->pid(), "ablation-worker");
      ASSERT_EQ(workers.size(), 1u);
      ::kill(workers[0], SIGKILL);
      killed = true;
    }
    if (ev.has_measurement()) ms.push_back(ev.measurement());
    // The window died without naming a variant: each is measured alone on a new worker, and
    // none of them is at fault.
    if (ev.has_finished()) EXPECT_EQ(ev.finished().state(), v1::RUN_STATE_SUCCEEDED);
  }
  ASSERT_TRUE(reader->Finish().ok());
  ASSERT_EQ(ms.size(), 5u);
  for (const auto& m : ms) {
    EXPECT_EQ(m.status(), v1::MEASUREMENT_STATUS_OK) << m.error();
    EXPECT_EQ(m.window_members(), 1);
    EXPECT_THAT(m.regime_note(),
                HasSubstr("measured apart: its window with 4 other variants failed (worker died"));
    EXPECT_THAT(m.regime_note(), HasSubstr("signal 9"));
  }
  auto device = daemon_->Client({"device"});
  EXPECT_EQ(device.exit_code, 0);
  EXPECT_THAT(device.out, HasSubstr("H"));  // still answering with the device
}

}  // namespace
}  // namespace ablation::testing
