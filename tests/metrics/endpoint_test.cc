// The /metrics endpoint over a real loopback socket: what it answers, what it refuses, and the
// addresses it takes.
#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <prometheus/gauge.h>
#include <prometheus/registry.h>

#include "server/metrics/endpoint.h"
#include "server/metrics/exposition.h"
#include "tests/metrics/http_client.h"

namespace ablation::metrics {
namespace {

using http_test::BodyOf;
using http_test::Connect;
using http_test::HeaderOf;
using http_test::Http;
using http_test::StatusOf;

// One endpoint for the suite (its stop takes milliseconds: StopIsQuick).
class EndpointTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    registry_ = new prometheus::Registry;
    prometheus::BuildGauge()
        .Name("t_value")
        .Help("A value")
        .Register(*registry_)
        .Add({{"name", "a \"quoted\" one"}})
        .Set(2);
    core::Status st = MetricsEndpoint::Start("127.0.0.1:0", registry_, &endpoint_);
    ASSERT_TRUE(st.ok()) << st.message();
  }
  static void TearDownTestSuite() {
    endpoint_.reset();
    delete registry_;
  }
  void SetUp() override { ASSERT_TRUE(endpoint_ && endpoint_->port() > 0); }
  static prometheus::Registry* registry_;
  static std::unique_ptr<MetricsEndpoint> endpoint_;
};
prometheus::Registry* EndpointTest::registry_ = nullptr;
std::unique_ptr<MetricsEndpoint> EndpointTest::endpoint_;

TEST_F(EndpointTest, GetMetricsAnswersTheTextFormat) {
  const std::string r = Http(endpoint_->port(), "GET /metrics");
  EXPECT_EQ(StatusOf(r), 200) << r;
  EXPECT_NE(r.find(std::string("Content-Type: ") + kTextContentType), std::string::npos) << r;
  EXPECT_NE(r.find("\r\n\r\n# HELP t_value A value\n# TYPE t_value gauge\n"
                   "t_value{name=\"a \\\"quoted\\\" one\"} 2\n"),
            std::string::npos)
      << r;
}

// HEAD answers GET's headers, its Content-Length included, and no body.
TEST_F(EndpointTest, HeadHasNoBody) {
  const std::string r = Http(endpoint_->port(), "HEAD /metrics");
  EXPECT_EQ(StatusOf(r), 200) << r;
  EXPECT_EQ(r.find("# HELP"), std::string::npos) << r;
  EXPECT_EQ(BodyOf(r), "") << r;
  EXPECT_EQ(HeaderOf(r, "Content-Type"), kTextContentType) << r;
  const std::string get = Http(endpoint_->port(), "GET /metrics");
  EXPECT_EQ(HeaderOf(r, "Content-Length"), std::to_string(BodyOf(get).size())) << r << get;
  EXPECT_EQ(HeaderOf(get, "Content-Length"), std::to_string(BodyOf(get).size())) << get;
  const std::string health = Http(endpoint_->port(), "HEAD /healthz");
  EXPECT_EQ(StatusOf(health), 200) << health;
  EXPECT_EQ(HeaderOf(health, "Content-Length"), "3") << health;
  EXPECT_EQ(BodyOf(health), "") << health;
}

TEST_F(EndpointTest, OtherPathsAndMethodsAreRefused) {
  EXPECT_EQ(StatusOf(Http(endpoint_->port(), "GET /")), 404);
  EXPECT_EQ(StatusOf(Http(endpoint_->port(), "GET /metrics/x")), 404);
  EXPECT_EQ(StatusOf(Http(endpoint_->port(), "GET /metricsx")), 404);
  EXPECT_EQ(StatusOf(Http(endpoint_->port(), "GET /healthz/x")), 404);
  EXPECT_EQ(StatusOf(Http(endpoint_->port(), "POST /metrics")), 405);
  const std::string not_found = Http(endpoint_->port(), "GET /metrics/x");
  EXPECT_EQ(BodyOf(not_found), "not found: the metrics are at /metrics\n") << not_found;
  const std::string post = Http(endpoint_->port(), "POST /metrics", "Content-Length: 3\r\n");
  EXPECT_EQ(BodyOf(post), "only GET and HEAD are served here\n") << post;
  EXPECT_EQ(HeaderOf(post, "Allow"), "GET, HEAD") << post;
  EXPECT_EQ(StatusOf(Http(endpoint_->port(), "DELETE /healthz")), 405);
}

