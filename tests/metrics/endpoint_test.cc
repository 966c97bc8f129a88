// The /metrics endpoint over a real loopback socket: what it answers, what it refuses, and the
// addresses it takes.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include <prometheus/gauge.h>
#include <prometheus/registry.h>

#include "server/metrics/endpoint.h"
#include "server/metrics/exposition.h"

namespace ablation::metrics {
namespace {

// One HTTP/1.0 exchange: the whole response, headers and body.
std::string Http(int port, const std::string& request_line, const std::string& headers = "") {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(uint16_t(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return "connect failed";
  }
  const std::string request = request_line + " HTTP/1.0\r\nHost: 127.0.0.1\r\n" + headers + "\r\n";
  (void)!::write(fd, request.data(), request.size());
  std::string out;
  char buf[4096];
  for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;) out.append(buf, size_t(n));
  ::close(fd);
  return out;
}

// One endpoint for the suite: civetweb's stop waits for its threads (about 2 s).
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
  EXPECT_EQ(r.rfind("HTTP/1.0 200", 0), 0u) << r;
  EXPECT_NE(r.find(std::string("Content-Type: ") + kTextContentType), std::string::npos) << r;
  EXPECT_NE(r.find("\r\n\r\n# HELP t_value A value\n# TYPE t_value gauge\n"
                   "t_value{name=\"a \\\"quoted\\\" one\"} 2\n"),
            std::string::npos)
      << r;
}

TEST_F(EndpointTest, HeadHasNoBody) {
  const std::string r = Http(endpoint_->port(), "HEAD /metrics");
  EXPECT_EQ(r.rfind("HTTP/1.0 200", 0), 0u) << r;
  EXPECT_EQ(r.find("# HELP"), std::string::npos) << r;
}

TEST_F(EndpointTest, OtherPathsAndMethodsAreRefused) {
  EXPECT_EQ(Http(endpoint_->port(), "GET /").rfind("HTTP/1.0 404", 0), 0u);
  EXPECT_EQ(Http(endpoint_->port(), "GET /metrics/x").rfind("HTTP/1.0 404", 0), 0u);
  EXPECT_EQ(Http(endpoint_->port(), "GET /metricsx").rfind("HTTP/1.0 404", 0), 0u);
  EXPECT_EQ(Http(endpoint_->port(), "POST /metrics").rfind("HTTP/1.0 405", 0), 0u);
}

TEST_F(EndpointTest, APortInUseIsRefusedSayingSo) {
  std::unique_ptr<MetricsEndpoint> second;
  core::Status st =
      MetricsEndpoint::Start("127.0.0.1:" + std::to_string(endpoint_->port()), registry_, &second);
  EXPECT_EQ(st.code(), core::Code::kFailedPrecondition);
  EXPECT_NE(st.message().find("cannot serve metrics on 127.0.0.1:"), std::string::npos)
      << st.message();
}

TEST(ListenAddressTest, TakesIpLiteralsWithAPort) {
  std::string host;
  int port = -1;
  EXPECT_EQ(CheckListenAddress("127.0.0.1:9464", &host, &port), "");
  EXPECT_EQ(host, "127.0.0.1");
  EXPECT_EQ(port, 9464);
  EXPECT_EQ(CheckListenAddress("0.0.0.0:9464", &host, &port), "");
}

// [::1]:9464, the form the help suggested, either serves or is refused at once saying why (Debian
// 12's civetweb has no IPv6); it never fails later with "Failed to setup server ports".
TEST(ListenAddressTest, TheIpv6LoopbackServesOrIsRefusedNamingTheReason) {
  std::string host;
  int port = -1;
  const std::string why = CheckListenAddress("[::1]:0", &host, &port);
  if (ServesIpv6()) {
    EXPECT_EQ(why, "");
    EXPECT_EQ(host, "[::1]");
    std::unique_ptr<MetricsEndpoint> e;
    prometheus::Registry registry;
    EXPECT_TRUE(MetricsEndpoint::Start("[::1]:0", &registry, &e).ok());
  } else {
    EXPECT_NE(why.find("no IPv6 support; use 127.0.0.1:0"), std::string::npos) << why;
  }
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

// With credentials asked for, /metrics answers 401 without the right bearer token and 200 with
// it; /healthz (the kubelet's probes) answers without one.
TEST(EndpointAuthTest, MetricsNeedTheTokenHealthDoesNot) {
  prometheus::Registry registry;
  EndpointOptions options;
  options.authorize = [](std::string_view header) -> std::string {
    return header == "Bearer good" ? "" : "a read token is needed";
  };
  std::unique_ptr<MetricsEndpoint> e;
  ASSERT_TRUE(MetricsEndpoint::Start("127.0.0.1:0", &registry, &e, options).ok());
  const std::string refused = Http(e->port(), "GET /metrics");
  EXPECT_EQ(refused.rfind("HTTP/1.1 401", 0), 0u) << refused;
  EXPECT_NE(refused.find("WWW-Authenticate: Bearer"), std::string::npos);
  EXPECT_NE(refused.find("a read token is needed"), std::string::npos);
  EXPECT_EQ(
      Http(e->port(), "GET /metrics", "Authorization: Bearer bad\r\n").rfind("HTTP/1.1 401", 0),
      0u);
  EXPECT_EQ(
      Http(e->port(), "GET /metrics", "Authorization: Bearer good\r\n").rfind("HTTP/1.0 200", 0),
      0u);
  const std::string health = Http(e->port(), "GET /healthz");
  EXPECT_EQ(health.rfind("HTTP/1.0 200", 0), 0u) << health;
}

// Connections that open and send nothing do not hold the endpoint: a scrape beside them answers
// at once (two such held it 10 s before).
TEST_F(EndpointTest, HalfOpenConnectionsDoNotBlockAScrape) {
  std::vector<int> idle;
  for (int i = 0; i < 4; ++i) {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(uint16_t(endpoint_->port()));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    (void)!::write(fd, "GET /metr", 9);  // a request line never finished
    idle.push_back(fd);
  }
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(Http(endpoint_->port(), "GET /metrics").rfind("HTTP/1.0 200", 0), 0u);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
  for (int fd : idle) ::close(fd);
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
