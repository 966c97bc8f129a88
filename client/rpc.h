// What every subcommand does around its call: deadlines and error reports.
#pragma once

#include <memory>
#include <string>

#include <grpcpp/channel.h>
#include <grpcpp/client_context.h>
#include <grpcpp/support/status.h>

#include "client/options.h"

namespace ablation::client {

// Queries answer from SQLite and never wait for the GPU, so a hung daemon shows up quickly.
inline constexpr double kDefaultQueryTimeoutS = 30;

// The channel to the daemon: TLS for an https:// or grpcs:// --server (or --tls), the bearer
// token (--token-file, ABLATION_TOKEN) sent with every call. On error `error` says which file
// could not be read and the channel is null.
std::shared_ptr<grpc::Channel> MakeChannel(const GlobalOptions& global, std::string* error);

// Sets the deadline of a unary call: --timeout when given, else `default_s` (0: no deadline).
void SetDeadline(grpc::ClientContext& context, const GlobalOptions& global, double default_s);

// Prints "error: CODE: message" on stderr and returns the exit code for it.
int ReportRpcError(const grpc::Status& status, const CommandContext& context);

}  // namespace ablation::client
