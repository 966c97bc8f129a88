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

#include <memory>
#include <string>

#include "server/core/base/status.h"

namespace prometheus {
class Collectable;
}  // namespace prometheus

struct mg_context;
struct mg_connection;

namespace ablation::metrics {

class MetricsEndpoint {
 public:
  /// Checks `listen` ("127.0.0.1:9464", "[::1]:9464", "0.0.0.0:9464"; port 0 picks a free one)
  /// and starts serving `registry` (a prometheus::Registry), which must outlive the endpoint.
  /// InvalidArgument for a malformed address, FailedPrecondition (with civetweb's reason) when it
  /// cannot be bound.
  static core::Status Start(const std::string& listen, const prometheus::Collectable* registry,
                            std::unique_ptr<MetricsEndpoint>* out);
  ~MetricsEndpoint();
  MetricsEndpoint(const MetricsEndpoint&) = delete;
  MetricsEndpoint& operator=(const MetricsEndpoint&) = delete;

  /// The port bound (the one asked for, or the one picked for port 0).
  int port() const { return port_; }

 private:
  explicit MetricsEndpoint(const prometheus::Collectable* registry) : registry_(registry) {}
  static int Serve(mg_connection* conn, void* self);

  const prometheus::Collectable* registry_;
  mg_context* context_ = nullptr;
  int port_ = 0;
};

/// Splits "HOST:PORT" with an IPv4 literal or a bracketed IPv6 literal as host. Empty on
/// success, else what is wrong with it.
std::string CheckListenAddress(const std::string& listen, std::string* host, int* port);

}  // namespace ablation::metrics
