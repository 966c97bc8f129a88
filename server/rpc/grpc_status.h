// The one place where the core's statuses become gRPC statuses.
#pragma once

#include <grpcpp/grpcpp.h>

#include "server/core/base/status.h"

namespace ablation::rpc {

/// The status as gRPC carries it. Its message travels percent-encoded in a trailer, and gRPC
/// clients by default read at most 8 KiB of metadata: a longer message (a compile error's log)
/// is not shown at all, only "received trailing metadata size exceeds limit". So a message whose
/// encoding exceeds kMaxEncodedMessage is cut at a line or character boundary, saying so.
grpc::Status ToGrpc(const core::Status& status);

inline constexpr size_t kMaxEncodedMessage = 6 * 1024;

/// `message` cut so that its percent-encoding fits in `max_encoded` bytes, with a last line
/// saying how much was withheld; unchanged where it fits.
std::string BoundedMessage(const std::string& message, size_t max_encoded = kMaxEncodedMessage);

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
