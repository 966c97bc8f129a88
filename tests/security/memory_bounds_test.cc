// The daemon's memory under clients that hold it on purpose: WatchRun streams that never read
// during a long run, and streams opened and reset by the thousand. Each measured through the
// daemon's VmRSS (/proc/PID/status) against a bound, the counts scaled down from the hostile
// probe's (500 watchers, 60,000 resets) so that each test runs in seconds and still shows the
// bound: before, each unread watcher queued ~1.5 KB per event without a cap.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include "server/metrics/process.h"
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

// The CPU time the process has used, user and system, in clock ticks (the metrics endpoint's
// parse of /proc/PID/stat); -1 where it cannot be read.
int64_t CpuTicks(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  metrics::ProcStat stat;
  if (!std::getline(in, line) || !metrics::ParseProcStat(line, &stat)) return -1;
  return int64_t(stat.user_ticks + stat.system_ticks);
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
  void StartDaemon(std::map<std::string, std::string> env = {}, const std::string& config = "") {
    dir_ = MakeTempDir();
    ASSERT_FALSE(dir_.empty());
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
  // What is bounded here is the events, not the measuring: no settling (a sustained window is
  // taken at once, its rows saying so), short windows and few samples, so that the 384 take
  // seconds, not the two minutes that were the test's whole limit.
  request.mutable_timing()->set_settle_max_seconds(0.001);
  request.mutable_timing()->set_window_seconds(0.01);
  request.mutable_timing()->set_max_samples(100);
  auto stub = daemon_->Stub();
  grpc::ClientContext run_ctx;
  auto run = stub->RunAblation(&run_ctx, request);
  v1::RunEvent event;
  ASSERT_TRUE(run->Read(&event));
  ASSERT_TRUE(event.has_queued()) << event.DebugString();
  const int64_t run_id = event.queued().run_id();

  // 1,000 watchers over 20 connections (50 streams each: within the 100 a connection may open),
  // none of which ever reads (1.71 GB before): the daemon keeps limits.max_watchers (128) of them
  // and refuses the rest.
  constexpr int kWatchers = 1000, kConnections = 20;
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

// Watchers are bounded for the daemon as a whole, not per connection (1,000 watchers spread over
// connections took 1.71 GB before): past limits.max_watchers a new one is refused by name, and
// one that ends frees its place. Here 20 allowed, 30 asked for over 3 connections.
TEST_F(MemoryBounds, WatchersAreBoundedForTheWholeDaemon) {
  StartDaemon({}, "[limits]\nmax_watchers = 20\n");
  v1::RunRequest request;
  request.add_variants("abl_*");
  auto* shape = request.add_shapes();
  shape->set_m(256);
  shape->set_n(256);
  shape->set_k(256);
  request.set_rounds(3);
  auto stub = daemon_->Stub();
  grpc::ClientContext run_ctx;
  auto run = stub->RunAblation(&run_ctx, request);
  v1::RunEvent event;
  ASSERT_TRUE(run->Read(&event));
  ASSERT_TRUE(event.has_queued()) << event.DebugString();
  v1::WatchRunRequest watch;
  watch.set_run_id(event.queued().run_id());
  std::vector<std::unique_ptr<v1::Ablation::Stub>> stubs;
  for (int c = 0; c < 3; ++c) stubs.push_back(OwnStub(daemon_->address(), c));
  const auto deadline = std::chrono::system_clock::now() + std::chrono::seconds(3);
  std::vector<std::unique_ptr<grpc::ClientContext>> contexts;
  std::vector<std::unique_ptr<grpc::ClientReader<v1::RunEvent>>> watchers;
  for (int i = 0; i < 30; ++i) {
    contexts.push_back(std::make_unique<grpc::ClientContext>());
    contexts.back()->set_deadline(deadline);
    watchers.push_back(stubs[i % 3]->WatchRun(contexts.back().get(), watch));
    // Opened one after the other, so that the first 20 are the ones the daemon keeps.
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  // The last ten first: a refused stream's status is read before the deadline ends the call.
  int refused = 0;
  std::string why;
  for (int i = 29; i >= 0; --i) {
    while (watchers[size_t(i)]->Read(&event)) {
    }
    const grpc::Status st = watchers[size_t(i)]->Finish();
    if (st.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED &&
        st.error_message().find("limits.max_watchers") != std::string::npos) {
      ++refused;
      why = st.error_message();
      EXPECT_GE(i, 20) << "one of the first 20 was refused";
    }
  }
  EXPECT_EQ(refused, 10) << why;
  EXPECT_THAT(why, HasSubstr("the daemon has 20 WatchRun streams open"));
  // Every watcher has ended (the daemon hears of it a moment after the client): a new one is
  // taken again.
  grpc::Status st;
  for (int attempt = 0; attempt < 20; ++attempt) {
    grpc::ClientContext again;
    again.set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(300));
    auto w = stub->WatchRun(&again, watch);
    while (w->Read(&event)) {
    }
    st = w->Finish();
    if (st.error_code() != grpc::StatusCode::RESOURCE_EXHAUSTED) break;
  }
  EXPECT_NE(st.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << st.error_message();
  run_ctx.TryCancel();
  (void)run->Finish();
}

// One HTTP/2 frame: 9 bytes of header (length, type, flags, stream), then the payload.
std::string Frame(uint8_t type, uint8_t flags, uint32_t stream, const std::string& payload) {
  std::string f;
  const uint32_t n = uint32_t(payload.size());
  f += char(n >> 16);
  f += char(n >> 8);
  f += char(n);
  f += char(type);
  f += char(flags);
  f += char(stream >> 24 & 0x7f);
  f += char(stream >> 16);
  f += char(stream >> 8);
  f += char(stream);
  return f + payload;
}

// HPACK's "literal header field without indexing, new name", no Huffman: every name and value
// here is shorter than 127 bytes, so each length is one byte.
std::string Literal(const std::string& name, const std::string& value) {
  return std::string(1, '\0') + char(name.size()) + name + char(value.size()) + value;
}

// 10,000 ListVariants calls on one connection from a client that never reads a byte of what the
// daemon answers (the hostile probe's: 2.95 GB before the quota and the stream limit). Spoken in
// raw HTTP/2 over a socket, since a gRPC client reads its socket whatever its application does.
// The daemon's replies wait on a connection window that is never opened; past the streams one
// connection may keep open (limits.max_concurrent_streams) further calls are refused, so what it
// holds is bounded by streams x reply, whatever the number of calls.
TEST_F(MemoryBounds, TenThousandUnreadListVariantsCallsOnOneConnectionLeaveTheDaemonBounded) {
  StartDaemon();
  const int64_t rss_start = RssBytes(daemon_->pid());
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  const int small = 4096;  // as little as the kernel allows taken off the daemon's hands
  ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
  const timeval send_timeout{2, 0};  // a daemon that stops reading us ends the sending
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &send_timeout, sizeof send_timeout);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(uint16_t(daemon_->port()));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  auto send_all = [fd](const std::string& bytes) {
    size_t sent = 0;
    while (sent < bytes.size()) {
      const ssize_t n = ::send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) return false;
      sent += size_t(n);
    }
    return true;
  };
  // The preface, our (empty) settings, and the acknowledgement of the daemon's, so that its
  // stream limit is in force for this connection.
  ASSERT_TRUE(send_all(std::string("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", 24) + Frame(4, 0, 0, "") +
                       Frame(4, 1, 0, "")));
  const std::string headers =
      Literal(":method", "POST") + Literal(":scheme", "http") +
      Literal(":path", "/ablation.v1.Ablation/ListVariants") + Literal(":authority", "localhost") +
      Literal("content-type", "application/grpc") + Literal("te", "trailers");
  const std::string empty_message(5, '\0');  // not compressed, 0 bytes: a ListVariantsRequest
  constexpr int kCalls = 10000;
  int sent = 0;
  int64_t rss_max = 0;
  for (; sent < kCalls; ++sent) {
    const uint32_t stream = uint32_t(2 * sent + 1);
    if (!send_all(Frame(1, 4, stream, headers) + Frame(0, 1, stream, empty_message))) break;
    if (sent % 500 == 0) rss_max = std::max(rss_max, RssBytes(daemon_->pid()));
  }
  // Time for the daemon to answer what it took, into a window that never opens.
  std::this_thread::sleep_for(std::chrono::seconds(1));
  rss_max = std::max(rss_max, RssBytes(daemon_->pid()));
  std::printf(
      "[memory] %d unread ListVariants calls sent on one connection (of %d): daemon RSS %.1f MB "
      "at start, %.1f MB at most\n",
      sent, kCalls, rss_start / 1e6, rss_max / 1e6);
  EXPECT_GT(sent, 1000);  // the calls did reach the daemon's connection
  EXPECT_LT(rss_max, kBoundBytes);
  // Another client is answered meanwhile, and after the first one leaves.
  {
    auto stub = OwnStub(daemon_->address(), 1);
    grpc::ClientContext ctx;
    v1::ListVariantsResponse variants;
    grpc::Status st = stub->ListVariants(&ctx, v1::ListVariantsRequest(), &variants);
    EXPECT_TRUE(st.ok()) << st.error_message();
    EXPECT_GT(variants.variants_size(), 100);
  }
  ::close(fd);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  auto stub = daemon_->Stub();
  grpc::ClientContext ctx;
  v1::ListRunsResponse runs;
  EXPECT_TRUE(stub->ListRuns(&ctx, v1::ListRunsRequest(), &runs).ok());
  std::printf("[memory] after the client left: daemon RSS %.1f MB\n",
              RssBytes(daemon_->pid()) / 1e6);
}

// The rapid reset of HTTP/2 (CVE-2023-44487): a client opens a stream (HEADERS and its request)
// and resets it at once (RST_STREAM), tens of thousands of times, reading what the daemon sends
// so that nothing of it waits on the client. `connections` connections of `streams` each, with
// `authorization` as a header when not empty. Returns the daemon's largest RSS seen.
int64_t RapidReset(int port, pid_t daemon, int connections, int streams,
                   const std::string& authorization) {
  std::string headers = Literal(":method", "POST") + Literal(":scheme", "http") +
                        Literal(":path", "/ablation.v1.Ablation/WatchRun") +
                        Literal(":authority", "localhost") +
                        Literal("content-type", "application/grpc") + Literal("te", "trailers");
  if (!authorization.empty()) headers += Literal("authorization", authorization);
  const std::string watch_run_1("\0\0\0\0\x02\x08\x01", 7);  // WatchRunRequest{run_id: 1}
  const std::string cancel("\0\0\0\x08", 4);                 // RST_STREAM's CANCEL
  std::atomic<int64_t> rss_max{0};
  std::vector<std::thread> clients;
  for (int c = 0; c < connections; ++c)
    clients.emplace_back([&] {
      const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
      sockaddr_in addr{};
      addr.sin_family = AF_INET;
      addr.sin_port = htons(uint16_t(port));
      addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) return;
      std::atomic<bool> done{false};
      std::thread reader([&] {  // what the daemon answers is read and dropped
        char buf[65536];
        while (!done && ::recv(fd, buf, sizeof buf, 0) > 0) {
        }
      });
      std::string batch = std::string("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", 24) + Frame(4, 0, 0, "") +
                          Frame(4, 1, 0, "");
      for (int i = 0; i < streams; ++i) {
        const uint32_t stream = uint32_t(2 * i + 1);
        batch += Frame(1, 4, stream, headers) + Frame(0, 1, stream, watch_run_1) +
                 Frame(3, 0, stream, cancel);
        if (i % 200 == 199 || i == streams - 1) {
          if (::send(fd, batch.data(), batch.size(), MSG_NOSIGNAL) != ssize_t(batch.size())) break;
          batch.clear();
          if (i % 2000 == 1999) {
            int64_t now = RssBytes(daemon), seen = rss_max;
            while (now > seen && !rss_max.compare_exchange_weak(seen, now)) {
            }
          }
        }
      }
      done = true;
      ::shutdown(fd, SHUT_RDWR);
      reader.join();
      ::close(fd);
    });
  for (std::thread& t : clients) t.join();
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  return std::max<int64_t>(rss_max, RssBytes(daemon));
}

