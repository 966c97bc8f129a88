// What every subcommand does around its call: deadlines and error reports.
#pragma once

#include <grpcpp/client_context.h>
#include <grpcpp/support/status.h>

#include "client/cli/options.h"

namespace ablation::client {

// Queries answer from SQLite and never wait for the GPU, so a hung daemon shows up quickly.
inline constexpr double kDefaultQueryTimeoutS = 30;

// Sets the deadline of a unary call: --timeout when given, else `default_s` (0: no deadline).
void SetDeadline(grpc::ClientContext& context, const GlobalOptions& global, double default_s);

// Prints "error: CODE: message" on stderr and returns the exit code for it.
int ReportRpcError(const grpc::Status& status, const CommandContext& context);

}  // namespace ablation::client
