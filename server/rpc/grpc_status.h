// The one place where the core's statuses become gRPC statuses.
#pragma once

#include <grpcpp/grpcpp.h>

#include "server/core/base/status.h"

namespace ablation::rpc {

grpc::Status ToGrpc(const core::Status& status);

/// Runs `body` (which returns a core::Status) so that no exception leaves a gRPC reaction: a
/// store failure while queueing or cancelling becomes a status that hides SQL and paths.
template <typename Body>
core::Status Guarded(Body&& body) {
  try {
    return body();
  } catch (const std::exception& e) {
    return core::StatusFromException(e);
  }
}

}  // namespace ablation::rpc
