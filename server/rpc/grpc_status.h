// The one place where the core's statuses become gRPC statuses.
#pragma once

#include <grpcpp/grpcpp.h>

#include "server/core/status.h"

namespace ablation::rpc {

grpc::Status ToGrpc(const core::Status& status);

}  // namespace ablation::rpc
