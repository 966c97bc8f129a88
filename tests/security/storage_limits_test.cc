// A daemon whose disk fills, or whose file-size limit is reached, mid-run: the run ends failed
// with a reason that says so, the daemon keeps serving (a file-size limit sent SIGXFSZ, which
// killed it), and what was stored before stays readable. The limit is set with prlimit (util-
// linux) on the daemon's process, which SQLite meets as a write that fails (EFBIG), as it meets
// a full disk (ENOSPC).
#include <signal.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include <gmock/gmock.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include "tests/e2e/harness.h"

namespace ablation::testing {
namespace {

using ::testing::HasSubstr;

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

TEST(StorageLimits, AFileSizeLimitEndsTheRunWithAReasonAndTheDaemonServes) {
  const std::string dir = MakeTempDir();
  ASSERT_FALSE(dir.empty());
  Daemon daemon(dir, FAKE_WORKER_PATH);
  daemon.set_launcher({"/usr/bin/prlimit", "--fsize=" + std::to_string(3 << 20), "--"});
  ASSERT_EQ(daemon.Start(), "");
  auto stub = daemon.Stub();
  // Measurements with many samples each: about 32 B a sample stored, 128 x 4,000 = 16 MB.
  v1::RunRequest request;
  request.add_variants("abl_*");
  auto* shape = request.add_shapes();
  shape->set_m(256);
  shape->set_n(256);
  shape->set_k(256);
  request.set_unpaired(true);
  request.mutable_timing()->set_min_samples(4000);
  request.mutable_timing()->set_max_samples(4000);
  request.mutable_timing()->set_settle_max_seconds(0.001);
  request.mutable_timing()->set_window_seconds(0.01);
  grpc::ClientContext ctx;
  auto run = stub->RunAblation(&ctx, request);
  v1::RunEvent event;
  int64_t run_id = 0;
  std::string failed;
  while (run->Read(&event)) {
    if (event.has_queued()) run_id = event.queued().run_id();
    if (event.has_failed()) failed = event.failed().reason();
  }
  (void)run->Finish();
  {
    grpc::ClientContext list_ctx;
    v1::ListRunsResponse runs;
    ASSERT_TRUE(stub->ListRuns(&list_ctx, v1::ListRunsRequest(), &runs).ok())
        << "the daemon died (SIGXFSZ?)\n"
        << daemon.log();
  }
  ASSERT_GT(run_id, 0);
  EXPECT_THAT(failed, HasSubstr("could not be stored")) << failed;
  // The daemon answers, and the run reads as failed with that reason, not as running.
  grpc::ClientContext get_ctx;
  v1::GetRunRequest get;
  get.set_run_id(run_id);
  v1::GetRunResponse got;
  const grpc::Status st = stub->GetRun(&get_ctx, get, &got);
  ASSERT_TRUE(st.ok()) << st.error_message();
  EXPECT_EQ(got.run().state(), v1::RUN_STATE_FAILED) << got.run().DebugString().substr(0, 400);
  EXPECT_THAT(got.run().error(), HasSubstr("could not be stored"));
  EXPECT_GT(got.measurements_size(), 0) << "what was stored before is gone";
  if (::testing::Test::HasFailure()) std::printf("%s\n", Slurp(dir + "/daemon.out").c_str());
  daemon.Stop(SIGTERM);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace ablation::testing
