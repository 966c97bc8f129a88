#include "server/metrics/endpoint.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <charconv>
#include <condition_variable>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <thread>
#include <unordered_map>

#include <microhttpd.h>
#include <spdlog/spdlog.h>

#include "server/metrics/exposition.h"

namespace ablation::metrics {
namespace {

// What the endpoint's threads are told (MHD_start_daemon), and why each value.
// Two threads, each an epoll loop over its share of the connections: a connection that sends
// nothing costs a socket and its buffer, never a thread (civetweb's 16 threads were each held by
// one; two such held a scrape 10 s before), and while one thread writes a scrape's text the other
// still accepts and answers.
constexpr unsigned kThreads = 2;
// A scrape's request arrives within milliseconds of its connection: 3 s without a byte either way
// is a dead or hostile client, closed well inside Prometheus' default 10 s scrape timeout. A kept
// alive connection idle between scrapes is closed too; Prometheus reconnects at the next one.
constexpr unsigned kTimeoutSeconds = 3;
// At most this many connections at once (one scraper and the kubelet's probes need a few): a flood
// costs at most 128 sockets of the daemon's descriptors and 128 x 32 KiB of buffers...
constexpr unsigned kConnectionLimit = 128;
// ...and one address may hold at most half, so a flood from one host leaves room for Prometheus
// on another (over loopback every client is 127.0.0.1 or ::1, one address: still 64).
constexpr unsigned kPerAddressLimit = 64;

// A client that sends its request a byte at a time keeps its connection past any idle timeout
// (each byte starts it again): 128 such connections held every place the endpoint has, and a
// scrape was refused for as long as they trickled. So a connection must finish a request within
// kRequestSeconds of its start or of its last answer (a scrape's request takes milliseconds).
constexpr int kRequestSeconds = 5;

}  // namespace

// The connections open and when each last made progress; a thread of its own shuts down the
// socket of one that is past kRequestSeconds, which libmicrohttpd then sees end and closes. A
// connection is forgotten when libmicrohttpd says it closed, before it closes the socket, so a
// descriptor number is never shut down after it was given to another connection.
class MetricsEndpoint::SlowClients {
 public:
  SlowClients() : reaper_([this] { Reap(); }) {}
  ~SlowClients() {
    {
      std::lock_guard lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    reaper_.join();
  }
  static void Notify(void* self, MHD_Connection* connection, void** /*socket_context*/,
                     MHD_ConnectionNotificationCode code) {
    auto* slow = static_cast<SlowClients*>(self);
    std::lock_guard lock(slow->mu_);
    if (code == MHD_CONNECTION_NOTIFY_CLOSED) {
      slow->open_.erase(connection);
      return;
    }
    const MHD_ConnectionInfo* info =
        MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
    if (info) slow->open_[connection] = {info->connect_fd, std::chrono::steady_clock::now()};
  }
  /// A request of `connection` arrived whole: its time starts again.
  void Progress(MHD_Connection* connection) {
    std::lock_guard lock(mu_);
    if (auto it = open_.find(connection); it != open_.end())
      it->second.since = std::chrono::steady_clock::now();
  }

 private:
  struct Open {
    int fd = -1;
    std::chrono::steady_clock::time_point since;
  };
  void Reap() {
    std::unique_lock lock(mu_);
    while (!cv_.wait_for(lock, std::chrono::milliseconds(250), [this] { return stop_; })) {
      const auto late = std::chrono::steady_clock::now() - std::chrono::seconds(kRequestSeconds);
      for (auto& [connection, open] : open_)
        if (open.since < late && open.fd >= 0) {
          ::shutdown(open.fd, SHUT_RDWR);
          open.fd = -1;  // once
        }
    }
  }
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::unordered_map<MHD_Connection*, Open> open_;
  std::thread reaper_;
};

MetricsEndpoint::MetricsEndpoint(const prometheus::Collectable* registry, EndpointOptions options)
    : registry_(registry), options_(std::move(options)), slow_(std::make_unique<SlowClients>()) {}

namespace {

MHD_Result Handle(void* self, MHD_Connection* connection, const char* url, const char* method,
                  const char* /*version*/, const char* /*upload_data*/, size_t* upload_data_size,
                  void** request_state) {
  // A body (POST) is answered before it is read; any bytes of it that still come are dropped.
  static int answered;
  if (*request_state == &answered) {
    *upload_data_size = 0;
    return MHD_YES;
  }
  *request_state = &answered;
  static_cast<const MetricsEndpoint*>(self)->RequestArrived(connection);
  const char* header =
      MHD_lookup_connection_value(connection, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
  const MetricsEndpoint::Answer answer =
      static_cast<const MetricsEndpoint*>(self)->Respond(method, url, header ? header : "");
  // libmicrohttpd sends the Content-Length of this body for HEAD too, and not the body.
  MHD_Response* response = MHD_create_response_from_buffer(
      answer.body.size(), const_cast<char*>(answer.body.data()), MHD_RESPMEM_MUST_COPY);
  if (!response) return MHD_NO;  // out of memory: the connection is closed
  MHD_add_response_header(response, MHD_HTTP_HEADER_CONTENT_TYPE, answer.content_type);
  if (answer.header) MHD_add_response_header(response, answer.header, answer.header_value.c_str());
  const MHD_Result queued = MHD_queue_response(connection, answer.status, response);
  MHD_destroy_response(response);
  return queued;
}

}  // namespace

void MetricsEndpoint::Log(void* self, const char* format, va_list args) {
  char text[512];
  std::vsnprintf(text, sizeof text, format, args);
  std::string message = text;
  while (!message.empty() && (message.back() == '\n' || message.back() == '.')) message.pop_back();
  auto* endpoint = static_cast<MetricsEndpoint*>(self);
  std::lock_guard lock(endpoint->log_mu_);
  if (!endpoint->serving_.load()) {
    endpoint->start_messages_ += (endpoint->start_messages_.empty() ? "" : "; ") + message;
    return;
  }
  const auto now = std::chrono::steady_clock::now();
  if (now - endpoint->log_minute_ >= std::chrono::minutes(1)) {
    endpoint->log_minute_ = now;
    endpoint->logged_this_minute_ = 0;
  }
  if (endpoint->logged_this_minute_ >= kLogsPerMinute) {
    ++endpoint->not_logged_;
    return;
  }
  ++endpoint->logged_this_minute_;
  if (endpoint->not_logged_ > 0)
    spdlog::warn("metrics endpoint: {} ({} messages before it not logged: at most {} a minute)",
                 message, endpoint->not_logged_, kLogsPerMinute);
  else
    spdlog::warn("metrics endpoint: {}", message);
  endpoint->not_logged_ = 0;
}

MetricsEndpoint::Answer MetricsEndpoint::Respond(std::string_view method, std::string_view path,
                                                 std::string_view authorization) const {
  Answer answer;
  // The exact paths only: /metrics/x, /metricsx and / are no endpoint.
  if (path != "/metrics" && path != "/healthz") {
    answer.status = 404;
    answer.body = "not found: the metrics are at /metrics\n";
    return answer;
  }
  if (method != "GET" && method != "HEAD") {
    answer.status = 405;
    answer.body = "only GET and HEAD are served here\n";
    answer.header = "Allow";
    answer.header_value = "GET, HEAD";
    return answer;
  }
  // For the kubelet's probes, which cannot carry a token: says only that the daemon serves.
  if (path == "/healthz") {
    answer.body = "ok\n";
    return answer;
  }
  if (options_.authorize) {
    if (std::string why = options_.authorize(authorization); !why.empty()) {
      answer.status = 401;
      answer.body = std::move(why) + "\n";
      answer.header = "WWW-Authenticate";
      answer.header_value = "Bearer realm=\"ablationd\"";
      return answer;
    }
  }
  answer.content_type = kTextContentType;
  answer.body = WriteText(*registry_);
  return answer;
}

std::string CheckListenAddress(const std::string& listen, std::string* host, int* port) {
  const std::string example =
      " (expected HOST:PORT with an IP address, e.g. 127.0.0.1:9464 or [::1]:9464)";
  const size_t colon = listen.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == listen.size())
    return "'" + listen + "' is not HOST:PORT" + example;
  std::string h = listen.substr(0, colon);
  const std::string p = listen.substr(colon + 1);
  int value = -1;
  auto [end, ec] = std::from_chars(p.data(), p.data() + p.size(), value);
  if (ec != std::errc() || end != p.data() + p.size() || value < 0 || value > 65535)
    return "'" + listen + "': port '" + p + "' is not a number from 0 to 65535" + example;
  unsigned char buf[16];
  if (h.size() > 2 && h.front() == '[' && h.back() == ']') {
    if (inet_pton(AF_INET6, h.substr(1, h.size() - 2).c_str(), buf) != 1)
      return "'" + listen + "': '" + h + "' is not an IPv6 address" + example;
  } else if (inet_pton(AF_INET, h.c_str(), buf) != 1) {
    // Literals only: a name would need resolving, and which address the endpoint then listens on
    // should not depend on DNS.
    return "'" + listen + "': '" + h + "' is not an IPv4 address" + example;
  }
  *host = h;
  *port = value;
  return "";
}

bool IsLoopbackHost(const std::string& host) {
  in_addr v4{};
  if (inet_pton(AF_INET, host.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
  in6_addr v6{};
  if (host.size() < 3 || host.front() != '[' || host.back() != ']' ||
      inet_pton(AF_INET6, host.substr(1, host.size() - 2).c_str(), &v6) != 1)
    return false;
  return IN6_IS_ADDR_LOOPBACK(&v6) || (IN6_IS_ADDR_V4MAPPED(&v6) && v6.s6_addr[12] == 127);
}

core::Status MetricsEndpoint::Start(const std::string& listen,
                                    const prometheus::Collectable* registry,
                                    std::unique_ptr<MetricsEndpoint>* out,
                                    EndpointOptions endpoint_options) {
  std::string host;
  int port = 0;
  if (std::string why = CheckListenAddress(listen, &host, &port); !why.empty())
    return core::InvalidArgument("--metrics-listen " + why);
  if (!IsLoopbackHost(host) && !endpoint_options.allow_remote)
    return core::InvalidArgument(
        "--metrics-listen " + listen +
        " can be reached from other machines, over plain HTTP: listen on 127.0.0.1 or [::1], or "
        "pass --metrics-allow-remote to accept that (with [auth] tokens, a scrape then needs a "
        "read token: Prometheus' `authorization` in its scrape config)");
  // Exactly the address given: an IPv6 one is bound IPv6-only (no MHD_USE_DUAL_STACK), so [::1]
  // or [::] never also takes IPv4 connections.
  sockaddr_storage address{};
  // MHD_USE_ITC: a stop wakes the threads at once (an eventfd) instead of at their next event.
  unsigned flags = MHD_USE_EPOLL_INTERNAL_THREAD | MHD_USE_ITC | MHD_USE_ERROR_LOG;
  if (host.front() == '[') {
    auto* v6 = reinterpret_cast<sockaddr_in6*>(&address);
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(uint16_t(port));
    inet_pton(AF_INET6, host.substr(1, host.size() - 2).c_str(), &v6->sin6_addr);
    flags |= MHD_USE_IPv6;
  } else {
    auto* v4 = reinterpret_cast<sockaddr_in*>(&address);
    v4->sin_family = AF_INET;
    v4->sin_port = htons(uint16_t(port));
    inet_pton(AF_INET, host.c_str(), &v4->sin_addr);
  }
  std::unique_ptr<MetricsEndpoint> endpoint(
      new MetricsEndpoint(registry, std::move(endpoint_options)));
  MetricsEndpoint* self = endpoint.get();
  self->daemon_ = MHD_start_daemon(
      flags, uint16_t(port), nullptr, nullptr, &Handle, self, MHD_OPTION_SOCK_ADDR,
      reinterpret_cast<const sockaddr*>(&address), MHD_OPTION_THREAD_POOL_SIZE, kThreads,
      MHD_OPTION_CONNECTION_TIMEOUT, kTimeoutSeconds, MHD_OPTION_CONNECTION_LIMIT, kConnectionLimit,
      MHD_OPTION_PER_IP_CONNECTION_LIMIT, kPerAddressLimit, MHD_OPTION_NOTIFY_CONNECTION,
      &SlowClients::Notify, self->slow_.get(), MHD_OPTION_EXTERNAL_LOGGER, &MetricsEndpoint::Log,
      self, MHD_OPTION_END);
  if (!self->daemon_) {
    std::lock_guard lock(self->log_mu_);
    return core::FailedPrecondition(
        "cannot serve metrics on " + listen + ": " +
        (self->start_messages_.empty() ? "libmicrohttpd could not start" : self->start_messages_) +
        " (address in use? --metrics-listen '' turns it off)");
  }
  self->serving_.store(true);
  const MHD_DaemonInfo* info = MHD_get_daemon_info(self->daemon_, MHD_DAEMON_INFO_BIND_PORT);
  self->port_ = info && info->port ? info->port : port;
  *out = std::move(endpoint);
  return core::Status::Ok();
}

MetricsEndpoint::~MetricsEndpoint() {
  if (daemon_) MHD_stop_daemon(daemon_);
}

void MetricsEndpoint::RequestArrived(MHD_Connection* connection) const {
  slow_->Progress(connection);
}

}  // namespace ablation::metrics
