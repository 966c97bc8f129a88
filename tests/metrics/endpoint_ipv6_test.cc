// The /metrics endpoint over IPv6 (GNU libmicrohttpd binds it; Debian 12's civetweb could not),
// and what bounds its connections: how fast it stops, when it closes an idle connection, how many
// one address may hold. Skipped, saying so, where the machine has no IPv6 loopback.
#include <gtest/gtest.h>

#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <chrono>
#include <iostream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <prometheus/counter.h>
#include <prometheus/registry.h>
#include <spdlog/sinks/ringbuffer_sink.h>
#include <spdlog/spdlog.h>

#include "server/metrics/endpoint.h"
#include "server/metrics/exposition.h"
#include "tests/metrics/http_client.h"

namespace ablation::metrics {
namespace {

using http_test::BodyOf;
using http_test::Connect;
using http_test::HasIpv6Loopback;
using http_test::Http;
using http_test::StatusOf;
using Clock = std::chrono::steady_clock;

#define SKIP_WITHOUT_IPV6() \
  if (!HasIpv6Loopback())   \
  GTEST_SKIP() << "no IPv6 loopback (::1) on this machine: the IPv6 endpoint is not tested"

class Ipv6EndpointTest : public ::testing::Test {
 protected:
  void SetUp() override {
    prometheus::BuildCounter()
        .Name("t_scrapes_total")
        .Help("Scrapes")
        .Register(registry_)
        .Add({{"over", "ipv6"}})
        .Increment(3);
  }
  prometheus::Registry registry_;
};

// [::1]:9464, the form the daemon's help suggests, serves the registry's text to an IPv6 client.
TEST_F(Ipv6EndpointTest, TheIpv6LoopbackServesTheMetrics) {
  SKIP_WITHOUT_IPV6();
  std::unique_ptr<MetricsEndpoint> e;
  core::Status st = MetricsEndpoint::Start("[::1]:0", &registry_, &e);
  ASSERT_TRUE(st.ok()) << st.message();
  ASSERT_GT(e->port(), 0);
  const std::string r = Http(e->port(), "GET /metrics", "", AF_INET6);
  EXPECT_EQ(StatusOf(r), 200) << r;
  EXPECT_EQ(BodyOf(r), WriteText(registry_)) << r;
  EXPECT_NE(r.find("t_scrapes_total{over=\"ipv6\"} 3"), std::string::npos) << r;
  EXPECT_EQ(BodyOf(Http(e->port(), "GET /healthz", "", AF_INET6)), "ok\n");
  EXPECT_EQ(StatusOf(Http(e->port(), "GET /metrics/x", "", AF_INET6)), 404);
}

// Exactly the address given: [::1] is bound IPv6-only, 127.0.0.1 on its port is nobody.
TEST_F(Ipv6EndpointTest, TheIpv6LoopbackTakesNoIpv4Connection) {
  SKIP_WITHOUT_IPV6();
  std::unique_ptr<MetricsEndpoint> e;
  ASSERT_TRUE(MetricsEndpoint::Start("[::1]:0", &registry_, &e).ok());
  EXPECT_EQ(Connect(e->port(), AF_INET), -1);
  EXPECT_EQ(Http(e->port(), "GET /metrics", "", AF_INET), "connect failed");
}

// [::] (every IPv6 address) is reached from other machines: refused without allow_remote, with
// the loopbacks to use instead; with it, served on IPv6 alone (no dual stack: no IPv4 on it).
TEST_F(Ipv6EndpointTest, AllIpv6AddressesAreRemote) {
  SKIP_WITHOUT_IPV6();
  std::unique_ptr<MetricsEndpoint> e;
  core::Status st = MetricsEndpoint::Start("[::]:0", &registry_, &e);
  EXPECT_EQ(st.code(), core::Code::kInvalidArgument);
  EXPECT_NE(st.message().find("can be reached from other machines"), std::string::npos)
      << st.message();
  EXPECT_NE(st.message().find("listen on 127.0.0.1 or [::1], or pass --metrics-allow-remote"),
            std::string::npos)
      << st.message();
  EndpointOptions options;
  options.allow_remote = true;
  st = MetricsEndpoint::Start("[::]:0", &registry_, &e, options);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(StatusOf(Http(e->port(), "GET /metrics", "", AF_INET6)), 200);
  EXPECT_EQ(Connect(e->port(), AF_INET), -1);
}

// A port taken over IPv6 is refused as one taken over IPv4 is.
TEST_F(Ipv6EndpointTest, AnIpv6PortInUseIsRefusedSayingSo) {
  SKIP_WITHOUT_IPV6();
  std::unique_ptr<MetricsEndpoint> first, second;
  ASSERT_TRUE(MetricsEndpoint::Start("[::1]:0", &registry_, &first).ok());
  const std::string taken = "[::1]:" + std::to_string(first->port());
  core::Status st = MetricsEndpoint::Start(taken, &registry_, &second);
  EXPECT_EQ(st.code(), core::Code::kFailedPrecondition);
  EXPECT_NE(st.message().find("cannot serve metrics on " + taken + ": "), std::string::npos)
      << st.message();
  EXPECT_NE(st.message().find("(address in use? --metrics-listen '' turns it off)"),
            std::string::npos)
      << st.message();
}

// 32 connections over IPv6 that send nothing: a scrape beside them answers within a second.
TEST_F(Ipv6EndpointTest, IdleIpv6ConnectionsDoNotBlockAScrape) {
  SKIP_WITHOUT_IPV6();
  std::unique_ptr<MetricsEndpoint> e;
  ASSERT_TRUE(MetricsEndpoint::Start("[::1]:0", &registry_, &e).ok());
  std::vector<int> idle;
  for (int i = 0; i < 32; ++i) {
    idle.push_back(Connect(e->port(), AF_INET6));
    ASSERT_GE(idle.back(), 0) << i;
  }
  const auto start = Clock::now();
  EXPECT_EQ(StatusOf(Http(e->port(), "GET /metrics", "", AF_INET6)), 200);
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(1));
  for (int fd : idle) ::close(fd);
}

// Stopping closes open connections and joins the threads at once (civetweb's took about 2 s).
TEST_F(Ipv6EndpointTest, StopIsQuick) {
  std::unique_ptr<MetricsEndpoint> e;
  ASSERT_TRUE(MetricsEndpoint::Start("127.0.0.1:0", &registry_, &e).ok());
  std::vector<int> idle;
  for (int i = 0; i < 4; ++i) idle.push_back(Connect(e->port()));
  (void)!::write(idle[0], "GET /metr", 9);
  ASSERT_EQ(StatusOf(Http(e->port(), "GET /metrics")), 200);
  const auto start = Clock::now();
  e.reset();
  const auto took = std::chrono::duration<double, std::milli>(Clock::now() - start);
  std::cout << "the endpoint stopped in " << took.count() << " ms\n";
  RecordProperty("stop_ms", std::to_string(took.count()));
  EXPECT_LT(took, std::chrono::milliseconds(500));
  for (int fd : idle) ::close(fd);
}

// A connection that sends nothing is closed after the endpoint's timeout (3 s), so a flood of them
// holds its places for no longer.
TEST_F(Ipv6EndpointTest, AnIdleConnectionIsClosedAfterTheTimeout) {
  std::unique_ptr<MetricsEndpoint> e;
  ASSERT_TRUE(MetricsEndpoint::Start("127.0.0.1:0", &registry_, &e).ok());
  const int fd = Connect(e->port());
  ASSERT_GE(fd, 0);
  timeval limit{10, 0};  // a read that never ends would hang the test, not fail it
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
  const auto start = Clock::now();
  char byte;
  EXPECT_EQ(::read(fd, &byte, 1), 0);  // closed by the endpoint, nothing answered
  const auto took = Clock::now() - start;
  EXPECT_GT(took, std::chrono::milliseconds(2500));
  EXPECT_LT(took, std::chrono::seconds(6));
  ::close(fd);
}

// One address holds at most 64 connections: the 65th is closed unanswered; once they go, scrapes
// are answered again.
TEST_F(Ipv6EndpointTest, OneAddressHoldsAtMost64Connections) {
  std::unique_ptr<MetricsEndpoint> e;
  ASSERT_TRUE(MetricsEndpoint::Start("127.0.0.1:0", &registry_, &e).ok());
  std::vector<int> flood;
  for (int i = 0; i < 64; ++i) {
    flood.push_back(Connect(e->port()));
    ASSERT_GE(flood.back(), 0) << i;
  }
  // All 64 accepted before the next (the endpoint's two threads accept side by side).
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_EQ(StatusOf(Http(e->port(), "GET /metrics")), 0);
  for (int fd : flood) ::close(fd);
  int status = 0;  // the endpoint sees the 64 go as its threads next wake
  for (const auto until = Clock::now() + std::chrono::seconds(2);
       status != 200 && Clock::now() < until;
       std::this_thread::sleep_for(std::chrono::milliseconds(20)))
    status = StatusOf(Http(e->port(), "GET /metrics"));
  EXPECT_EQ(status, 200);
}

// A flood of connections closed half-way, a message of libmicrohttpd each, puts at most 10 lines a
// minute in the daemon's log.
TEST_F(Ipv6EndpointTest, AFloodOfHalfRequestsLogsAtMostTenLinesAMinute) {
  struct Restore {
    std::shared_ptr<spdlog::logger> logger = spdlog::default_logger();
    ~Restore() { spdlog::set_default_logger(logger); }
  } restore;
  const auto log = std::make_shared<spdlog::sinks::ringbuffer_sink_mt>(100);
  spdlog::set_default_logger(std::make_shared<spdlog::logger>("test", log));
  auto lines = [&log] { return log->last_formatted().size(); };  // under the sink's mutex
  {
    std::unique_ptr<MetricsEndpoint> e;
    ASSERT_TRUE(MetricsEndpoint::Start("127.0.0.1:0", &registry_, &e).ok());
    std::vector<int> half;
    for (int i = 0; i < 20; ++i) {
      half.push_back(Connect(e->port()));
      (void)!::write(half.back(), "GET /metr", 9);
    }
    // Read as half a request before they close (closed at once, some are read with their end).
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    for (int fd : half) ::close(fd);
    for (const auto until = Clock::now() + std::chrono::seconds(2);
         lines() < 10 && Clock::now() < until;)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the other 10, if any
    EXPECT_EQ(StatusOf(Http(e->port(), "GET /metrics")), 200);
  }
  const std::vector<std::string> logged = log->last_formatted();
  ASSERT_EQ(logged.size(), 10u);
  EXPECT_NE(logged[0].find("metrics endpoint: "), std::string::npos) << logged[0];
}

}  // namespace
}  // namespace ablation::metrics