TEST_F(EndpointTest, APortInUseIsRefusedSayingSo) {
  std::unique_ptr<MetricsEndpoint> second;
  core::Status st =
      MetricsEndpoint::Start("127.0.0.1:" + std::to_string(endpoint_->port()), registry_, &second);
  EXPECT_EQ(st.code(), core::Code::kFailedPrecondition);
  EXPECT_NE(st.message().find("cannot serve metrics on 127.0.0.1:"), std::string::npos)
      << st.message();
  // libmicrohttpd's reason, then what to do about it.
  EXPECT_NE(st.message().find("Address already in use"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("(address in use? --metrics-listen '' turns it off)"),
            std::string::npos)
      << st.message();
}

TEST(ListenAddressTest, TakesIpLiteralsWithAPort) {
  std::string host;
  int port = -1;
  EXPECT_EQ(CheckListenAddress("127.0.0.1:9464", &host, &port), "");
  EXPECT_EQ(host, "127.0.0.1");
  EXPECT_EQ(port, 9464);
  EXPECT_EQ(CheckListenAddress("0.0.0.0:9464", &host, &port), "");
  EXPECT_EQ(CheckListenAddress("[::1]:9464", &host, &port), "");
  EXPECT_EQ(host, "[::1]");
  EXPECT_EQ(CheckListenAddress("[::]:0", &host, &port), "");
  EXPECT_EQ(port, 0);
}

TEST(ListenAddressTest, LoopbackIsIpv4sAndIpv6s) {
  for (const char* host :
       {"127.0.0.1", "127.8.9.10", "[::1]", "[0:0:0:0:0:0:0:1]", "[::ffff:127.0.0.1]"})
    EXPECT_TRUE(IsLoopbackHost(host)) << host;
  for (const char* host :
       {"0.0.0.0", "10.0.0.1", "[::]", "[::2]", "[::ffff:10.0.0.1]", "[fe80::1]", "::1", "x"})
    EXPECT_FALSE(IsLoopbackHost(host)) << host;
}

TEST(ListenAddressTest, ARemoteAddressNeedsAllowRemote) {
  std::unique_ptr<MetricsEndpoint> e;
  prometheus::Registry registry;
  core::Status st = MetricsEndpoint::Start("0.0.0.0:0", &registry, &e);
  EXPECT_EQ(st.code(), core::Code::kInvalidArgument);
  EXPECT_NE(st.message().find("--metrics-allow-remote"), std::string::npos) << st.message();
  EndpointOptions options;
  options.allow_remote = true;
  EXPECT_TRUE(MetricsEndpoint::Start("0.0.0.0:0", &registry, &e, options).ok());
}

// With credentials asked for, /metrics answers 401 without the right bearer token (no header, or
// a wrong one: the reason, and how to authenticate) and 200 with it; /healthz (the kubelet's
// probes) answers without one.
TEST(EndpointAuthTest, MetricsNeedTheTokenHealthDoesNot) {
  prometheus::Registry registry;
  EndpointOptions options;
  std::mutex mu;
  std::vector<std::string> seen;  // the headers the endpoint's threads were asked about
  options.authorize = [&](std::string_view header) -> std::string {
    std::lock_guard lock(mu);
    seen.emplace_back(header);
    return header == "Bearer good" ? "" : "a read token is needed";
  };
  std::unique_ptr<MetricsEndpoint> e;
  ASSERT_TRUE(MetricsEndpoint::Start("127.0.0.1:0", &registry, &e, options).ok());
  const std::string refused = Http(e->port(), "GET /metrics");
  EXPECT_EQ(StatusOf(refused), 401) << refused;
  EXPECT_EQ(HeaderOf(refused, "WWW-Authenticate"), "Bearer realm=\"ablationd\"") << refused;
  EXPECT_EQ(HeaderOf(refused, "Content-Type"), "text/plain; charset=utf-8") << refused;
  EXPECT_EQ(BodyOf(refused), "a read token is needed\n") << refused;
  const std::string bad = Http(e->port(), "GET /metrics", "Authorization: Bearer bad\r\n");
  EXPECT_EQ(StatusOf(bad), 401) << bad;
  EXPECT_EQ(BodyOf(bad), "a read token is needed\n") << bad;
  EXPECT_EQ(StatusOf(Http(e->port(), "GET /metrics", "Authorization: Bearer good\r\n")), 200);
  EXPECT_EQ(StatusOf(Http(e->port(), "HEAD /metrics", "Authorization: Bearer bad\r\n")), 401);
  const std::string health = Http(e->port(), "GET /healthz");
  EXPECT_EQ(StatusOf(health), 200) << health;
  EXPECT_EQ(BodyOf(health), "ok\n") << health;
  std::lock_guard lock(mu);
  EXPECT_EQ(seen, (std::vector<std::string>{"", "Bearer bad", "Bearer good", "Bearer bad"}));
}

// Connections that open and send nothing, or half a request line, do not hold the endpoint: a
// scrape beside them answers at once (two such held it 10 s before, under civetweb).
TEST_F(EndpointTest, HalfOpenConnectionsDoNotBlockAScrape) {
  std::vector<int> idle;
  for (int i = 0; i < 4; ++i) {
    const int fd = Connect(endpoint_->port());
    ASSERT_GE(fd, 0);
    (void)!::write(fd, "GET /metr", 9);  // a request line never finished
    idle.push_back(fd);
  }
  for (int i = 0; i < 32; ++i) {  // more than any pool of threads the endpoint might have
    const int fd = Connect(endpoint_->port());
    ASSERT_GE(fd, 0) << i;
    idle.push_back(fd);
  }
  for (int round = 0; round < 3; ++round) {
    const auto start = std::chrono::steady_clock::now();
    const std::string r = Http(endpoint_->port(), "GET /metrics");
    EXPECT_EQ(StatusOf(r), 200) << r;
    EXPECT_NE(r.find("t_value{"), std::string::npos) << r;
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1)) << round;
    EXPECT_EQ(StatusOf(Http(endpoint_->port(), "GET /healthz")), 200) << round;
  }
  for (int fd : idle) ::close(fd);
}

