// How the daemon listens: the credentials of its port and who checks each call, decided from the
// address and the [auth]/[tls] config. A loopback address needs no setup; an address other
// machines can reach is served only over TLS, or with --insecure-remote (warned at every start).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "server/core/base/status.h"
#include "server/core/setup/config.h"
#include "server/rpc/auth.h"

namespace ablation::rpc {

struct Listener {
  std::shared_ptr<grpc::ServerCredentials> credentials;
  std::unique_ptr<Authorizer> authorizer;
  std::string description;            ///< "TLS with client certificates, 3 tokens", for the log
  std::vector<std::string> warnings;  ///< to log at start (insecure-remote)
};

/// True for 127.0.0.0/8, ::1, localhost and unix: addresses.
bool IsLoopbackAddress(const std::string& address);

/// Reads the token file and the TLS files and decides the listener. Refuses (FailedPrecondition,
/// naming the setting to change) a non-loopback address without TLS unless insecure_remote, and
/// tokens that would travel in clear text to another machine.
core::Status MakeListener(const std::string& address, const core::AuthConfig& auth, Listener* out);

}  // namespace ablation::rpc