// The hostile probe's numbers: 60,000 opened-and-reset streams took the daemon from 28 MB to
// 1.33 GB, and 2.36 GB after a second burst, kept. Here three bursts of 60,000 over 4 connections.
// What gRPC 1.51 (Debian 12's) allows does not hold the peak at 256 MB: it has no rapid-reset
// defence (that came in 1.56.3/1.57.1): a reset stream leaves the transport's stream count at
// once while its call lives on until the daemon has answered it, so a burst leaves seconds of
// calls queued, and no channel argument of 1.51 (the memory quota, read chunk sizes, stream
// limits) changes that; measured on the build machine, the peak is 400-750 MB. What the daemon
// does hold to: the queue drains and the memory goes back (glibc kept it before, about 400 MB
// for good; daemon/memory_trim.h), and it answers throughout.
TEST_F(MemoryBounds, RapidResetBurstsDrainAndTheirMemoryGoesBack) {
  StartDaemon();
  const int64_t rss_start = RssBytes(daemon_->pid());
  int64_t peak = 0;
  for (int burst = 0; burst < 3; ++burst)
    peak = std::max(peak, RapidReset(daemon_->port(), daemon_->pid(), 4, 15000, ""));
  // Drained: the daemon has answered the calls the bursts queued. That takes about 16 s alone on
  // the 2-core build machine and 25-73 s beside other tests or busy loops (a fixed 40 s wait
  // failed in a full suite with 404 MB still in use, the calls not yet answered): so the daemon
  // idle (under 5% of a core) two seconds in a row, within 180 s. Then its trimmer (once a
  // second) has 3 s to hand the memory back. What stays once drained: 53-168 MB in ten runs
  // (flat for the next minute where watched; more where the drain was slow, beside other
  // tests), 404-422 MB without the trimmer; so the bound is 256 MB.
  const auto bursts_end = std::chrono::steady_clock::now();
  const long ticks_per_s = ::sysconf(_SC_CLK_TCK);
  int idle_seconds = 0;
  for (int64_t ticks = CpuTicks(daemon_->pid()); idle_seconds < 2;) {
    ASSERT_LT(std::chrono::steady_clock::now() - bursts_end, std::chrono::seconds(180))
        << "the daemon still works through the bursts' calls";
    std::this_thread::sleep_for(std::chrono::seconds(1));
    const int64_t now = CpuTicks(daemon_->pid());
    ASSERT_GE(now, 0) << "the daemon is gone";
    idle_seconds = (now - ticks) * 20 < ticks_per_s ? idle_seconds + 1 : 0;
    ticks = now;
  }
  const double drain_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - bursts_end).count();
  int64_t after = RssBytes(daemon_->pid());
  for (int tenth = 0; tenth < 30 && after > kBoundBytes; ++tenth) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    after = RssBytes(daemon_->pid());
  }
  std::printf(
      "[memory] 3 x 60,000 rapid resets: daemon RSS %.1f MB, %.1f MB at most, %.1f MB "
      "once drained (idle %.0f s after the bursts)\n",
      rss_start / 1e6, peak / 1e6, after / 1e6, drain_s);
  EXPECT_LT(peak, 4 * kBoundBytes);
  EXPECT_LT(after, kBoundBytes) << "the memory of calls answered long ago is still held";
  auto stub = daemon_->Stub();
  grpc::ClientContext ctx;
  v1::ListRunsResponse runs;
  EXPECT_TRUE(stub->ListRuns(&ctx, v1::ListRunsRequest(), &runs).ok());
}

}  // namespace
}  // namespace ablation::testing