// Connections that trickle their request a byte every half second (each byte restarts an idle
// timeout) as many as one address may hold: a scrape from that address was refused for as long
// as they lasted. Each must finish a request within 5 s, so within about 6 s the endpoint has
// closed them and answers again, while they are still trickling.
TEST_F(EndpointTest, TricklingConnectionsAreClosedAndDoNotBlindTheScrape) {
  constexpr int kTricklers = 64;  // kPerAddressLimit: every place this address may hold
  std::vector<int> fds;
  for (int i = 0; i < kTricklers; ++i) {
    const int fd = Connect(endpoint_->port());
    ASSERT_GE(fd, 0) << i;
    fds.push_back(fd);
  }
  const std::string request = "GET /metrics HTTP/1.1\r\nHost: x\r\nX-Slow: ";
  const auto start = std::chrono::steady_clock::now();
  int closed = 0;
  for (size_t byte = 0; std::chrono::steady_clock::now() - start < std::chrono::seconds(7);
       ++byte) {
    closed = 0;
    for (int fd : fds)
      if (::send(fd, &request[byte % request.size()], 1, MSG_NOSIGNAL) != 1) ++closed;
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
  EXPECT_EQ(closed, kTricklers) << "trickling connections kept past the request deadline";
  const std::string r = Http(endpoint_->port(), "GET /metrics");
  EXPECT_EQ(StatusOf(r), 200) << r;
  for (int fd : fds) ::close(fd);
}

TEST(ListenAddressTest, SaysWhatIsWrong) {
  std::string host;
  int port = 0;
  EXPECT_NE(CheckListenAddress("9464", &host, &port).find("is not HOST:PORT"), std::string::npos);
  EXPECT_NE(CheckListenAddress("127.0.0.1:", &host, &port).find("is not HOST:PORT"),
            std::string::npos);
  EXPECT_NE(CheckListenAddress("127.0.0.1:70000", &host, &port).find("port '70000'"),
            std::string::npos);
  EXPECT_NE(CheckListenAddress("localhost:9464", &host, &port).find("'localhost' is not an IPv4"),
            std::string::npos);
  EXPECT_NE(CheckListenAddress("[zz]:1", &host, &port).find("not an IPv6"), std::string::npos);
  std::unique_ptr<MetricsEndpoint> e;
  prometheus::Registry registry;
  core::Status st = MetricsEndpoint::Start("nonsense", &registry, &e);
  EXPECT_EQ(st.code(), core::Code::kInvalidArgument);
  EXPECT_NE(st.message().find("--metrics-listen 'nonsense'"), std::string::npos) << st.message();
}

}  // namespace
}  // namespace ablation::metrics
