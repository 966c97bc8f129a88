// Calls gRPC would refuse with an empty message, answered with a sentence instead:
// - a method this daemon does not serve (a typo, another service, a client built from a newer
//   .proto): a generic service registered for every unmatched method answers UNIMPLEMENTED naming
//   the method and the services this daemon does serve;
// - a call that failed authentication (auth.h) is answered with that refusal whatever its
//   handler said (it refuses it first; a body that does not parse runs no handler);
// - a known method whose body does not parse as its request message: gRPC 1.51's callback
//   handler answers such a call itself, before any handler runs (server_callback_handlers.h: a
//   failed Deserialize makes an UnimplementedUnaryReactor with an empty message). An interceptor
//   sees the status on its way out and replaces that one (UNIMPLEMENTED, no message, on a method
//   of ablation.v1.Ablation, whose handlers never answer so) with INVALID_ARGUMENT naming the
//   request message that was expected.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <grpcpp/generic/async_generic_service.h>
#include <grpcpp/support/server_interceptor.h>

#include "server/rpc/auth.h"

namespace ablation::rpc {

/// The sentence for a call of `method` ("/pkg.Service/Method") that no service here serves;
/// `services` are the full names of those that are served.
std::string UnknownMethodMessage(std::string_view method, const std::vector<std::string>& services);

/// The sentence for a call of a known ablation.v1.Ablation method whose body did not parse, or
/// "" when `method` is not one of its methods.
std::string UnparsableRequestMessage(std::string_view method);

class UnknownMethods final : public grpc::CallbackGenericService {
 public:
  explicit UnknownMethods(std::vector<std::string> services) : services_(std::move(services)) {}
  grpc::ServerGenericBidiReactor* CreateReactor(grpc::GenericCallbackServerContext* ctx) override;

 private:
  std::vector<std::string> services_;
};

/// The interceptor (for ServerBuilder::experimental().SetInterceptorCreators) that names an
/// unparsable request, and answers a call that does not authenticate (checked with `authorizer`;
/// null: none checked) with its refusal whatever else was to be said.
std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface> UnparsableRequestNamer(
    const Authorizer* authorizer);

}  // namespace ablation::rpc
