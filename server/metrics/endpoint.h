// The HTTP endpoint Prometheus scrapes: GET (and HEAD) /metrics answers what the registry holds in
// the text format; nothing else is served (no document root, no other path). civetweb (Debian's
// libcivetweb) does the HTTP on two threads of its own, so a scrape never takes a gRPC or GPU
// thread.
//
// Not prometheus-cpp's own pull server (prometheus::Exposer, also on civetweb): it serves every
// path under /metrics, answers no HEAD, names no format version in its content type, says no more
// than "possible problem binding to port" when the address is taken, and adds series of its own
// (exposer_request_latencies in microseconds, not base units).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "server/core/base/status.h"

namespace prometheus {
class Collectable;
}  // namespace prometheus

struct mg_context;
struct mg_connection;

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
  /// FailedPrecondition (with civetweb's reason) when it cannot be bound.
  static core::Status Start(const std::string& listen, const prometheus::Collectable* registry,
                            std::unique_ptr<MetricsEndpoint>* out, EndpointOptions options = {});
  ~MetricsEndpoint();
  MetricsEndpoint(const MetricsEndpoint&) = delete;
  MetricsEndpoint& operator=(const MetricsEndpoint&) = delete;

  /// The port bound (the one asked for, or the one picked for port 0).
  int port() const { return port_; }

 private:
  MetricsEndpoint(const prometheus::Collectable* registry, EndpointOptions options)
      : registry_(registry), options_(std::move(options)) {}
  static int Serve(mg_connection* conn, void* self);
  static int ServeHealth(mg_connection* conn, void* self);

  const prometheus::Collectable* registry_;
  EndpointOptions options_;
  mg_context* context_ = nullptr;
  int port_ = 0;
};

/// Whether the linked civetweb can bind IPv6 addresses (Debian 12's cannot).
bool ServesIpv6();

/// True for 127.0.0.0/8 and ::1 (a host as CheckListenAddress splits it: "[::1]" bracketed).
bool IsLoopbackHost(const std::string& host);

/// Splits "HOST:PORT" with an IPv4 literal or a bracketed IPv6 literal as host. Empty on
/// success, else what is wrong with it.
std::string CheckListenAddress(const std::string& listen, std::string* host, int* port);

}  // namespace ablation::metrics
