// The HTTP endpoint Prometheus scrapes: GET (and HEAD) /metrics answers what the registry holds in
// the text format, GET /healthz answers "ok"; nothing else is served (no document root, no other
// path). GNU libmicrohttpd (Debian's libmicrohttpd-dev) does the HTTP on two threads of its own,
// each an epoll loop, so a scrape never takes a gRPC or GPU thread and a connection that sends
// nothing holds no thread. IPv4 and IPv6 literals are served ("127.0.0.1:9464", "[::1]:9464").
//
// Not prometheus-cpp's own pull server (prometheus::Exposer, on civetweb): it serves every path
// under /metrics, answers no HEAD, names no format version in its content type, says no more than
// "possible problem binding to port" when the address is taken, and adds series of its own
// (exposer_request_latencies in microseconds, not base units). Not civetweb either: Debian 12's
// is built without IPv6.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdarg>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "server/core/base/status.h"

namespace prometheus {
class Collectable;
}  // namespace prometheus

struct MHD_Daemon;
struct MHD_Connection;

namespace ablation::metrics {

struct EndpointOptions {
  /// Serving an address other machines reach (not 127.0.0.0/8, ::1): refused unless set, as the
  /// gRPC listener refuses one without TLS (--metrics-allow-remote).
  bool allow_remote = false;
  /// Decides on a request's Authorization header ("" when it has none): "" lets it read the
  /// metrics, else why not (answered 401 with WWW-Authenticate: Bearer). Unset: no credentials
  /// are asked (a daemon without tokens). /healthz never asks.
  std::function<std::string(std::string_view authorization)> authorize;
};

class MetricsEndpoint {
 public:
  /// Checks `listen` ("127.0.0.1:9464", "[::1]:9464", "0.0.0.0:9464"; port 0 picks a free one)
  /// and starts serving `registry` (a prometheus::Registry), which must outlive the endpoint.
  /// InvalidArgument for a malformed address or a remote one without options.allow_remote,
  /// FailedPrecondition (with libmicrohttpd's reason) when it cannot be bound.
  static core::Status Start(const std::string& listen, const prometheus::Collectable* registry,
                            std::unique_ptr<MetricsEndpoint>* out, EndpointOptions options = {});
  /// Stops serving: open connections are closed, the threads joined (a few milliseconds).
  ~MetricsEndpoint();
  MetricsEndpoint(const MetricsEndpoint&) = delete;
  MetricsEndpoint& operator=(const MetricsEndpoint&) = delete;

  /// The port bound (the one asked for, or the one picked for port 0).
  int port() const { return port_; }

  /// What one request is answered: its status, content type, body and extra header (name, value;
  /// empty name for none). For HEAD the body still gives the Content-Length, and is not sent.
  struct Answer {
    unsigned status = 200;
    const char* content_type = "text/plain; charset=utf-8";
    std::string body;
    const char* header = nullptr;
    std::string header_value;
  };
  /// The answer to `method` on `path` (the URL's path, without its query) with the request's
  /// Authorization header ("" when it has none). No socket: the handler the HTTP threads call.
  Answer Respond(std::string_view method, std::string_view path,
                 std::string_view authorization) const;
  /// A request arrived whole on `connection` (the HTTP threads say so): its time starts again.
  void RequestArrived(MHD_Connection* connection) const;

 private:
  MetricsEndpoint(const prometheus::Collectable* registry, EndpointOptions options);
  static void Log(void* self, const char* format, va_list args);
  class SlowClients;
  friend class SlowClients;

  const prometheus::Collectable* registry_;
  EndpointOptions options_;
  // Declared before daemon_: it outlives the HTTP threads that report to it.
  std::unique_ptr<SlowClients> slow_;
  MHD_Daemon* daemon_ = nullptr;
  int port_ = 0;
  // While Start runs, libmicrohttpd's messages (why it cannot bind) are kept for its status, not
  // logged; once it serves they go to the log, at most kLogsPerMinute a minute: a flood of
  // connections closed half-way (a message each) must not flood the daemon's log too.
  static constexpr int kLogsPerMinute = 10;
  std::atomic<bool> serving_{false};
  std::mutex log_mu_;
  std::string start_messages_;
  std::chrono::steady_clock::time_point log_minute_;
  int logged_this_minute_ = 0;
  int not_logged_ = 0;
};

/// True for 127.0.0.0/8, ::1 and the IPv4-mapped ::ffff:127.0.0.0/104 (a host as
/// CheckListenAddress splits it: "[::1]" bracketed).
bool IsLoopbackHost(const std::string& host);

/// Splits "HOST:PORT" with an IPv4 literal or a bracketed IPv6 literal as host. Empty on
/// success, else what is wrong with it.
std::string CheckListenAddress(const std::string& listen, std::string* host, int* port);

}  // namespace ablation::metrics
