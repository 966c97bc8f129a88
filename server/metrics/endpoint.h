// The HTTP endpoint Prometheus scrapes: GET /metrics answers the registry's snapshot in the text
// format; nothing else is served (no document root). civetweb (Debian's libcivetweb) does the
// HTTP on two threads of its own, so a scrape never takes a gRPC or GPU thread.
#pragma once

#include <memory>
#include <string>

#include "server/core/base/status.h"
#include "server/metrics/registry.h"

struct mg_context;
struct mg_connection;

namespace ablation::metrics {

class MetricsEndpoint {
 public:
  /// Checks `listen` ("127.0.0.1:9464", "[::1]:9464", "0.0.0.0:9464"; port 0 picks a free one)
  /// and starts serving `registry`, which must outlive the endpoint. InvalidArgument for a
  /// malformed address, FailedPrecondition (with civetweb's reason) when it cannot be bound.
  static core::Status Start(const std::string& listen, const core::metrics::Registry* registry,
                            std::unique_ptr<MetricsEndpoint>* out);
  ~MetricsEndpoint();
  MetricsEndpoint(const MetricsEndpoint&) = delete;
  MetricsEndpoint& operator=(const MetricsEndpoint&) = delete;

  /// The port bound (the one asked for, or the one picked for port 0).
  int port() const { return port_; }

 private:
  explicit MetricsEndpoint(const core::metrics::Registry* registry) : registry_(registry) {}
  static int Serve(mg_connection* conn, void* self);

  const core::metrics::Registry* registry_;
  mg_context* context_ = nullptr;
  int port_ = 0;
};

/// Splits "HOST:PORT" with an IPv4 literal or a bracketed IPv6 literal as host. Empty on
/// success, else what is wrong with it.
std::string CheckListenAddress(const std::string& listen, std::string* host, int* port);

}  // namespace ablation::metrics
