#include "server/metrics/endpoint.h"

#include <arpa/inet.h>

#include <charconv>
#include <cstring>
#include <vector>

#include <civetweb.h>
#include <spdlog/spdlog.h>

#include "server/metrics/exposition.h"

namespace ablation::metrics {
namespace {

int LogMessage(const mg_connection*, const char* message) {
  spdlog::warn("metrics endpoint: {}", message);
  return 1;  // logged here: civetweb need not print it to stderr too
}

}  // namespace

bool ServesIpv6() {
  mg_init_library(0);
  const bool yes = mg_check_feature(8) != 0;  // 8: USE_IPV6 (civetweb.h)
  mg_exit_library();
  return yes;
}

std::string CheckListenAddress(const std::string& listen, std::string* host, int* port) {
  const std::string example =
      ServesIpv6() ? " (expected HOST:PORT with an IP address, e.g. 127.0.0.1:9464 or [::1]:9464)"
                   : " (expected HOST:PORT with an IPv4 address, e.g. 127.0.0.1:9464)";
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
    // Debian 12's libcivetweb is built without USE_IPV6: it cannot bind any IPv6 address, and
    // said only "Failed to setup server ports" before. Said here, before anything starts.
    if (!ServesIpv6())
      return "'" + listen +
             "': this build's HTTP server (libcivetweb) has no IPv6 support; use 127.0.0.1:" + p +
             " (the loopback the same host's Prometheus reaches)";
  } else if (inet_pton(AF_INET, h.c_str(), buf) != 1) {
    // civetweb binds literals only; a name would need resolving, and which address it then
    // listens on should not depend on DNS.
    return "'" + listen + "': '" + h + "' is not an IPv4 address" + example;
  }
  *host = h;
  *port = value;
  return "";
}

bool IsLoopbackHost(const std::string& host) {
  return host == "[::1]" || host.rfind("127.", 0) == 0;
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
        " can be reached from other machines, over plain HTTP: listen on " +
        std::string(ServesIpv6() ? "127.0.0.1 or [::1]" : "127.0.0.1") +
        ", or pass --metrics-allow-remote to accept that (with [auth] tokens, a scrape then needs "
        "a read token: Prometheus' `authorization` in its scrape config)");
  mg_init_library(0);
  std::unique_ptr<MetricsEndpoint> endpoint(
      new MetricsEndpoint(registry, std::move(endpoint_options)));
  const char* options[] = {"listening_ports", listen.c_str(),
                           // A scrape is one short request, but a connection that sends nothing
                           // holds a thread until the timeout: enough threads that a few such
                           // (two held it 10 s before) never block a scrape, and a short timeout.
                           "num_threads", "16", "request_timeout_ms", "2000",
                           "enable_directory_listing", "no", nullptr};
  mg_callbacks callbacks;
  std::memset(&callbacks, 0, sizeof callbacks);
  callbacks.log_message = LogMessage;
  mg_init_data init{&callbacks, endpoint.get(), options};
  char error_text[256] = "";
  unsigned error_code = 0;
  mg_error_data error{&error_code, error_text, sizeof error_text};
  endpoint->context_ = mg_start2(&init, &error);
  if (!endpoint->context_) {
    mg_exit_library();
    return core::FailedPrecondition("cannot serve metrics on " + listen + ": " +
                                    (error_text[0] ? error_text : "civetweb could not start") +
                                    " (address in use? --metrics-listen '' turns it off)");
  }
  mg_set_request_handler(endpoint->context_, "/metrics", &MetricsEndpoint::Serve, endpoint.get());
  mg_set_request_handler(endpoint->context_, "/healthz", &MetricsEndpoint::ServeHealth,
                         endpoint.get());
  std::vector<mg_server_port> ports(4);
  int n = mg_get_server_ports(endpoint->context_, int(ports.size()), ports.data());
  endpoint->port_ = n > 0 ? ports[0].port : port;
  *out = std::move(endpoint);
  return core::Status::Ok();
}

MetricsEndpoint::~MetricsEndpoint() {
  if (context_) {
    mg_stop(context_);
    mg_exit_library();
  }
}

int MetricsEndpoint::Serve(mg_connection* conn, void* self) {
  const mg_request_info* request = mg_get_request_info(conn);
  // civetweb hands this handler /metrics/anything too: only the exact path is the endpoint.
  if (!request->local_uri || std::strcmp(request->local_uri, "/metrics") != 0) {
    mg_send_http_error(conn, 404, "%s", "not found: the metrics are at /metrics\n");
    return 404;
  }
  const bool head = std::strcmp(request->request_method, "HEAD") == 0;
  if (!head && std::strcmp(request->request_method, "GET") != 0) {
    mg_send_http_error(conn, 405, "%s", "only GET and HEAD are served here\n");
    return 405;
  }
  const auto* endpoint = static_cast<const MetricsEndpoint*>(self);
  if (endpoint->options_.authorize) {
    const char* header = mg_get_header(conn, "Authorization");
    if (const std::string why = endpoint->options_.authorize(header ? header : ""); !why.empty()) {
      const std::string body = why + "\n";
      mg_printf(conn,
                "HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: Bearer realm=\"ablationd\"\r\n"
                "Content-Type: text/plain; charset=utf-8\r\nContent-Length: %zu\r\n"
                "Connection: close\r\n\r\n",
                body.size());
      if (!head) mg_write(conn, body.data(), body.size());
      return 401;
    }
  }
  const std::string body = WriteText(*endpoint->registry_);
  mg_send_http_ok(conn, kTextContentType, static_cast<long long>(body.size()));
  if (!head) mg_write(conn, body.data(), body.size());
  return 200;
}

}  // namespace ablation::metrics

namespace ablation::metrics {

// For the kubelet's probes, which cannot carry a token: says only that the daemon serves.
int MetricsEndpoint::ServeHealth(mg_connection* conn, void*) {
  const mg_request_info* request = mg_get_request_info(conn);
  if (!request->local_uri || std::strcmp(request->local_uri, "/healthz") != 0) {
    mg_send_http_error(conn, 404, "%s", "not found\n");
    return 404;
  }
  static constexpr std::string_view kBody = "ok\n";
  mg_send_http_ok(conn, "text/plain; charset=utf-8", static_cast<long long>(kBody.size()));
  if (std::strcmp(request->request_method, "HEAD") != 0) mg_write(conn, kBody.data(), kBody.size());
  return 200;
}

}  // namespace ablation::metrics
