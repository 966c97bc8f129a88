// The daemon's memory under clients that hold it on purpose: WatchRun streams that never read
// during a long run, and streams opened and reset by the thousand. Each measured through the
// daemon's VmRSS (/proc/PID/status) against a bound, the counts scaled down from the hostile
// probe's (500 watchers, 60,000 resets) so that each test runs in seconds and still shows the
// bound: before, each unread watcher queued ~1.5 KB per event without a cap.
#include <signal.h>

#include <atomic>
#include <chrono>
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

constexpr int64_t kBoundBytes = 256ll << 20;

int64_t RssBytes(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::stoll(line.substr(6)) * 1024;
  return -1;
}

// A channel of its own (no subchannel shared with the others), so that the streams spread over
// several connections as several clients' would.
std::unique_ptr<v1::Ablation::Stub> OwnStub(const std::string& address, int n) {
  grpc::ChannelArguments args;
  args.SetInt("ablation.test.channel", n);
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  // A client that reads nothing takes only a few KB per stream into its own buffers (no window
  // grown by bandwidth probes): what it does not take waits in the daemon, as a slow client's.
  args.SetInt(GRPC_ARG_HTTP2_BDP_PROBE, 0);
  args.SetInt(GRPC_ARG_HTTP2_STREAM_LOOKAHEAD_BYTES, 4096);
  return v1::Ablation::NewStub(
      grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(), args));
}

class MemoryBounds : public ::testing::Test {
 protected:
  void StartDaemon(std::map<std::string, std::string> env = {}) {
    dir_ = MakeTempDir();
    ASSERT_FALSE(dir_.empty());
    daemon_ = std::make_unique<Daemon>(dir_, FAKE_WORKER_PATH, std::move(env));
    ASSERT_EQ(daemon_->Start(), "");
  }
  void TearDown() override {
    if (daemon_) daemon_->Stop(SIGTERM);
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }
  std::string dir_;
  std::unique_ptr<Daemon> daemon_;
};

TEST_F(MemoryBounds, WatchersThatNeverReadAreEndedAndTheDaemonStaysBounded) {
  StartDaemon();
  const int64_t rss_start = RssBytes(daemon_->pid());
  // A run of 128 variants x 3 shapes = 384 measurements, an event each: more than a watcher may
  // hold undelivered (256).
  v1::RunRequest request;
  request.add_variants("abl_*");
  for (int m : {256, 512, 768}) {
    auto* s = request.add_shapes();
    s->set_m(m);
    s->set_n(256);
    s->set_k(256);
  }
  request.set_unpaired(true);
  request.mutable_timing()->set_min_seconds(0.001);
  auto stub = daemon_->Stub();
  grpc::ClientContext run_ctx;
  auto run = stub->RunAblation(&run_ctx, request);
  v1::RunEvent event;
  ASSERT_TRUE(run->Read(&event));
  ASSERT_TRUE(event.has_queued()) << event.DebugString();
  const int64_t run_id = event.queued().run_id();

  // 200 watchers over 4 connections (50 streams each: within the 100 a connection may open),
  // none of which ever reads.
  constexpr int kWatchers = 200, kConnections = 4;
  std::vector<std::unique_ptr<v1::Ablation::Stub>> stubs;
  for (int c = 0; c < kConnections; ++c) stubs.push_back(OwnStub(daemon_->address(), c));
  std::vector<std::unique_ptr<grpc::ClientContext>> contexts;
  std::vector<std::unique_ptr<grpc::ClientReader<v1::RunEvent>>> watchers;
  v1::WatchRunRequest watch;
  watch.set_run_id(run_id);
  for (int i = 0; i < kWatchers; ++i) {
    contexts.push_back(std::make_unique<grpc::ClientContext>());
    watchers.push_back(stubs[i % kConnections]->WatchRun(contexts.back().get(), watch));
  }

  // The submitter reads its own stream to the end while the RSS is sampled.
  std::atomic<bool> done{false};
  std::thread reader([&] {
    v1::RunEvent e;
    int events = 0;
    while (run->Read(&e)) ++events;
    EXPECT_GT(events, 384);
    done = true;
  });
  int64_t rss_max = 0;
  while (!done) {
    rss_max = std::max(rss_max, RssBytes(daemon_->pid()));
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  reader.join();
  EXPECT_TRUE(run->Finish().ok());
  rss_max = std::max(rss_max, RssBytes(daemon_->pid()));
  std::printf("[memory] %d unread watchers: daemon RSS %.1f MB at start, %.1f MB at most\n",
              kWatchers, rss_start / 1e6, rss_max / 1e6);
  EXPECT_LT(rss_max, kBoundBytes);

  // A watcher that reads now gets what was written before it fell behind, then a status that
  // says so and how to resume.
  int delivered = 0;
  while (watchers[0]->Read(&event)) ++delivered;
  grpc::Status st = watchers[0]->Finish();
  EXPECT_EQ(st.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << st.error_message();
  EXPECT_THAT(st.error_message(), HasSubstr("watcher fell behind"));
  EXPECT_THAT(st.error_message(), HasSubstr("WatchRun(run_id=" + std::to_string(run_id) + ")"));
  EXPECT_LE(delivered, 300);
  for (auto& c : contexts) c->TryCancel();
  for (size_t i = 1; i < watchers.size(); ++i) (void)watchers[i]->Finish();  // [0] is finished
}

TEST_F(MemoryBounds, StreamsOpenedAndResetByTheThousandLeaveTheDaemonBounded) {
  StartDaemon();
  const int64_t rss_start = RssBytes(daemon_->pid());
  constexpr int kStreams = 2000;
  auto stub = daemon_->Stub();
  v1::WatchRunRequest watch;
  watch.set_run_id(1);  // no such run yet: each stream is looked up and answered or reset
  for (int i = 0; i < kStreams; ++i) {
    grpc::ClientContext ctx;
    auto w = stub->WatchRun(&ctx, watch);
    ctx.TryCancel();
    (void)w->Finish();
  }
  // The daemon still answers, and holds no memory per stream that went.
  grpc::ClientContext ctx;
  v1::ListRunsResponse runs;
  EXPECT_TRUE(stub->ListRuns(&ctx, v1::ListRunsRequest(), &runs).ok());
  const int64_t rss_end = RssBytes(daemon_->pid());
  std::printf("[memory] %d opened-and-reset streams: daemon RSS %.1f MB -> %.1f MB\n", kStreams,
              rss_start / 1e6, rss_end / 1e6);
  EXPECT_LT(rss_end, kBoundBytes);
}

}  // namespace
}  // namespace ablation::testing
