#include "server/rpc/unknown_calls.h"

#include <google/protobuf/descriptor.h>
#include <spdlog/spdlog.h>

#include "ablation/v1/ablation.grpc.pb.h"
#include "server/rpc/auth.h"

namespace ablation::rpc {
namespace {

// The service of ablation.v1 a path names ("/ablation.v1.Runs/X" -> Runs), or null.
const google::protobuf::ServiceDescriptor* ServiceOfPath(std::string_view path) {
  constexpr std::string_view kPackage = "/ablation.v1.";
  if (path.substr(0, kPackage.size()) != kPackage) return nullptr;
  const size_t slash = path.find('/', 1);
  if (slash == std::string_view::npos) return nullptr;
  return google::protobuf::DescriptorPool::generated_pool()->FindServiceByName(
      std::string(path.substr(1, slash - 1)));
}

const google::protobuf::MethodDescriptor* AblationMethod(std::string_view path) {
  const google::protobuf::ServiceDescriptor* service = ServiceOfPath(path);
  if (!service) return nullptr;
  return service->FindMethodByName(std::string(path.substr(path.find('/', 1) + 1)));
}

// Printable ASCII of at most 96 characters: the path is the caller's text.
std::string Quoted(std::string_view text) {
  std::string out;
  for (char c : text.substr(0, 96)) out += (c >= 0x20 && c < 0x7f) ? c : '?';
  if (text.size() > 96) out += "...";
  return "'" + out + "'";
}

class Refusal final : public grpc::ServerGenericBidiReactor {
 public:
  explicit Refusal(grpc::Status status) { Finish(status); }
  void OnDone() override { delete this; }
};

class Namer final : public grpc::experimental::Interceptor {
 public:
  Namer(grpc::experimental::ServerRpcInfo* info, const Authorizer* authorizer)
      : info_(info), authorizer_(authorizer) {}
  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    using grpc::experimental::InterceptionHookPoints;
    const std::string_view path = info_->method() ? info_->method() : "";
    // A call of the service that does not authenticate (let through by the processor for its
    // handler to refuse, auth.h Refusal) is answered with that refusal, whatever else would be
    // said: its handler refuses it first, and where the body did not parse no handler ran.
    // Checked as the call starts (a token revoked by SIGHUP during a long run does not turn the
    // run's end into a refusal).
    if (methods->QueryInterceptionHookPoint(InterceptionHookPoints::POST_RECV_INITIAL_METADATA) &&
        authorizer_ && AblationMethod(path)) {
      if (const auto* metadata = methods->GetRecvInitialMetadata())
        refused_ =
            authorizer_->Check(path, *metadata, info_->server_context()->auth_context().get());
    }
    if (methods->QueryInterceptionHookPoint(InterceptionHookPoints::PRE_SEND_STATUS)) {
      const grpc::Status st = methods->GetSendStatus();
      if (refused_.error_code() == grpc::StatusCode::UNAUTHENTICATED &&
          st.error_code() != grpc::StatusCode::UNAUTHENTICATED &&
          st.error_code() != grpc::StatusCode::RESOURCE_EXHAUSTED) {
        if (st.error_code() != grpc::StatusCode::UNIMPLEMENTED || !st.error_message().empty())
          spdlog::error("{}: an unauthenticated call was answered {} by its handler; refused", path,
                        int(st.error_code()));
        methods->ModifySendStatus(refused_);
      } else if (st.error_code() == grpc::StatusCode::UNIMPLEMENTED && st.error_message().empty()) {
        if (std::string why = UnparsableRequestMessage(info_->method() ? info_->method() : "");
            !why.empty())
          methods->ModifySendStatus({grpc::StatusCode::INVALID_ARGUMENT, why});
      }
    }
    methods->Proceed();
  }

 private:
  grpc::experimental::ServerRpcInfo* info_;
  const Authorizer* authorizer_;
  grpc::Status refused_;  ///< the call's authentication as it started
};

class NamerFactory final : public grpc::experimental::ServerInterceptorFactoryInterface {
 public:
  explicit NamerFactory(const Authorizer* authorizer) : authorizer_(authorizer) {}
  grpc::experimental::Interceptor* CreateServerInterceptor(
      grpc::experimental::ServerRpcInfo* info) override {
    return new Namer(info, authorizer_);
  }

 private:
  const Authorizer* authorizer_;
};

}  // namespace

std::string UnknownMethodMessage(std::string_view method,
                                 const std::vector<std::string>& services) {
  if (const google::protobuf::ServiceDescriptor* service = ServiceOfPath(method)) {
    return service->full_name() + " has no method " +
           Quoted(method.substr(service->full_name().size() + 2)) +
           " in this daemon (a client built from a newer .proto? `ablationd --version` says which "
           "this is; grpc.reflection lists its methods)";
  }
  std::string served;
  for (const auto& s : services) served += (served.empty() ? "" : ", ") + s;
  return "unknown method " + Quoted(method) + ": this daemon serves " + served +
         " (a method is called as /SERVICE/METHOD)";
}

std::string UnparsableRequestMessage(std::string_view method) {
  const google::protobuf::MethodDescriptor* m = AblationMethod(method);
  if (!m) return "";
  return "the request of " + std::string(method) + " does not parse as " +
         m->input_type()->full_name() +
         " (corrupt bytes, or a message of another type or .proto): nothing was done";
}

grpc::ServerGenericBidiReactor* UnknownMethods::CreateReactor(
    grpc::GenericCallbackServerContext* ctx) {
  return new Refusal(
      {grpc::StatusCode::UNIMPLEMENTED, UnknownMethodMessage(ctx->method(), services_)});
}

std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface> UnparsableRequestNamer(
    const Authorizer* authorizer) {
  return std::make_unique<NamerFactory>(authorizer);
}

}  // namespace ablation::rpc
