// The channel to the daemon: TLS where asked, the bearer token on every call.
#pragma once

#include <memory>
#include <string>

#include <grpcpp/channel.h>

#include "client/cli/options.h"

namespace ablation::client {

// The channel to the daemon: TLS for an https:// or grpcs:// --server (or --tls), the bearer
// token (--token-file, ABLATION_TOKEN) sent with every call. On error `error` says which file
// could not be read and the channel is null.
std::shared_ptr<grpc::Channel> MakeChannel(const GlobalOptions& global, std::string* error);

}  // namespace ablation::client
