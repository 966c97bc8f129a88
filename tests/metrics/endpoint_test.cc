// The /metrics endpoint over a real loopback socket: what it answers, what it refuses, and the
// addresses it takes.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <memory>
#include <string>

#include <prometheus/gauge.h>
#include <prometheus/registry.h>

#include "server/metrics/endpoint.h"
#include "server/metrics/exposition.h"

namespace ablation::metrics {
namespace {

// One HTTP/1.0 exchange: the whole response, headers and body.
std::string Http(int port, const std::string& request_line) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(uint16_t(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return "connect failed";
  }
  const std::string request = request_line + " HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n";
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
  EXPECT_EQ(CheckListenAddress("[::1]:0", &host, &port), "");
  EXPECT_EQ(host, "[::1]");
  EXPECT_EQ(CheckListenAddress("0.0.0.0:9464", &host, &port), "");
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
